// zotrain-m55: integer training on a bare-metal Cortex-M55 (docs/devices.md). It reads a run
// packed on the host (`zotrain device pack`), builds the model's integer network in one static
// arena sized by the memory planner, runs the packed steps by the library's own integer step
// (ElasticZO-INT8, Full ZO or NITI BP), prints the loss and accuracy per chunk of steps, writes
// the weights for `zotrain device compare`, and reports the memory it took.
//
//   qemu-system-arm -M mps3-an547 -nographic -kernel zotrain-m55.elf -semihosting-config
//     enable=on,target=native,arg=zotrain-m55,arg=RUN,arg=WEIGHTS_OUT[,arg=CHUNK]
//
// Exit status: 0 trained and wrote the weights; 1 a heap allocation during training; 2 bad
// input (the message names the file and the field).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "instruction_clock.h"
#include "kernels/int8.h"
#include "nn/int8/int_loss.h"
#include "semihosting.h"
#include "train/device_run_format.h"
#include "train/int8_step.h"
#include "zotrain/core/arena.h"
#include "zotrain/core/error.h"
#include "zotrain/models/model.h"
#include "zotrain/nn/int8/qnetwork.h"
#include "zotrain/zo/perturbation.h"

namespace {

// The region every training buffer comes from (weights, gradients, activations, scratch, the
// input batch and its labels): its size is a build setting, the plan must fit it.
alignas(64) unsigned char g_arena[ZOTRAIN_M55_ARENA_BYTES];

// Heap calls (operator new) after start-up: the training loop must make none.
bool g_training = false;
long g_heap_calls = 0;

[[noreturn]] void fail(const char* what, const char* detail = "") {
  std::fprintf(stderr, "zotrain-m55: %s%s\n", what, detail);
  std::exit(2);
}

void* counted_new(size_t n) {
  if (g_training) ++g_heap_calls;
  void* p = std::malloc(n ? n : 1);
  if (!p) fail("out of heap");
  return p;
}

// The stack's deepest point: the free RAM between the heap's end and the stack is painted at
// start-up and the first word still painted at the end bounds what the stack used.
constexpr uint32_t kPaint = 0xA5A5A5A5u;
extern "C" uint32_t __stack_top, __data_start, __bss_end__, end;

uint32_t* paint_free_ram() {
  uint32_t* low = static_cast<uint32_t*>(sbrk(0));
  // Below this frame (with room for the calls it makes).
  auto* high = static_cast<uint32_t*>(__builtin_frame_address(0)) - 64;
  for (uint32_t* p = low; p < high; ++p) *p = kPaint;
  return low;
}

size_t stack_used(const uint32_t* painted) {
  // The heap may have grown into the painted RAM since.
  const uint32_t* low = static_cast<const uint32_t*>(sbrk(0));
  const uint32_t* p = low > painted ? low : painted;
  while (p < &__stack_top && *p == kPaint) ++p;
  return static_cast<size_t>(reinterpret_cast<const char*>(&__stack_top) -
                             reinterpret_cast<const char*>(p));
}

void read_exactly(FILE* f, void* dst, size_t n, const char* path, const char* field) {
  if (std::fread(dst, 1, n, f) != n) {
    std::fprintf(stderr, "zotrain-m55: %s: truncated (%s)\n", path, field);
    std::exit(2);
  }
}

void write_weights(const zotrain::QNetwork& net, const char* path) {
  using namespace zotrain;
  FILE* f = std::fopen(path, "wb");
  if (!f) fail("cannot create the weights file ", path);
  const auto put = [&](const void* p, size_t n) {
    if (std::fwrite(p, 1, n, f) != n) fail("cannot write the weights file ", path);
  };
  device::put_weights(net, put);
  if (std::fclose(f) != 0) fail("cannot write the weights file ", path);
}

// The int8 products this build runs (the Helium loops on an MVE target) against the reference
// loop, bit for bit, on shapes with remainders in every dimension and the whole int8 range.
void check_kernels() {
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 7, 5}, {5, 19, 37}, {6, 33, 150}, {2, 17, 400}};
  uint32_t state = 12345;
  const auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<int8_t>(state >> 24);
  };
  int checked = 0;
  for (const auto& s : shapes)
    for (const bool trans_a : {false, true})
      for (const bool trans_b : {false, true}) {
        const int64_t m = s[0], n = s[1], k = s[2];
        std::vector<int8_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(n * k));
        std::vector<int32_t> got(static_cast<size_t>(m * n));
        for (int64_t i = 0; i < m * k; ++i) a[i] = i % 5 == 0 ? 0 : next();  // zeros are skipped
        for (int8_t& v : b) v = next();
        for (int32_t& v : got) v = next();
        std::vector<int32_t> want = got;
        const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
        for (const bool accumulate : {false, true}) {
          zotrain::kernels::gemm_s8(trans_a, trans_b, m, n, k, a.data(), lda, b.data(), ldb,
                                    got.data(), n, accumulate);
          zotrain::kernels::gemm_s8_ref(trans_a, trans_b, m, n, k, a.data(), lda, b.data(), ldb,
                                        want.data(), n, accumulate);
          if (got != want) fail("gemm_s8 differs from the reference loop");
          ++checked;
        }
      }
  std::printf("zotrain-m55: gemm_s8 (%s) equals the reference on %d cases\n",
#if defined(__ARM_FEATURE_MVE)
              "Helium",
#else
              "portable",
#endif
              checked);
}

}  // namespace

