// Error types. Every failure the user can cause is an InputError (exit code 2) whose message
// names the file or key and what was expected; everything else is a RuntimeError (exit code 1).
#pragma once

#include <stdexcept>
#include <string>

namespace zotrain {

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

// Checks an internal invariant; a failure is a bug in zotrain, reported with its location.
#define ZT_ASSERT(cond)                                                                           \
  do {                                                                                            \
    if (!(cond))                                                                                  \
      throw ::zotrain::RuntimeError(std::string("internal error: ") + #cond + " at " + __FILE__ + \
                                    ":" + std::to_string(__LINE__));                              \
  } while (0)

}  // namespace zotrain
