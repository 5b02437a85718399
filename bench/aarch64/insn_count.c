/* A QEMU TCG plugin that counts the guest instructions a qemu-user process executes and prints
 * the total to stderr at exit ("instructions: N"); with the argument top=K also the K functions
 * (by ELF symbol) that executed the most ("  N  symbol"). QEMU models no time, so these counts
 * are what bench/aarch64/instructions.sh compares between kernel sets: instructions, not cycles.
 *
 * Debian ships no qemu-plugin.h, so the few entry points used are declared here, as QEMU 7.2's
 * plugin API (version 1) defines them; the plugin is loaded by `qemu-aarch64 -plugin <this .so>`
 * or `-plugin <this .so>,top=20`.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t idx);
const char* qemu_plugin_insn_symbol(const struct qemu_plugin_insn* insn);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op,
                                              void* ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
                                    void* userdata);

EXPORT int qemu_plugin_version = 1;

/* One counter for the process: the runs measured here have one thread. */
static uint64_t executed;

/* With top=K: a counter per function, found by the symbol of a block's first instruction (QEMU
 * keeps one string per symbol, so the pointer is the key). Open addressing, never full: a block
 * whose function finds no free slot counts under "(other)". */
enum { kSlots = 1 << 16 };
struct Function {
  const char* symbol;
  uint64_t count;
};
static struct Function functions[kSlots];
static struct Function other = {"(other)", 0};
static int top;

static struct Function* function_of(const char* symbol) {
  size_t h = ((uintptr_t)symbol >> 3) * 0x9E3779B97F4A7C15u >> 48;
  for (int probe = 0; probe < 64; ++probe, h = (h + 1) & (kSlots - 1)) {
    if (functions[h].symbol == symbol) return &functions[h];
    if (!functions[h].symbol) {
      functions[h].symbol = symbol;
      return &functions[h];
    }
  }
  return &other;
}

/* Each translated block adds its length to the counters every time it runs (inline adds, no
 * calls). */
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, n);
  if (top > 0 && n > 0) {
    const char* symbol = qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0));
    struct Function* f = symbol ? function_of(symbol) : &other;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &f->count, n);
  }
}

static int by_count(const void* a, const void* b) {
  const uint64_t x = ((const struct Function*)a)->count, y = ((const struct Function*)b)->count;
  return x < y ? 1 : x > y ? -1 : 0;
}

static void on_exit_(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  fprintf(stderr, "instructions: %" PRIu64 "\n", executed);
  if (top <= 0) return;
  qsort(functions, kSlots, sizeof functions[0], by_count);
  for (int i = 0; i < top && i < kSlots && functions[i].count; ++i)
    fprintf(stderr, "  %14" PRIu64 "  %s\n", functions[i].count, functions[i].symbol);
  if (other.count) fprintf(stderr, "  %14" PRIu64 "  %s\n", other.count, other.symbol);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const void* info, int argc, char** argv) {
  (void)info;
  for (int i = 0; i < argc; ++i)
    if (strncmp(argv[i], "top=", 4) == 0) top = atoi(argv[i] + 4);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
  return 0;
}
