// Reset and fault handlers of the bare-metal Cortex-M55 program: the vector table, the copy of
// .data and the clearing of .bss, the FPU and MVE enabled, semihosting opened, main run, exit.
#include <malloc.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" {
extern uint32_t __stack_top, __data_start, __data_end, __data_load, __bss_start__, __bss_end__;
void __libc_init_array();
void initialise_monitor_handles();
int main();
[[noreturn]] void Reset_Handler();
void SysTick_Handler();  // instruction_clock.cpp
}

namespace {

[[noreturn]] void fault_handler() {
  std::fputs("zotrain-m55: processor fault\n", stderr);
  std::_Exit(3);
}

}  // namespace

extern "C" [[noreturn]] void Reset_Handler() {
  // CPACR: full access to CP10 and CP11 (the FPU and the MVE vector registers).
  volatile uint32_t& cpacr = *reinterpret_cast<volatile uint32_t*>(0xE000ED88u);
  cpacr = cpacr | (0xFu << 20);
  asm volatile("dsb\n isb" ::: "memory");
  for (uint32_t *src = &__data_load, *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (uint32_t* dst = &__bss_start__; dst < &__bss_end__;) *dst++ = 0;
  initialise_monitor_handles();
  __libc_init_array();
  std::exit(main());
}

// The Armv8-M exception vectors: stack, reset, NMI, HardFault, MemManage, BusFault, UsageFault,
// SecureFault, four reserved, SVCall, DebugMonitor, reserved, PendSV, SysTick.
__attribute__((section(".vectors"), used)) void (*const kVectors[16])() = {
    reinterpret_cast<void (*)()>(&__stack_top),
    Reset_Handler,
    fault_handler,
    fault_handler,
    fault_handler,
    fault_handler,
    fault_handler,
    fault_handler,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    fault_handler,
    nullptr,
    fault_handler,
    SysTick_Handler};

// newlib 3.3's aligned_alloc calls posix_memalign, which its Arm build leaves out.
extern "C" int posix_memalign(void** p, size_t alignment, size_t size) {
  *p = memalign(alignment, size);
  return *p ? 0 : ENOMEM;
}
