// Instructions executed, counted under QEMU's -icount shift=0: its virtual clock then advances
// one nanosecond per instruction, and the core's SysTick counts the board's 32 MHz clock from it,
// so one tick is 31.25 instructions. Without -icount (or on a board) the same counter measures
// time, which QEMU does not model: the program cannot tell, the command line says which.
#pragma once

#include <cstdint>

namespace zotrain::m55 {

// Starts SysTick (its interrupt counts the 24-bit counter's wraps).
void start_instruction_clock();
// Instructions since start_instruction_clock, to within 32.
uint64_t instructions();

}  // namespace zotrain::m55
