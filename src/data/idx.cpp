#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "zotrain/core/error.h"

namespace zotrain {
namespace {

constexpr uint8_t kTypeU8 = 0x08;
constexpr size_t kMaxDims = 4;  // what a Shape holds; the data sets need 1 (labels) to 4
// Far beyond any data set we read: a header claiming more is garbage.
constexpr int64_t kMaxBytes = int64_t{1} << 48;
// Deflate expands by at most about 1032:1, which bounds what a gzip file can hold.
constexpr int64_t kMaxGzipRatio = 1032;

std::string hex_byte(uint8_t b) {
  char s[8];
  std::snprintf(s, sizeof s, "0x%02X", b);
  return s;
}

const char* type_name(uint8_t type) {
  switch (type) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
    default:
      return nullptr;
  }
}

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Reads a file through zlib, which passes data without a gzip header through unchanged, so one
// path serves raw and compressed files.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    file_ = gzopen(path.c_str(), "rb");
    if (!file_) fail(std::string("cannot open: ") + std::strerror(errno));
    gzbuffer(file_, 1 << 17);  // fewer system calls than the 8 KiB default
  }
  ~Reader() { gzclose(file_); }
  // Whether the file is gzip-compressed; known after the first read.
  bool compressed() const { return gzdirect(file_) == 0; }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Reads up to n bytes; fewer only at the end of the data. Throws on a corrupt gzip stream.
  size_t read(uint8_t* buf, size_t n) {
    size_t total = 0;
    while (total < n) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - total, 1u << 30));
      int got = gzread(file_, buf + total, chunk);
      if (got < 0) fail_gzip();
      if (got == 0) break;
      total += static_cast<size_t>(got);
    }
    // gzread reports a gzip stream cut short (Z_BUF_ERROR) only through gzerror.
    if (total < n) {
      int err = Z_OK;
      gzerror(file_, &err);
      if (err != Z_OK) fail_gzip();
    }
    return total;
  }

  [[noreturn]] void fail(const std::string& what) const { throw InputError(path_ + ": " + what); }

 private:
  [[noreturn]] void fail_gzip() const {
    int err = Z_OK;
    const int saved_errno = errno;
    std::string msg = gzerror(file_, &err);
    if (err == Z_ERRNO) msg = std::strerror(saved_errno);  // a read error, not bad data
    // zlib prefixes its message with the path, which ours already starts with.
    if (msg.rfind(path_ + ": ", 0) == 0) msg.erase(0, path_.size() + 2);
    fail("corrupt gzip stream (" + msg + ")");
  }

  std::string path_;
  gzFile file_ = nullptr;
};

}  // namespace

IdxArray read_idx(const std::string& path) {
  // Checked first so that a missing file gets a plain message, not a strerror from gzopen.
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw InputError(path + ": no such file (expected an IDX file)");
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path + ": is a directory, expected an IDX file");

  Reader in(path);
  uint8_t magic[4];
  size_t got = in.read(magic, 4);
  if (got < 4)
    in.fail("holds only " + std::to_string(got) + " bytes, shorter than the 4-byte IDX header");
  if (magic[0] != 0 || magic[1] != 0)
    in.fail("bad magic " + hex_byte(magic[0]) + " " + hex_byte(magic[1]) +
            ": an IDX file starts with two zero bytes (is this an IDX file?)");
  if (magic[2] != kTypeU8) {
    const char* name = type_name(magic[2]);
    in.fail(std::string(name ? "unsupported" : "unknown") + " IDX data type " + hex_byte(magic[2]) +
            (name ? std::string(" (") + name + ")" : "") + "; only " + hex_byte(kTypeU8) +
            " (unsigned byte) is supported");
  }
  const size_t ndims = magic[3];
  if (ndims < 1 || ndims > kMaxDims)
    in.fail("bad number of dims " + std::to_string(ndims) + " in the IDX header; expected 1 to " +
            std::to_string(kMaxDims));

  uint8_t raw_dims[4 * kMaxDims];
  if (in.read(raw_dims, 4 * ndims) < 4 * ndims)
    in.fail("file ends inside the IDX header (" + std::to_string(ndims) + " dims need " +
            std::to_string(4 + 4 * ndims) + " bytes)");
  IdxArray a;
  for (size_t i = 0; i < ndims; ++i) {
    const uint8_t* b = raw_dims + 4 * i;
    a.dims.push_back((int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3]);
  }
  int64_t need = 1;
  if (std::find(a.dims.begin(), a.dims.end(), 0) != a.dims.end()) {
    need = 0;
  } else {
    for (int64_t d : a.dims) {
      if (need > kMaxBytes / d) in.fail("dims " + dims_str(a.dims) + " are implausibly large");
      need *= d;
    }
  }

  // Reserve what the file can hold at most, not what a corrupt header may claim.
  const int64_t file_bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  const int64_t can_hold = ec ? 0 : file_bytes * (in.compressed() ? kMaxGzipRatio : 1);
  a.data.reserve(static_cast<size_t>(std::min(need, can_hold)));
  constexpr int64_t kChunk = int64_t{1} << 24;
  int64_t have = 0;
  while (have < need) {
    int64_t want = std::min(need - have, kChunk);
    a.data.resize(static_cast<size_t>(have + want));
    int64_t n = static_cast<int64_t>(in.read(a.data.data() + have, static_cast<size_t>(want)));
    have += n;
    if (n < want) break;
  }
  if (have < need)
    in.fail("data is truncated: dims " + dims_str(a.dims) + " need " + std::to_string(need) +
            " bytes after the header, but only " + std::to_string(have) + " are there");
  a.data.resize(static_cast<size_t>(need));

  // Reading to the end also makes zlib check the gzip trailer (CRC and length).
  int64_t extra = 0;
  uint8_t buf[1 << 14];
  while (size_t n = in.read(buf, sizeof buf)) extra += static_cast<int64_t>(n);
  if (extra > 0)
    in.fail(std::to_string(extra) + (extra == 1 ? " trailing byte" : " trailing bytes") +
            " after the " + std::to_string(need) + " bytes of data that dims " + dims_str(a.dims) +
            " describe");
  return a;
}

void write_idx(const std::string& path, const IdxArray& a, bool gzip) {
  int64_t numel = 1;
  for (int64_t d : a.dims) {
    ZT_ASSERT(d >= 0 && d <= int64_t{UINT32_MAX});
    numel *= d;
  }
  ZT_ASSERT(!a.dims.empty() && a.dims.size() <= kMaxDims);
  ZT_ASSERT(numel == static_cast<int64_t>(a.data.size()));

  std::vector<uint8_t> bytes = {0, 0, kTypeU8, static_cast<uint8_t>(a.dims.size())};
  for (int64_t d : a.dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(d >> shift));
  bytes.insert(bytes.end(), a.data.begin(), a.data.end());

  auto fail = [&](const char* what) {
    throw RuntimeError(path + ": cannot write IDX file: " + what);
  };
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (!f) fail(std::strerror(errno));
    bool ok = true;
    for (size_t off = 0; ok && off < bytes.size();) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - off, 1u << 30));
      ok = gzwrite(f, bytes.data() + off, chunk) == static_cast<int>(chunk);
      off += chunk;
    }
    if (gzclose(f) != Z_OK || !ok) fail("gzip write failed");
  } else {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) fail(std::strerror(errno));
    bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (std::fclose(f) != 0 || !ok) fail(std::strerror(errno));
  }
}

}  // namespace zotrain
