// What every fuzz target does: the input bytes become a file (one per process, rewritten for
// each input), which the reader under test opens by its path, as it opens the user's files.
// InputError is the answer to a bad file; any other exception escapes and libFuzzer reports it.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "zotrain/core/error.h"

namespace zotrain::fuzz {

template <typename Read>
int on_file(const uint8_t* data, size_t size, const char* suffix, Read read) {
  static const std::string path =
      "/tmp/zotrain-fuzz-" + std::to_string(::getpid()) + std::string(suffix);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    read(path);
  } catch (const InputError&) {
  }
  return 0;
}

}  // namespace zotrain::fuzz
