// The Arm semihosting calls the program makes beyond newlib's (which does its files and
// console): the command line the host gave (QEMU's -semihosting-config arg=...).
#pragma once

#include <cstddef>

namespace zotrain::m55 {

// Splits the host's command line into at most `max` words in `buf` (NUL-separated); returns
// the count (0 when the host gives none).
int command_line(char* buf, size_t size, char** argv, int max);

}  // namespace zotrain::m55
