#include "config_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <toml.hpp>
#include <type_traits>

#include "zotrain/core/error.h"

namespace zotrain::tools {

namespace {

// toml11 parses nested arrays and inline tables by recursion without a limit: 10,000 levels
// overflowed the stack (issue 22, defect 1). No config needs more than two, so the text is
// scanned first, strings and comments skipped, and refused past kMaxNesting levels.
constexpr int kMaxNesting = 32;
constexpr std::uintmax_t kMaxConfigBytes = 1 << 20;

// The index of the quote that closes the string opening at `i`, or of the end of its line (or
// text) when it is not closed there: toml11 then reports it.
size_t string_end(const std::string& text, size_t i) {
  const char q = text[i];
  const bool multi = text.compare(i, 3, std::string(3, q)) == 0;
  for (size_t j = i + (multi ? 3 : 1); j < text.size(); ++j) {
    if (q == '"' && text[j] == '\\') {
      ++j;
    } else if (text[j] == '\n' && !multi) {
      return j - 1;
    } else if (text[j] == q && (!multi || text.compare(j, 3, std::string(3, q)) == 0)) {
      return multi ? j + 2 : j;
    }
  }
  return text.size();
}

// The length of the UTF-8 sequence at text[i], or 0 where it is not one (overlong forms,
// surrogates and code points past U+10FFFF included).
size_t utf8_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  const size_t n = b >= 0xC2 && b <= 0xDF   ? 2
                   : b >= 0xE0 && b <= 0xEF ? 3
                   : b >= 0xF0 && b <= 0xF4 ? 4
                                            : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  const unsigned char c = byte(i + 1);
  if ((b == 0xE0 && c < 0xA0) || (b == 0xED && c > 0x9F) || (b == 0xF0 && c < 0x90) ||
      (b == 0xF4 && c > 0x8F))
    return 0;
  return n;
}

// TOML is UTF-8 text; toml11 3.7 reads past its buffer on some invalid bytes (found by
// fuzz/fuzz_toml_config: a key quoted with '...' holding 0xB7), so they never reach it.
void check_utf8(const std::string& text, const std::string& path) {
  int line = 1;
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i);
    if (n == 0)
      throw InputError(path + ": line " + std::to_string(line) + ": not UTF-8 text (byte " +
                       std::to_string(static_cast<unsigned char>(text[i])) +
                       "); a TOML file is UTF-8");
    line += text[i] == '\n';
    i += n;
  }
}

void check_nesting(const std::string& text, const std::string& path) {
  int depth = 0, line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const size_t end = string_end(text, i);
      line += static_cast<int>(
          std::count(text.begin() + i, text.begin() + std::min(end, text.size()), '\n'));
      i = end;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting)
        throw InputError(path + ": line " + std::to_string(line) +
                         ": arrays or inline tables nested deeper than " +
                         std::to_string(kMaxNesting) + " levels");
    } else if (c == ']' || c == '}') {
      depth = std::max(depth - 1, 0);
    }
  }
}

}  // namespace

void apply_config_file(const std::string& path, TrainConfig& cfg) {
  if (!std::filesystem::is_regular_file(path)) throw InputError(path + ": config file not found");
  if (std::filesystem::file_size(path) > kMaxConfigBytes)
    throw InputError(path + ": a config file of " +
                     std::to_string(std::filesystem::file_size(path)) +
                     " bytes; expected at most " + std::to_string(kMaxConfigBytes));
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  check_utf8(text, path);
  check_nesting(text, path);
  toml::value data;
  try {
    std::istringstream stream(text);
    data = toml::parse(stream, path);
  } catch (const std::exception& e) {
    // toml11 draws the error's location over several lines; keep to one.
    std::string msg;
    for (char c : std::string(e.what())) {
      if (c == '\n') c = ' ';
      if (c != ' ' || (!msg.empty() && msg.back() != ' ')) msg += c;
    }
    throw InputError(path + ": not valid TOML: " + msg);
  }
  if (!data.is_table()) throw InputError(path + ": expected a table of config keys");
  size_t used = 0;
  visit_config(cfg, [&](const char* key, auto& field, const char*) {
    if (!data.contains(key)) return;
    ++used;
    using T = std::remove_reference_t<decltype(field)>;
    const toml::value& v = data.at(key);
    auto wrong = [&](const std::string& expected) {
      return InputError(path + ": config key '" + key + "' must be " + expected);
    };
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) throw wrong("a string");
      field = v.as_string().str;
    } else if constexpr (Named<T>) {
      if (!v.is_string()) throw wrong(("one of the strings " + names_of<T>()).c_str());
      field = parse_name<T>(path + ": config key '" + key + "'", v.as_string().str);
    } else if constexpr (std::is_same_v<T, bool>) {
      // 0 and 1 as the configs written before the flags were booleans have them.
      if (v.is_boolean())
        field = v.as_boolean();
      else if (v.is_integer() && (v.as_integer() == 0 || v.as_integer() == 1))
        field = v.as_integer() == 1;
      else
        throw wrong("true or false (or 1 or 0)");
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_integer()) throw wrong("an integer");
      const int64_t i = v.as_integer();
      if (!field_holds<T>(i)) throw wrong("an integer in " + field_range<T>());
      field = static_cast<T>(i);
    } else {
      if (!v.is_floating() && !v.is_integer()) throw wrong("a number");
      field = v.is_floating() ? v.as_floating() : static_cast<double>(v.as_integer());
    }
  });
  if (used != data.as_table().size()) {
    auto keys = config_keys();
    for (const auto& [key, value] : data.as_table())
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        throw InputError(path + ": unknown config key '" + key + "'");
  }
}

}  // namespace zotrain::tools