void* operator new(size_t n) {
  return counted_new(n);
}
void* operator new[](size_t n) {
  return counted_new(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}

namespace zotrain {

void fatal_error(const std::exception& e) {
  fail(e.what());
}

}  // namespace zotrain

int main() {
  using namespace zotrain;
  uint32_t* painted = paint_free_ram();
  static char cmdline[512];
  char* argv[8];
  const int argc = m55::command_line(cmdline, sizeof cmdline, argv, 8);
  if (argc < 3) fail("usage: zotrain-m55 RUN WEIGHTS_OUT [CHUNK] (semihosting arguments)");
  const char* run_path = argv[1];
  const long chunk = argc > 3 ? std::strtol(argv[3], nullptr, 10) : 10;
  if (chunk < 1) fail("CHUNK must be a positive number of steps, got ", argv[3]);

  check_kernels();
  FILE* f = std::fopen(run_path, "rb");
  if (!f) fail("cannot open the run file ", run_path);
  device::RunHeader h;
  read_exactly(f, &h, sizeof h, run_path, "header");
  if (std::memcmp(h.magic, device::kRunMagic, 8) != 0)
    fail("not a run packed by zotrain device pack (magic ZTDEVRUN expected): ", run_path);
  if (h.version != device::kVersion) fail("run file of another version: ", run_path);
  h.model[sizeof h.model - 1] = '\0';
  int rank = 0;
  while (rank < 4 && h.item[rank] > 0) ++rank;
  if (rank == 0 || h.classes < 2 || h.batch < 1 || h.steps < 0 || h.q < 1)
    fail("run file with an impossible item shape, classes, batch, steps or q: ", run_path);
  Shape item;
  item.rank = rank;
  for (int d = 0; d < rank; ++d) item[d] = h.item[d];

  const ModelSpec spec = model_by_name(h.model, item, h.classes);
  const Network desc(spec.item_shape, spec.layers);
  if (h.head < 0 || h.head > desc.num_layers())
    fail("run file whose head is not a layer of the model: ", run_path);
  QNetwork net(desc);
  net.set_fixed_norm(h.fixed_norm != 0);
  const MemoryPlan plan = net.plan(h.batch, h.head, 1);
  const size_t needed = plan.total() + align_up(static_cast<size_t>(h.batch));  // and labels
  if (needed > sizeof g_arena) {
    std::fprintf(stderr,
                 "zotrain-m55: %s: the run needs %lu bytes of arena (its memory plan and the "
                 "labels), this build has %lu (ZOTRAIN_M55_ARENA_BYTES)\n",
                 run_path, static_cast<unsigned long>(needed),
                 static_cast<unsigned long>(sizeof g_arena));
    return 2;
  }
  Arena arena(g_arena, sizeof g_arena);
  net.allocate(arena, h.batch, h.head, h.seed, nullptr);
  auto* labels = static_cast<uint8_t*>(arena.alloc_bytes(Bucket::kInput, h.batch));
  const size_t input_bytes = static_cast<size_t>(h.batch) * spec.item_shape.numel();
  std::printf("zotrain-m55: %s, batch %d, %d steps, head at layer %d of %d, q %d, eps %d\n",
              h.model, static_cast<int>(h.batch), static_cast<int>(h.steps),
              static_cast<int>(h.head), desc.num_layers(), static_cast<int>(h.q),
              static_cast<int>(h.eps));

  int8::StepConfig c;
  c.seed = h.seed, c.q = h.q, c.eps = h.eps, c.zero_threshold = h.zero_threshold;
  c.bp_bits = h.bp_bits, c.zo_bits = h.zo_bits, c.loss_frac_bits = h.loss_frac_bits;
  c.cyclic = h.cyclic != 0;
  int8::StepBuffers buffers;
  buffers.reserve(h.q);
  c.buffers = &buffers;
  g_training = true;
  m55::start_instruction_clock();
  uint64_t step_instructions = 0;  // in the steps alone (reading the batches aside)
  int64_t loss = 0, correct = 0, rows_seen = 0;
  for (int32_t s = 0; s < h.steps; ++s) {
    int32_t rows;
    read_exactly(f, &rows, 4, run_path, "rows of a step");
    if (rows < 1 || rows > h.batch) fail("run file with a step of impossible rows: ", run_path);
    read_exactly(f, labels, static_cast<size_t>(h.batch), run_path, "labels");
    read_exactly(f, net.input().data, input_bytes, run_path, "inputs");
    net.input().exp = h.input_exp;
    net.set_mode({true, zo::sample_seed(h.seed, s, -1), true});
    c.step = s;
    const uint64_t before = m55::instructions();
    const int8::StepResult r =
        h.head > 0 ? int8::zo_step(net, rows, labels, c) : int8::bp_step(net, rows, labels, c);
    step_instructions += m55::instructions() - before;
    loss += r.loss, correct += r.correct, rows_seen += rows;
    if ((s + 1) % chunk == 0 || s + 1 == h.steps) {
      // The integer loss is in 2^-kGradFracBits bits: nats = bits * ln 2.
      std::printf("steps %5ld-%5ld: loss %.4f nats, train accuracy %.2f %%\n",
                  static_cast<long>(s / chunk * chunk + 1), static_cast<long>(s + 1),
                  static_cast<double>(loss) * 0.69314718055994531 /
                      static_cast<double>(1 << int8::kGradFracBits) / rows_seen,
                  100.0 * correct / rows_seen);
      loss = correct = rows_seen = 0;
    }
  }
  g_training = false;
  std::fclose(f);
  write_weights(net, argv[2]);

  const auto bytes = [](const void* a, const void* b) {
    return static_cast<long>(static_cast<const char*>(b) - static_cast<const char*>(a));
  };
  // newlib's printf has no %zu.
  std::printf(
      "memory: plan %lu bytes, arena used %lu of %lu; static data %ld bytes (arena "
      "included), heap %ld, stack %lu\n",
      static_cast<unsigned long>(plan.total()), static_cast<unsigned long>(arena.total_bytes()),
      static_cast<unsigned long>(sizeof g_arena), bytes(&__data_start, &__bss_end__),
      bytes(&end, sbrk(0)), static_cast<unsigned long>(stack_used(painted)));
  std::printf("heap calls during training: %ld\n", g_heap_calls);
  if (h.steps > 0)
    std::printf("instructions per step: %llu (counted when QEMU runs with -icount shift=0)\n",
                static_cast<unsigned long long>(step_instructions / h.steps));
  return g_heap_calls == 0 ? 0 : 1;
}
