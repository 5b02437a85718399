// Distributed ZO over MPI (docs/distributed.md), run as a user runs it: `mpirun -np N zotrain
// train ... --distributed data|directions` must give the one-process run's metrics and
// checkpoint bit for bit, for any N. Skipped, with a message, where mpirun or MPI is missing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "synthetic_data.h"
#include "test_util.h"
#include "zotrain/core/tensor_file.h"
#include "zotrain/dist/world.h"

namespace zotrain {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool have_mpirun() {
  return std::system("command -v mpirun >/dev/null 2>&1") == 0;
}

// As root (CI), Open MPI needs --allow-run-as-root; on 2 cores, --oversubscribe for 3 ranks.
// Open MPI's plugins leave allocations behind at exit, which LeakSanitizer (the sanitized CI
// build) reports from unloaded modules it cannot name: ranks skip the leak check. The same code
// is leak-checked in every one-process run.
const char* kMpirun =
    "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "
    "mpirun --allow-run-as-root --oversubscribe -np ";

class Distributed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!dist::World::has_mpi()) GTEST_SKIP() << "built without MPI (libopenmpi-dev)";
    if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin)";
    // 280 training rows in batches of 50 end with a partial batch; 3 ranks split 50 as 16/17/17.
    test::write_synthetic_data(dir.file("data"), 300, 100, 5);
  }

  struct Result {
    int code;
    std::string err;
  };
  // `ranks` 0: one plain process, no mpirun.
  Result run(int ranks, const std::string& args) {
    std::string cmd = ranks ? kMpirun + std::to_string(ranks) + " " : std::string();
    cmd += std::string(ZOTRAIN_CLI_PATH) + " " + args + " >/dev/null 2>" + dir.file("err.txt") +
           " </dev/null";
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir.file("err.txt"))};
  }
  std::string train(const std::string& out, const std::string& args) {
    return "train --data " + dir.file("data") + " --out " + dir.file(out) +
           " --batch 50 --val-size 20 --threads 1 --overwrite 1 " + args;
  }

  // The metrics lines without what is allowed to differ (time, memory of the process).
  nlohmann::json metrics(const std::string& out) {
    nlohmann::json lines = nlohmann::json::array();
    std::istringstream in(slurp(dir.file(out) + "/metrics.jsonl"));
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      auto j = nlohmann::json::parse(line);
      for (const char* k : {"seconds", "peak_rss_bytes", "arena_bytes"}) j.erase(k);
      lines.push_back(j);
    }
    return lines;
  }

  // The run in `b` equals the run in `a`: the same metrics and every checkpoint tensor the same
  // bits.
  void expect_same_run(const std::string& a, const std::string& b) {
    const nlohmann::json ma = metrics(a), mb = metrics(b);
    ASSERT_FALSE(ma.empty());
    EXPECT_EQ(ma, mb);
    const TensorFile fa = read_tensor_file(dir.file(a) + "/checkpoint.bin");
    const TensorFile fb = read_tensor_file(dir.file(b) + "/checkpoint.bin");
    ASSERT_EQ(fa.tensors.size(), fb.tensors.size());
    for (size_t i = 0; i < fa.tensors.size(); ++i) {
      EXPECT_EQ(fa.tensors[i].first, fb.tensors[i].first);
      EXPECT_TRUE(test::bitwise_equal(fa.tensors[i].second, fb.tensors[i].second))
          << fa.tensors[i].first;
    }
  }

  // One process, then 2 and 3 ranks in `mode`: the same run.
  void expect_any_ranks_same(const std::string& args, const std::string& mode,
                             std::vector<int> rank_counts = {2, 3}) {
    ASSERT_EQ(run(0, train("one", args)).code, 0) << slurp(dir.file("err.txt"));
    for (int ranks : rank_counts) {
      const std::string out = "ranks" + std::to_string(ranks);
      const Result r = run(ranks, train(out, args + " --distributed " + mode));
      ASSERT_EQ(r.code, 0) << r.err;
      SCOPED_TRACE(args + " --distributed " + mode + " on " + std::to_string(ranks) + " ranks");
      expect_same_run("one", out);
      const auto summary = nlohmann::json::parse(slurp(dir.file(out) + "/summary.json"));
      EXPECT_EQ(summary["ranks"], ranks);
      EXPECT_GT(summary["bytes_sent_per_step"].get<double>(), 0.0);
    }
  }

  test::TempDir dir;
};

// Full ZO's defaults: the linear layers by their outputs (each rank's rows' losses and inputs
// go to every rank), the convolutions by their weights; then weight perturbation alone.
TEST_F(Distributed, FullZoByRowsEqualsOneProcess) {
  expect_any_ranks_same("--method zo --epochs 2", "data", {2, 3, 4});
  expect_any_ranks_same("--method zo --zo-activity 0 --epochs 1", "data", {2});
}

TEST_F(Distributed, ElasticByRowsEqualsOneProcess) {
  expect_any_ranks_same("--method elastic --bp-layers 2 --epochs 2 --q 2", "data");
}

