// zotrain: train neural networks with forward passes only. See `zotrain --help`.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "commands.h"
#include "kernels/isa.h"
#include "zotrain/core/error.h"
#include "zotrain/dist/world.h"

namespace {

// The exit of a run: a distributed run that fails on one rank stops them all (the others would
// wait for it forever), with the same code.
int finish(int code) {
  zotrain::dist::World& w = zotrain::dist::world();
  if (code != 0 && w.distributed()) {
    std::fflush(nullptr);
    w.abort(code);
  }
  zotrain::dist::finalize();
  return code;
}

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  zotrain::dist::init(&argc, &argv);
  // Rank 0 speaks for a distributed run; the others report only errors.
  if (zotrain::dist::world().rank() != 0 && !std::freopen("/dev/null", "w", stdout)) return 1;
  return finish(run(argc, argv));
}

namespace {

int run(int argc, char** argv) {
  CLI::App app{"zotrain: on-device training with forward passes only (zeroth-order, ElasticZO)"};
  app.require_subcommand(1);
  zotrain::tools::add_train_command(app);
  zotrain::tools::add_eval_command(app);
  zotrain::tools::add_export_command(app);
  zotrain::tools::add_device_command(app);
  zotrain::tools::add_memory_command(app);
  zotrain::tools::add_bench_command(app);
  zotrain::tools::add_info_command(app);
  zotrain::tools::add_make_data_command(app);
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known |= sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "zotrain: error: unknown command '%s' (commands: %s)\n", argv[1],
                   names.c_str());
      return 2;
    }
  }
  try {
    // Chooses the kernel set now, on this thread, so that a bad ZOTRAIN_KERNELS is reported
    // here rather than from inside the first kernel call.
    zotrain::kernels::active_kernel_isa();
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const zotrain::InputError& e) {
    std::fprintf(stderr, "zotrain: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "zotrain: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zotrain: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace
