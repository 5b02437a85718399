// The zotrain command line, run as a user would: exit codes, messages, outputs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "synthetic_data.h"
#include "test_util.h"
#include "zotrain/core/tensor_file.h"
#include "zotrain/models/onnx.h"
#include "zotrain/train/config.h"

namespace zotrain {
namespace {

struct Result {
  int code;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { test::write_synthetic_data(dir.file("data"), 300, 100, 5); }

  Result run(const std::string& args) {
    std::string cmd = std::string(ZOTRAIN_CLI_PATH) + " " + args + " >" + dir.file("out.txt") +
                      " 2>" + dir.file("err.txt") + " </dev/null";
    int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir.file("out.txt")),
            slurp(dir.file("err.txt"))};
  }
  std::string train_args(const std::string& out) {
    return "train --data " + dir.file("data") + " --out " + dir.file(out) +
           " --epochs 1 --batch 50 --val-size 50";
  }
  // zotrain eval of run `out`'s checkpoint prints the test accuracy its summary.json reports.
  void expect_eval_reproduces(const std::string& out) {
    auto summary = nlohmann::json::parse(slurp(dir.file(out) + "/summary.json"));
    Result e =
        run("eval --checkpoint " + dir.file(out) + "/checkpoint.bin --data " + dir.file("data"));
    ASSERT_EQ(e.code, 0) << e.err;
    char expected[32];
    std::snprintf(expected, sizeof expected, "%.2f%%",
                  100 * summary["final_test_acc"].get<double>());
    EXPECT_NE(e.out.find(expected), std::string::npos) << e.out << " vs " << expected;
  }
  void expect_usage_error(const std::string& args, const std::string& needle) {
    Result r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr: " << r.err;
    // One clear message, not a stack of them.
    EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 3) << r.err;
  }

  test::TempDir dir;
};

TEST_F(Cli, ExportWritesTheTrainedModelAsOnnx) {
  if (!onnx_supported()) GTEST_SKIP() << "built without ONNX (libonnx-dev)";
  for (const std::string p : {"f32", "int8"}) {
    ASSERT_EQ(run(train_args(p) + " --precision " + p).code, 0) << p;
    const Result r = run("export --checkpoint " + dir.file(p) + "/checkpoint.bin --out " +
                         dir.file(p + ".onnx"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("normalized as in training"), std::string::npos) << r.out;
    const OnnxModel m = read_onnx(dir.file(p + ".onnx"));
    EXPECT_EQ(m.spec.layers.size(), 12u) << p;  // LeNet-5
  }
  ASSERT_EQ(run(train_args("npu") + " --precision int8-npu --method zo").code, 0);
  const Result r = run("export --checkpoint " + dir.file("npu") + "/checkpoint.bin --out " +
                       dir.file("npu.onnx"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("float master weights, batch norm folded in"), std::string::npos) << r.out;
  EXPECT_EQ(read_onnx(dir.file("npu.onnx")).spec.layers.size(), 12u);
  expect_usage_error("export --checkpoint " + dir.file("npu.onnx") + " --out " + dir.file("x.onnx"),
                     "npu.onnx");
}

TEST_F(Cli, InfoNamesVersionKernelsAndCpu) {
  Result r = run("info");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("zotrain"), std::string::npos);
  EXPECT_NE(r.out.find("kernels"), std::string::npos);
  EXPECT_NE(r.out.find("npu int8 kernels"), std::string::npos);
  EXPECT_NE(r.out.find("depthwise staging = "), std::string::npos);
  EXPECT_NE(r.out.find("mpi: "), std::string::npos);
  EXPECT_NE(r.out.find("cpu"), std::string::npos);
}

TEST_F(Cli, TrainWritesOutputsAndEvalReproducesTheTestAccuracy) {
  Result r = run(train_args("run"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("epoch 1/1"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(dir.file("run") + "/metrics.jsonl").find("\"epoch\":1") != std::string::npos,
            true);
  expect_eval_reproduces("run");
}

TEST_F(Cli, FineTunesTheLastLayersOnAnInt8NpuAndEvalReproducesItsTestAccuracy) {
  ASSERT_EQ(run(train_args("pre") + " --method bp").code, 0);
  Result r = run(train_args("npu") + " --init " + dir.file("pre") +
                 "/checkpoint.bin --method zo --precision int8-npu --train-layers 2 "
                 "--cache-features 1 --q 2 --zo-lr 0.001");
  ASSERT_EQ(r.code, 0) << r.err;
  auto summary = nlohmann::json::parse(slurp(dir.file("npu") + "/summary.json"));
  EXPECT_GT(summary["feature_cache_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(summary["config"]["precision"], "int8-npu");
  // The checkpoint holds the program's scales and master weights: eval runs the same program.
  expect_eval_reproduces("npu");
  expect_usage_error(train_args("x") + " --method bp --precision int8-npu", "method");
  expect_usage_error(train_args("x") + " --train-layers 9", "--train-layers");
  expect_usage_error(train_args("x") + " --precision int4", "f32, int8 or int8-npu");
}

TEST_F(Cli, ConfigFileIsReadAndFlagsOverrideIt) {
  std::ofstream(dir.file("c.toml")) << "model = \"mlp:16\"\nepochs = 3\nlr = 0.01\n";
  Result r = run(train_args("run") + " --config " + dir.file("c.toml"));
  ASSERT_EQ(r.code, 0) << r.err;
  auto cfg = nlohmann::json::parse(slurp(dir.file("run") + "/summary.json"))["config"];
  EXPECT_EQ(cfg["model"], "mlp:16");
  EXPECT_EQ(cfg["epochs"], 1);  // the flag wins
  EXPECT_EQ(cfg["lr"], 0.01);
}

// A run starts from the defaults of its method and precision (chosen by a flag or the config
// file), says which in its first line and stores them resolved; keys and flags override them.
TEST_F(Cli, DefaultsFollowTheMethodAndPrecisionAndYieldToKeysAndFlags) {
  const auto config_of = [&](const std::string& out) {
    return nlohmann::json::parse(slurp(dir.file(out) + "/summary.json"))["config"];
  };
  Result bp = run(train_args("bp") + " --model mlp:16 --method bp");
  ASSERT_EQ(bp.code, 0) << bp.err;
  EXPECT_EQ(config_of("bp")["lr"], 0.01);
  EXPECT_NE(bp.out.find("defaults of bp f32: lr 0.01"), std::string::npos) << bp.out;
  ASSERT_EQ(run(train_args("bp-lr") + " --model mlp:16 --method bp --lr 0.03").code, 0);
  EXPECT_EQ(config_of("bp-lr")["lr"], 0.03);
  // The method from the file, the lr of its defaults; then the file's own zo_lr.
  std::ofstream(dir.file("zo.toml")) << "model = \"mlp:16\"\nmethod = \"zo\"\n";
  std::ofstream(dir.file("zo-lr.toml")) << "model = \"mlp:16\"\nmethod = \"zo\"\nzo_lr = 1e-4\n";
  ASSERT_EQ(run(train_args("zo") + " --config " + dir.file("zo.toml")).code, 0);
  EXPECT_EQ(config_of("zo")["zo_lr"], 1.5e-3);
  EXPECT_EQ(config_of("zo")["zo_layer_scale"], "cyclic");
  EXPECT_EQ(config_of("zo")["zo_activity"], true);
  EXPECT_EQ(config_of("zo")["zo_activity_lr"], 8e-3);
  ASSERT_EQ(run(train_args("zo-lr") + " --config " + dir.file("zo-lr.toml")).code, 0);
  EXPECT_EQ(config_of("zo-lr")["zo_lr"], 1e-4);
  // A default the user's keys rule out yields to them; the same key set by the user is refused.
  Result forward = run(train_args("zo-fwd") + " --model mlp:16 --method zo --estimator forward");
  ASSERT_EQ(forward.code, 0) << forward.err;
  EXPECT_EQ(config_of("zo-fwd")["zo_activity"], false);
  EXPECT_NE(forward.out.find("zo_activity true (this run: false)"), std::string::npos)
      << forward.out;
  EXPECT_EQ(config_of("zo-fwd")["zo_layer_scale"], "cyclic");
  expect_usage_error(train_args("x") + " --method zo --estimator forward --zo-activity 1",
                     "'zo_activity'");
  Result int8 = run(train_args("int8") + " --model mlp:16 --precision int8");
  ASSERT_EQ(int8.code, 0) << int8.err;
  EXPECT_EQ(config_of("int8")["int_eps"], 15);
  EXPECT_EQ(config_of("int8")["zo_layer_scale"], "cyclic");
  EXPECT_EQ(config_of("int8")["int_bn_divisor"], "fixed");
  EXPECT_NE(int8.out.find("defaults of elastic int8: bp_bits 5,5:4,8:3"), std::string::npos)
      << int8.out;
  // The main job's row: block-coordinate ZO at its tuned step, evaluated on the parameters'
  // average, and nothing else.
  TrainConfig elastic;
  elastic.zo_layer_scale = zo::LayerScale::kCyclic;
  elastic.zo_lr = 1.5e-3;
  elastic.ema_decay = 0.999;
  EXPECT_EQ(config_to_json(defaults_for(Method::kElastic, Precision::kF32)),
            config_to_json(elastic));
}

TEST_F(Cli, ResumeContinuesAndRefusesAChangedModel) {
  ASSERT_EQ(run(train_args("run")).code, 0);
  Result r = run("train --resume " + dir.file("run") + " --epochs 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("epoch 2/2"), std::string::npos) << r.out;
  expect_usage_error("train --resume " + dir.file("run") + " --model mlp", "--model");
}

// Crafted or misplaced inputs around a resume get a message of ours (issue 22, defects 10 and 11):
// a folder as a checkpoint ("basic_filebuf::underflow ... Is a directory"), counters out of range
// in a checkpoint with a valid checksum ("after epoch 1000 of 2", or an assertion for -5), and a
// metrics.jsonl line that is not one of ours ("[json.exception.type_error.306]").
TEST_F(Cli, ResumeRefusesCraftedStateAndSkipsForeignMetricsLines) {
  std::filesystem::create_directories(dir.file("folder"));
  expect_usage_error("eval --checkpoint " + dir.file("folder"), "not a regular file");
  expect_usage_error(train_args("x") + " --init " + dir.file("folder"), "not a regular file");
  ASSERT_EQ(run(train_args("run")).code, 0);
  std::ofstream(dir.file("run") + "/metrics.jsonl", std::ios::app) << "5\n";
  Result r = run("train --resume " + dir.file("run") + " --epochs 2");
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string ckpt = dir.file("run") + "/checkpoint.bin";
  for (int epochs_done : {1000, -5}) {
    TensorFile f = read_tensor_file(ckpt);
    nlohmann::json meta = nlohmann::json::parse(f.meta);
    meta["epochs_done"] = epochs_done;
    f.meta = meta.dump();
    write_tensor_file(dir.file("crafted.bin"), f);
    expect_usage_error("eval --checkpoint " + dir.file("crafted.bin"), "epochs_done");
  }
  // Normalizations no data has, and tensors no run writes: evaluated to garbage with exit 0.
  for (const auto& [key, value] : {std::pair{"norm_std", -1.0}, std::pair{"norm_mean", 1e30}}) {
    TensorFile f = read_tensor_file(ckpt);
    nlohmann::json meta = nlohmann::json::parse(f.meta);
    meta[key] = value;
    f.meta = meta.dump();
    write_tensor_file(dir.file("crafted.bin"), f);
    expect_usage_error("eval --checkpoint " + dir.file("crafted.bin"), "must be a normalization");
  }
  TensorFile nan = read_tensor_file(ckpt);
  nan.tensors[0].second[3] = std::numeric_limits<float>::quiet_NaN();
  write_tensor_file(dir.file("crafted.bin"), nan);
  expect_usage_error("eval --checkpoint " + dir.file("crafted.bin"),
                     "'" + nan.tensors[0].first + "' holds nan at element 3; expected finite");
  TensorFile twice = read_tensor_file(ckpt);
  twice.tensors.push_back(twice.tensors[0]);
  write_tensor_file(dir.file("crafted.bin"), twice);
  expect_usage_error("eval --checkpoint " + dir.file("crafted.bin"),
                     "'" + twice.tensors[0].first + "' appears twice");
}

TEST_F(Cli, MemoryPlanAgreesWithTheArenaOfARealRun) {
  for (const char* method : {"bp", "zo", "elastic --bp-layers 1", "elastic --bp-layers 3"}) {
    ASSERT_EQ(run(train_args("run") + " --overwrite 1 --method " + method).code, 0) << method;
    auto summary = nlohmann::json::parse(slurp(dir.file("run") + "/summary.json"));
    Result m = run(std::string("memory --json --batch 50 --method ") + method);
    ASSERT_EQ(m.code, 0) << m.err;
    auto plan = nlohmann::json::parse(m.out);
    EXPECT_EQ(plan["total_bytes"], summary["arena_bytes"]) << method;
    for (auto& [bucket, bytes] : summary["arena_bytes_by_bucket"].items())
      EXPECT_EQ(plan["buckets"][bucket], bytes) << method << " " << bucket;
  }
  // Full ZO < ElasticZO < Full BP, and the text report says so.
  Result t = run("memory --batch 256 --method elastic --bp-layers 2");
  ASSERT_EQ(t.code, 0);
  EXPECT_NE(t.out.find("over it"), std::string::npos) << t.out;
  auto e = nlohmann::json::parse(run("memory --json --batch 256 --method elastic").out);
  EXPECT_LT(e["full_zo_bytes"].get<int64_t>(), e["total_bytes"].get<int64_t>());
  EXPECT_LT(e["total_bytes"].get<int64_t>(), e["full_bp_bytes"].get<int64_t>());
  // int8-npu prints its own plan (the program's buffers), against f32's Full BP.
  auto n = nlohmann::json::parse(
      run("memory --json --batch 64 --method zo --precision int8-npu --train-layers 2").out);
  EXPECT_EQ(n["precision"], "int8-npu");
  EXPECT_EQ(n["full_bp_precision"], "f32");
  EXPECT_TRUE(std::any_of(n["rows"].begin(), n["rows"].end(), [](const nlohmann::json& r) {
    return r["buffer"].get<std::string>().starts_with("npu int8 weights");
  }));
}

TEST_F(Cli, MemoryComparesFineTuningWithFullZoAndBpOfTheSameFrozenLayers) {
  for (const char* method : {"zo", "elastic --bp-layers 1", "bp"}) {
    Result m = run(std::string("memory --json --batch 50 --train-layers 2 --method ") + method);
    ASSERT_EQ(m.code, 0) << method << ": " << m.err;
    auto plan = nlohmann::json::parse(m.out);
    EXPECT_LE(plan["full_zo_bytes"].get<int64_t>(), plan["total_bytes"].get<int64_t>()) << method;
    EXPECT_LE(plan["total_bytes"].get<int64_t>(), plan["full_bp_bytes"].get<int64_t>()) << method;
  }
}

TEST_F(Cli, MemoryBudgetChoosesTheHeadAndSaysWhich) {
  auto plan = [&](int bp) {
    return nlohmann::json::parse(
               run("memory --json --batch 50 --method elastic --bp-layers " + std::to_string(bp))
                   .out)["total_bytes"]
        .get<int64_t>();
  };
  Result r =
      run(train_args("run") + " --method elastic --memory-budget " + std::to_string(plan(3)));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("with 3 BP layer(s) (the most that fit --memory-budget)"), std::string::npos)
      << r.out;
  expect_usage_error(train_args("run") + " --method elastic --memory-budget 4096",
                     "too small even for Full ZO");
  expect_usage_error(train_args("run") + " --method bp --memory-budget 100000000", "memory_budget");
}

TEST_F(Cli, BenchTimesStepsOfEveryMethod) {
  for (const char* method : {"bp", "zo", "elastic"}) {
    Result r =
        run(std::string("bench --json --steps 3 --warmup 1 --batch 16 --q 2 --method ") + method);
    ASSERT_EQ(r.code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["method"], method);
    EXPECT_LE(j["ms_min"].get<double>(), j["ms_median"].get<double>());
    EXPECT_LE(j["ms_median"].get<double>(), j["ms_max"].get<double>());
    EXPECT_GT(j["forward_passes_per_s"].get<double>(), 0.0);
  }
  expect_usage_error("bench --steps 0", "--steps");
}

TEST_F(Cli, BadInputEndsWithExitCode2AndOneClearMessage) {
  expect_usage_error(train_args("run") + " --model resnet99", "resnet99");
  expect_usage_error("train --data no-such-set --out " + dir.file("x"), "no-such-set");
  expect_usage_error("train --data " + dir.file("nothing-here") + " --out " + dir.file("x"),
                     "nothing-here");
  std::ofstream(dir.file("bad.toml")) << "learning_rate = 0.1\n";
  expect_usage_error(train_args("run") + " --config " + dir.file("bad.toml"), "learning_rate");
  std::ofstream(dir.file("syntax.toml")) << "lr = = 3\n";
  expect_usage_error(train_args("run") + " --config " + dir.file("syntax.toml"), "syntax.toml");
  expect_usage_error(train_args("run") + " --batch 0", "batch");
  expect_usage_error(train_args("run") + " --epochs many", "--epochs");
  expect_usage_error("frobnicate", "frobnicate");
  // A checkpoint with a bad checksum, and a file that is no checkpoint.
  ASSERT_EQ(run(train_args("run")).code, 0);
  std::string ckpt = dir.file("run") + "/checkpoint.bin";
  std::string bytes = slurp(ckpt);
  bytes[bytes.size() / 2] ^= 1;
  std::ofstream(ckpt, std::ios::binary | std::ios::trunc) << bytes;
  expect_usage_error("eval --checkpoint " + ckpt, "checksum");
  expect_usage_error("eval --checkpoint " + dir.file("c.toml"), "c.toml");
  // Labels that do not match the images.
  std::string broken = dir.file("broken");
  test::write_synthetic_data(broken, 30, 10, 1);
  std::filesystem::copy_file(dir.file("data") + "/train-labels-idx1-ubyte",
                             broken + "/train-labels-idx1-ubyte",
                             std::filesystem::copy_options::overwrite_existing);
  expect_usage_error("train --data " + broken + " --out " + dir.file("x"),
                     "train-labels-idx1-ubyte");
}

// Numbers out of their key's range are refused by name (issue 22, defects 2 and 3): a config
// file's integer too large for its field (it wrapped: 2^32 + 1 epochs ran 1), a negative seed
// (it became 2^64 - 1), floats the f32 path would take as 0 or inf (NaN weights, no step), and
// counts whose products would overflow (q * q_alpha went negative and trained nothing).
TEST_F(Cli, NumbersOutOfRangeAreRefusedByName) {
  std::ofstream(dir.file("wrap.toml")) << "epochs = 4294967297\n";
  expect_usage_error(train_args("run") + " --config " + dir.file("wrap.toml"),
                     "'epochs' must be an integer in [-2147483648, 2147483647]");
  std::ofstream(dir.file("negative.toml")) << "epochs = -4294967295\n";
  expect_usage_error(train_args("run") + " --config " + dir.file("negative.toml"), "'epochs'");
  // A plan beyond the machine's memory, before anything is allocated (defect 7).
  expect_usage_error(train_args("run") + " --model mlp:16777216,16777216",
                     "more than this machine's");
  // Nesting toml11 would recurse on without bound (defect 1: a stack overflow at 10,000).
  std::ofstream(dir.file("deep.toml"))
      << "q = " << std::string(10000, '[') << std::string(10000, ']') << "\n";
  expect_usage_error(train_args("run") + " --config " + dir.file("deep.toml"),
                     "deep.toml: line 1: arrays or inline tables nested deeper than 32 levels");
  // Brackets in comments and strings are not nesting; three levels reach the key's own check.
  std::ofstream(dir.file("brackets.toml")) << "# " << std::string(100, '[') << "\nmodel = \"mlp:16 "
                                           << std::string(100, '[') << "\"\nq = [[[1]]]\n";
  expect_usage_error(train_args("run") + " --config " + dir.file("brackets.toml"),
                     "'q' must be an integer");
  std::ofstream(dir.file("seed.toml")) << "seed = -1\n";
  expect_usage_error(train_args("run") + " --config " + dir.file("seed.toml"), "'seed'");
  expect_usage_error(train_args("run") + " --seed -1", "--seed");
  expect_usage_error(train_args("run") + " --eps 1e-300", "'eps'");
  expect_usage_error(train_args("run") + " --eps inf", "'eps'");
  expect_usage_error(train_args("run") + " --zo-lr 1e300", "'zo_lr'");
  expect_usage_error(train_args("run") + " --lr nan", "'lr'");
  const std::string plain = "train --data " + dir.file("data") + " --out " + dir.file("run");
  expect_usage_error(plain + " --epochs 2000000", "'epochs'");
  expect_usage_error(plain + " --batch 9223372036854775807", "'batch'");
  expect_usage_error(train_args("run") + " --q-schedule qscheduler --q0 2 --q-alpha 2147483647",
                     "'q_alpha'");
  expect_usage_error(train_args("run") + " --q-schedule qscheduler --q0 2000000000", "'q0");
}

// Threads past 4 per core only wait (issue 22, defect 12: --threads 256 on 2 cores took 6.5 s
// for a 0.09 s run): the run takes at most that many and says so; results do not change.
TEST_F(Cli, ThreadsAreCappedAtFourPerCore) {
  const int cap = 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cap >= 256) GTEST_SKIP() << "this machine has 64 cores or more";
  Result r = run(train_args("many") + " --threads 256");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(std::to_string(cap) + " thread(s) (--threads capped at 4 per core)"),
            std::string::npos)
      << r.out;
  ASSERT_EQ(run(train_args("one") + " --threads 1").code, 0);
  auto metrics = [&](const std::string& out) {
    std::string all, line;
    std::istringstream lines(slurp(dir.file(out) + "/metrics.jsonl"));
    while (std::getline(lines, line)) {
      auto j = nlohmann::json::parse(line);
      j.erase("seconds"), j.erase("peak_rss_bytes"), j.erase("arena_bytes");
      all += j.dump();
    }
    return all;
  };
  EXPECT_EQ(metrics("many"), metrics("one"));
}

// A write that fails ends the run with a message naming the file (issue 22, defect 4): with
// metrics.jsonl a folder the run exited 0 with no metrics and a final accuracy of 0.
TEST_F(Cli, UnwritableOutputsEndTheRunNamingTheFile) {
  std::filesystem::create_directories(dir.file("run") + "/metrics.jsonl");
  Result r = run(train_args("run"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("metrics.jsonl: could not write"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("run") + "/summary.json"));
}

// One run per output folder (issue 22, defect 6): two runs on one --out both exited 0 with
// their metrics interleaved, and a new run silently replaced another's results.
TEST_F(Cli, OneRunPerOutputFolder) {
  ASSERT_EQ(run(train_args("run")).code, 0);
  const std::string first = slurp(dir.file("run") + "/metrics.jsonl");
  expect_usage_error(train_args("run"), "holds another run's results");
  expect_usage_error(train_args("run"), "--resume " + dir.file("run"));
  EXPECT_EQ(slurp(dir.file("run") + "/metrics.jsonl"), first);  // untouched
  Result again = run(train_args("run") + " --overwrite 1 --seed 3");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(slurp(dir.file("run") + "/metrics.jsonl"), first);
  // --resume continues the run in its folder.
  Result resumed = run("train --resume " + dir.file("run") + " --epochs 2");
  EXPECT_EQ(resumed.code, 0) << resumed.err;

  // A folder another process holds is refused before anything is written in it.
  std::filesystem::create_directories(dir.file("held"));
  const int fd = ::open((dir.file("held") + "/.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  expect_usage_error(train_args("held"), "is in use by another zotrain run");
  expect_usage_error("train --resume " + dir.file("run") + " --epochs 3 --out " + dir.file("held"),
                     "is in use by another zotrain run");
  EXPECT_FALSE(std::filesystem::exists(dir.file("held") + "/metrics.jsonl"));
  ::close(fd);
  EXPECT_EQ(run(train_args("held")).code, 0);
}

TEST_F(Cli, MakeDataWritesTheStandin) {
  ZT_REQUIRE_HDF5();
  const std::string out = dir.file("standin");
  Result r = run("make-data modelnet40-standin --out " + out +
                 " --train-per-class 2 --test-per-class 1 --points 16 --seed 3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("20 training and 10 test clouds of 16 points"), std::string::npos) << r.out;
  for (const char* f : {"train_files.txt", "test_files.txt", "shape_names.txt",
                        "ply_data_train0.h5", "ply_data_test0.h5"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  expect_usage_error("make-data modelnet41", "unknown generated data set 'modelnet41'");
  expect_usage_error("make-data modelnet40-standin --out " + dir.file("x") + " --points 0",
                     "points is 0");
}

}  // namespace
}  // namespace zotrain
