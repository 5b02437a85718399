// Helpers for the data tests: small generated IDX files, including broken ones.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/idx.h"
#include "zotrain/core/error.h"
#include "zotrain/data/registry.h"

namespace zotrain::test {

// Writes `bytes` as they are, or gzip-compressed: for broken files write_idx cannot make.
inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes,
                        bool gzip = false) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    if (!bytes.empty()) {
      ASSERT_EQ(gzwrite(f, bytes.data(), unsigned(bytes.size())), int(bytes.size()));
    }
    ASSERT_EQ(gzclose(f), Z_OK);
  } else {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    ASSERT_TRUE(out.good()) << path;
  }
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// An IDX header: magic 0, 0, type, dims count, then the dims big-endian.
inline std::vector<uint8_t> idx_header(uint8_t type, const std::vector<uint32_t>& dims) {
  std::vector<uint8_t> h = {0, 0, type, uint8_t(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) h.push_back(uint8_t(d >> s));
  return h;
}

// n images of h x w (h * w >= 3) whose first three pixels spell the example's index, so tests can
// tell examples apart after shuffling; the other pixels are a pattern of the index.
inline IdxArray make_images(int64_t n, int64_t h, int64_t w) {
  IdxArray a{{n, h, w}, std::vector<uint8_t>(size_t(n * h * w))};
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* p = a.data.data() + i * h * w;
    p[0] = uint8_t(i), p[1] = uint8_t(i >> 8), p[2] = uint8_t(i >> 16);
    for (int64_t k = 3; k < h * w; ++k) p[k] = uint8_t(i * 7 + k * 13);
  }
  return a;
}
inline int64_t example_id(const uint8_t* item) {
  return item[0] | item[1] << 8 | item[2] << 16;
}

// The id of every example of a data set in order, given `id_of(i)`, the id of example i.
template <class IdOf>
std::vector<int64_t> ids_of(int64_t n, IdOf id_of) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(id_of(i));
  return out;
}

// Labels i % classes.
inline IdxArray make_labels(int64_t n, int classes) {
  IdxArray a{{n}, std::vector<uint8_t>(size_t(n))};
  for (int64_t i = 0; i < n; ++i) a.data[size_t(i)] = uint8_t(i % classes);
  return a;
}

// A folder like data/mnist/: the four IDX files with 4x4 images and 10 classes.
inline void write_data_folder(const std::filesystem::path& dir, int64_t n_train, int64_t n_test,
                              bool gzip = false) {
  std::filesystem::create_directories(dir);
  const std::string gz = gzip ? ".gz" : "";
  write_idx((dir / ("train-images-idx3-ubyte" + gz)).string(), make_images(n_train, 4, 4), gzip);
  write_idx((dir / ("train-labels-idx1-ubyte" + gz)).string(), make_labels(n_train, 10), gzip);
  write_idx((dir / ("t10k-images-idx3-ubyte" + gz)).string(), make_images(n_test, 4, 4), gzip);
  write_idx((dir / ("t10k-labels-idx1-ubyte" + gz)).string(), make_labels(n_test, 10), gzip);
}

// Split options for load_data and load_point_data.
inline DataOptions data_options(int64_t val_size, uint64_t seed, int64_t train_limit = 0) {
  DataOptions o;
  o.val_size = val_size;
  o.seed = seed;
  o.train_limit = train_limit;
  return o;
}

// Sets an environment variable for the object's lifetime, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The message of the InputError `f` throws; a test failure if it throws nothing or another type.
inline std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected InputError, nothing was thrown";
  return "";
}

}  // namespace zotrain::test
