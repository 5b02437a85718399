// Running a test once per instruction set the kernels are built for (kernels/isa.h), so that
// the portable build is tested on CPUs where another one would be chosen.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kernels/isa.h"

namespace zotrain::test {

// Says once per test program which sets the kernel tests run and which they skip, and why (a
// VNNI set on a CPU without VNNI): this project's machines differ, and run the same suite.
inline void report_kernel_isas() {
  static const bool reported = [] {
    std::string ran, skipped;
    for (auto isa : kernels::kAllKernelIsas) {
      const char* missing = kernels::kernel_isa_missing(isa);
      (*missing ? skipped : ran) += std::string(" ") + kernels::kernel_isa_name(isa) +
                                    (*missing ? std::string(" (needs ") + missing + ")" : "");
    }
    std::printf("[ kernels  ] sets tested:%s; skipped:%s\n", ran.c_str(),
                skipped.empty() ? " none" : skipped.c_str());
    return true;
  }();
  (void)reported;
}

// Calls body() once per instruction set the CPU supports, with that set active; the set that
// was active before is restored afterwards, also when body fails.
template <typename Body>
void for_each_kernel_isa(Body body) {
  report_kernel_isas();
  struct Restore {
    kernels::KernelIsa isa = kernels::active_kernel_isa();
    ~Restore() { kernels::set_active_kernel_isa(isa); }
  } restore;
  for (auto isa : kernels::kAllKernelIsas) {
    if (!kernels::kernel_isa_supported(isa)) continue;
    SCOPED_TRACE(kernels::kernel_isa_name(isa));
    kernels::set_active_kernel_isa(isa);
    body();
  }
}

}  // namespace zotrain::test
