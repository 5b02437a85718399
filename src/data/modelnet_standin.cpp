#include "data/modelnet_standin.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>

#include "data/point_h5.h"
#include "data/point_transforms.h"
#include "zotrain/core/error.h"
#include "zotrain/data/dataset.h"
#include "zotrain/data/point_cloud.h"

namespace zotrain {
namespace fs = std::filesystem;
namespace {

constexpr float kTwoPi = 2 * std::numbers::pi_v<float>;
// Streams of the per-cloud generators and of the order of each split.
constexpr uint64_t kTrainCloudTag = 0x53544E5452000000ull;  // "STNTR"
constexpr uint64_t kTestCloudTag = 0x53544E5445000000ull;   // "STNTE"

struct P3 {
  float x, y, z;
};

// A uniform point on the unit sphere.
P3 on_sphere(Rng& rng) {
  const float y = rng.uniform(-1, 1), a = rng.uniform(0, kTwoPi), r = std::sqrt(1 - y * y);
  return {r * std::cos(a), y, r * std::sin(a)};
}

// A uniform point of the disk of radius `radius` in the plane y = `y`.
P3 on_disk(Rng& rng, float radius, float y) {
  const float r = radius * std::sqrt(rng.uniform()), a = rng.uniform(0, kTwoPi);
  return {r * std::cos(a), y, r * std::sin(a)};
}

// A uniform point of the triangle abc.
P3 on_triangle(Rng& rng, P3 a, P3 b, P3 c) {
  float u = rng.uniform(), v = rng.uniform();
  if (u + v > 1) u = 1 - u, v = 1 - v;
  return {a.x + u * (b.x - a.x) + v * (c.x - a.x), a.y + u * (b.y - a.y) + v * (c.y - a.y),
          a.z + u * (b.z - a.z) + v * (c.z - a.z)};
}

// One surface point of each class, in about [-1, 1]^3 with y up. Where a shape has parts of
// different areas, parts are chosen in proportion to their area.
P3 surface_point(int cls, Rng& rng) {
  switch (cls) {
    case 0:  // sphere
      return on_sphere(rng);
    case 1: {  // box: a face, then a point on it
      const uint32_t f = rng.below(6);
      const float s = f % 2 ? 1.0f : -1.0f, u = rng.uniform(-1, 1), v = rng.uniform(-1, 1);
      if (f < 2) return {s, u, v};
      if (f < 4) return {u, s, v};
      return {u, v, s};
    }
    case 2: {  // cylinder of radius 1, height 2: side 4 pi, caps 2 pi
      if (rng.uniform() < 2.0f / 3) {
        const float a = rng.uniform(0, kTwoPi);
        return {std::cos(a), rng.uniform(-1, 1), std::sin(a)};
      }
      return on_disk(rng, 1, rng.uniform() < 0.5f ? -1.0f : 1.0f);
    }
    case 3: {  // cone: apex at y = 1, base of radius 1 at y = -1; side pi sqrt(5), base pi
      if (rng.uniform() < 1 / (1 + std::sqrt(5.0f))) return on_disk(rng, 1, -1);
      const float t = std::sqrt(rng.uniform()), a = rng.uniform(0, kTwoPi);
      return {t * std::cos(a), 1 - 2 * t, t * std::sin(a)};
    }
    case 4: {  // torus lying flat: tube radius 0.35 around a circle of radius 1
      const float a = rng.uniform(0, kTwoPi), b = rng.uniform(0, kTwoPi);
      const float r = 1 + 0.35f * std::cos(b);
      return {r * std::cos(a), 0.35f * std::sin(b), r * std::sin(a)};
    }
    case 5:  // plane: a flat square sheet
      return {rng.uniform(-1, 1), 0, rng.uniform(-1, 1)};
    case 6: {  // pyramid: square base at y = -1, apex at y = 1
      const P3 apex{0, 1, 0}, c[4] = {{-1, -1, -1}, {1, -1, -1}, {1, -1, 1}, {-1, -1, 1}};
      const uint32_t f = rng.below(5);
      if (f == 4) return {rng.uniform(-1, 1), -1, rng.uniform(-1, 1)};
      return on_triangle(rng, apex, c[f], c[(f + 1) % 4]);
    }
    case 7: {  // bowl: the lower half of a sphere, open at the top
      P3 p = on_sphere(rng);
      p.y = -std::abs(p.y);
      return p;
    }
    case 8: {  // helix: a thin tube along three turns rising from y = -1 to 1
      const float t = rng.uniform(), a = 3 * kTwoPi * t;
      const P3 off = on_sphere(rng);
      return {std::cos(a) + 0.1f * off.x, 2 * t - 1 + 0.1f * off.y, std::sin(a) + 0.1f * off.z};
    }
    default: {  // table: a square top at y = 0.6 on four legs
      if (rng.uniform() < 0.6f) return {rng.uniform(-1, 1), 0.6f, rng.uniform(-1, 1)};
      const uint32_t leg = rng.below(4);
      return {leg % 2 ? 0.85f : -0.85f, rng.uniform(-1, 0.6f), leg / 2 ? 0.85f : -0.85f};
    }
  }
}

// Writes `lines` one per line.
void write_lines(const fs::path& path, const std::vector<std::string>& lines) {
  std::ofstream out(path);
  for (const auto& l : lines) out << l << '\n';
  if (!out.good()) throw RuntimeError(path.string() + ": cannot be written");
}

// One split: per_class clouds of every class in a seeded order, in files of clouds_per_file.
std::vector<std::string> write_split(const fs::path& dir, const std::string& split,
                                     int64_t per_class, uint64_t tag, const StandinOptions& o) {
  const auto classes = static_cast<int64_t>(standin_class_names().size());
  const int64_t n = per_class * classes;
  Rng order_rng(o.seed, tag);
  const std::vector<int64_t> order = random_permutation(n, order_rng);
  std::vector<std::string> files;
  for (int64_t first = 0; first < n; first += o.clouds_per_file) {
    PointCloudSet part;
    part.points_per_cloud = o.points;
    const int64_t count = std::min(o.clouds_per_file, n - first);
    part.points.resize(static_cast<size_t>(count * part.cloud_numel()));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t j = order[first + i];  // cloud j is of class j % classes
      Rng rng(o.seed, tag + 1 + static_cast<uint64_t>(j));
      sample_standin_cloud(static_cast<int>(j % classes), rng, part.cloud(i), o.points);
      part.labels.push_back(static_cast<uint8_t>(j % classes));
    }
    files.push_back("ply_data_" + split + std::to_string(files.size()) + ".h5");
    write_point_h5((dir / files.back()).string(), part);
  }
  return files;
}

}  // namespace

const std::vector<std::string>& standin_class_names() {
  static const std::vector<std::string> names = {"sphere", "box",     "cylinder", "cone",  "torus",
                                                 "plane",  "pyramid", "bowl",     "helix", "table"};
  return names;
}

void sample_standin_cloud(int cls, Rng& rng, float* out, int64_t points) {
  const float ax = rng.uniform(0.7f, 1.3f), ay = rng.uniform(0.7f, 1.3f),
              az = rng.uniform(0.7f, 1.3f);
  for (int64_t i = 0; i < points; ++i) {
    const P3 p = surface_point(cls, rng);
    out[i * 3] = ax * p.x, out[i * 3 + 1] = ay * p.y, out[i * 3 + 2] = az * p.z;
  }
  // ModelNet40's files hold clouds already scaled into the unit sphere.
  normalize_unit_sphere(out, points);
  jitter_points(out, points, rng.uniform(0.005f, 0.02f), 1, rng);
}

void write_modelnet40_standin(const std::string& dir, const StandinOptions& o) {
  const std::pair<const char*, int64_t> counts[] = {{"train_per_class", o.train_per_class},
                                                    {"test_per_class", o.test_per_class},
                                                    {"points", o.points},
                                                    {"clouds_per_file", o.clouds_per_file}};
  // Bounded so that nothing it allocates (a split's order, one file's clouds) can exhaust the
  // memory (issue 22, defect 7: --train-per-class 100000000).
  constexpr int64_t kMaxCount = int64_t{1} << 20;
  for (const auto& [name, value] : counts)
    if (value < 1 || value > kMaxCount)
      throw InputError(std::string("stand-in option ") + name + " is " + std::to_string(value) +
                       "; expected 1 to " + std::to_string(kMaxCount));
  if (o.clouds_per_file * o.points > kMaxCount * 64)
    throw InputError("stand-in options clouds_per_file " + std::to_string(o.clouds_per_file) +
                     " x points " + std::to_string(o.points) + " exceed " +
                     std::to_string(kMaxCount * 64) + " points per file");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeError(dir + ": cannot create the folder: " + ec.message());
  write_lines(fs::path(dir) / "train_files.txt",
              write_split(dir, "train", o.train_per_class, kTrainCloudTag, o));
  write_lines(fs::path(dir) / "test_files.txt",
              write_split(dir, "test", o.test_per_class, kTestCloudTag, o));
  write_lines(fs::path(dir) / "shape_names.txt", standin_class_names());
}

}  // namespace zotrain
