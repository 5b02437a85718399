// Running a test once per instruction set the kernels are built for (kernels/isa.h), so that
// the portable build is tested on CPUs where another one would be chosen.
#pragma once

#include <gtest/gtest.h>

#include "kernels/isa.h"

namespace zotrain::test {

// Calls body() once per instruction set the CPU supports, with that set active; the set that
// was active before is restored afterwards, also when body fails.
template <typename Body>
void for_each_kernel_isa(Body body) {
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