TEST_F(Distributed, ElasticPairedForwardDifferenceAndCleanHeadByRows) {
  expect_any_ranks_same("--method elastic --bp-layers 1 --epochs 1 --zo-pair-passes 1", "data");
  expect_any_ranks_same("--method zo --epochs 1 --estimator forward", "data");
  expect_any_ranks_same("--method elastic --epochs 1 --head-grad clean", "data");
}

TEST_F(Distributed, DirectionsEqualOneProcess) {
  // q = 5 on 2 and 3 ranks: rounds with fewer samples than ranks.
  expect_any_ranks_same("--method elastic --bp-layers 2 --epochs 1 --q 5", "directions");
  // Full ZO's defaults: each pass's row losses to every rank, fc's input from rank 0.
  expect_any_ranks_same("--method zo --epochs 1 --q 5 --zo-pair-passes 1", "directions");
  // Batch norm's running statistics, moved by the step's first pass on rank 0.
  expect_any_ranks_same(
      "--model resnet18:0.25 --method elastic --bp-layers 1 --epochs 1 --q 2 --train-limit 70 "
      "--test-limit 20",
      "directions", {2});
  expect_any_ranks_same(
      "--model resnet18:0.25 --method zo --epochs 1 --q 2 --train-limit 70 --test-limit 20",
      "directions", {2});
}

TEST_F(Distributed, Int8StarByRowsAndBySamplesEqualsOneProcess) {
  // NITI's exponents come from the whole batch's range: the ranks reduce it at every tensor.
  const std::string args = "--precision int8 --method elastic --bp-layers 1 --epochs 2 --q 3 ";
  expect_any_ranks_same(args + "--loss-frac-bits 8", "data");
  expect_any_ranks_same(args + "--sign-agreement 1", "directions");
  expect_any_ranks_same("--precision int8 --method zo --epochs 1", "data");
}

TEST_F(Distributed, Int8NpuByRowsAndBySamplesEqualsOneProcess) {
  const std::string args = "--precision int8-npu --method zo --epochs 1 --q 3 --zo-lr 1e-3 ";
  expect_any_ranks_same(args, "data");
  expect_any_ranks_same(args, "directions");
}

TEST_F(Distributed, RefusesRowsApartWhereLayersMixThem) {
  const Result r =
      run(2, train("bn", "--model pointnet --method zo --epochs 1 --distributed data"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("use distributed = directions"), std::string::npos) << r.err;
}

TEST_F(Distributed, ResumesOnAnotherNumberOfRanks) {
  const std::string args = "--method elastic --bp-layers 2 --q 2 ";
  ASSERT_EQ(run(0, train("one", args + "--epochs 2")).code, 0) << slurp(dir.file("err.txt"));
  ASSERT_EQ(run(2, train("split", args + "--epochs 1 --distributed data")).code, 0);
  const Result r = run(3, "train --resume " + dir.file("split") + " --epochs 2");
  ASSERT_EQ(r.code, 0) << r.err;
  expect_same_run("one", "split");
}

TEST_F(Distributed, RefusesRanksWithoutAMode) {
  const Result r = run(2, train("none", "--method zo --epochs 1"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--distributed data or directions"), std::string::npos) << r.err;
}

TEST_F(Distributed, RanksWithDifferentConfigsStopWithAnError) {
  // Two programs in one launch (mpirun's MPMD form), each rank a different seed.
  const std::string one = std::string(ZOTRAIN_CLI_PATH) + " " +
                          train("mismatch", "--method zo --epochs 1 --distributed data");
  const std::string cmd = std::string(kMpirun) + "1 " + one + " --seed 1 : -np 1 " + one +
                          " --seed 2 >/dev/null 2>" + dir.file("err.txt");
  const int status = std::system(cmd.c_str());
  EXPECT_NE(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
  EXPECT_NE(slurp(dir.file("err.txt")).find("differs from rank 0's"), std::string::npos)
      << slurp(dir.file("err.txt"));
}

TEST_F(Distributed, AKilledRankStopsEveryRank) {
  // A long run; one of its two ranks is killed once both run; mpirun must end, non-zero, soon.
  // The ranks' command lines start with the binary (mpirun's and the shell's do not).
  const std::string ranks =
      "'^" + std::string(ZOTRAIN_CLI_PATH) + " train .*--out " + dir.file("killed") + " '";
  const std::string cmd = std::string(kMpirun) + "2 " + ZOTRAIN_CLI_PATH + " " +
                          train("killed", "--method zo --epochs 100000 --distributed data") +
                          " >/dev/null 2>&1 & " + "for i in $(seq 100); do [ $(pgrep -f " + ranks +
                          " | wc -l) -ge 2 ] && break; " +
                          "sleep 0.1; done; sleep 0.5; pkill -9 -n -f " + ranks + "; wait $!";
  const auto t0 = std::chrono::steady_clock::now();
  std::ofstream(dir.file("kill.sh")) << cmd << "\n";
  const int status = std::system(("bash " + dir.file("kill.sh")).c_str());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
  EXPECT_LT(seconds, 60.0);
  EXPECT_NE(std::system(("pgrep -f " + ranks + " >/dev/null").c_str()), 0)
      << "a rank outlived the launch";
}

}  // namespace
}  // namespace zotrain
