#include "instruction_clock.h"

namespace zotrain::m55 {

namespace {

volatile uint32_t& syst(uint32_t offset) {
  return *reinterpret_cast<volatile uint32_t*>(0xE000E010u + offset);
}
constexpr uint32_t kCsr = 0, kRvr = 4, kCvr = 8;
constexpr uint32_t kPeriod = 1u << 24;
volatile uint32_t g_wraps = 0;

}  // namespace

void start_instruction_clock() {
  syst(kRvr) = kPeriod - 1;
  syst(kCvr) = 0;
  syst(kCsr) = 7;  // enabled, its interrupt on, the processor clock
  // The counter reads 0 until its first reload: wait for it, so that instructions() starts at 0.
  while (syst(kCvr) == 0) {
  }
}

uint64_t instructions() {
  uint32_t wraps, value;
  do {  // a wrap between the two reads is seen as a changed count
    wraps = g_wraps;
    value = syst(kCvr);
  } while (wraps != g_wraps);
  const uint64_t ticks = static_cast<uint64_t>(wraps) * kPeriod + (kPeriod - 1 - value);
  return ticks * 125 / 4;  // 1e9 instructions per s / 32e6 ticks per s
}

}  // namespace zotrain::m55

extern "C" void SysTick_Handler() {
  zotrain::m55::g_wraps = zotrain::m55::g_wraps + 1;
}
