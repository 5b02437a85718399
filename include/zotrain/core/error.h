// Error types. Every failure the user can cause is an InputError (exit code 2) whose message
// names the file or key and what was expected; everything else is a RuntimeError (exit code 1).
#pragma once

#include <stdexcept>
#include <string>

namespace zotrain {

// The compute core (tensors, kernels, layers, models, the integer step) also builds for devices
// without exceptions (device/m55): it raises through ZT_THROW, which there reports the error's
// message and stops the program (fatal_error, defined by the device runtime).
#if defined(__cpp_exceptions)
#define ZT_THROW(...) throw __VA_ARGS__
#else
[[noreturn]] void fatal_error(const std::exception& e);
#define ZT_THROW(...) ::zotrain::fatal_error(__VA_ARGS__)
#endif

// Bad usage or bad input: a missing or corrupt file, an unknown name, an invalid value.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// A failure that is not the input's fault (out of memory, I/O error while writing, ...).
class RuntimeError : public std::runtime_error {
 public:
  explicit RuntimeError(const std::string& what) : std::runtime_error(what) {}
};

// Reports a broken invariant or a misused API: a bug in zotrain or in the code calling it, not
// bad input. Throws a RuntimeError naming the condition, the place and the optional detail.
[[noreturn]] inline void internal_error(const char* cond, const char* file, int line,
                                        const std::string& detail = "") {
  ZT_THROW(RuntimeError(std::string("internal error: ") + cond + " at " + file + ":" +
                        std::to_string(line) + (detail.empty() ? "" : ": " + detail)));
}

// Checks an internal invariant or an API's precondition; ZT_ASSERT(cond, detail) adds a message.
#define ZT_ASSERT(cond, ...)                                                                      \
  do {                                                                                            \
    if (!(cond)) ::zotrain::internal_error(#cond, __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

}  // namespace zotrain
