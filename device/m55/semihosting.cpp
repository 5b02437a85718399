#include "semihosting.h"

namespace zotrain::m55 {

namespace {

constexpr int kSysGetCmdline = 0x15;

int call(int op, void* arg) {
  register int r0 asm("r0") = op;
  register void* r1 asm("r1") = arg;
  asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

}  // namespace

int command_line(char* buf, size_t size, char** argv, int max) {
  struct {
    char* buf;
    int len;
  } block = {buf, static_cast<int>(size)};
  if (call(kSysGetCmdline, &block) != 0) return 0;
  int argc = 0;
  for (char* p = buf; *p && argc < max;) {
    while (*p == ' ') *p++ = '\0';
    if (!*p) break;
    argv[argc++] = p;
    while (*p && *p != ' ') ++p;
  }
  return argc;
}

}  // namespace zotrain::m55
