#include "zotrain/core/tensor_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "zotrain/core/error.h"

namespace zotrain {

namespace {

constexpr char kMagic[8] = {'Z', 'O', 'T', 'R', 'A', 'I', 'N', '\0'};
constexpr uint32_t kVersion = 1;

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// Reads from a byte range, throwing an InputError naming the file when it runs out.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : s_(bytes), path_(path) {}
  template <typename T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  const char* take(size_t n) {
    if (n > s_.size() - pos_) throw InputError(path_ + ": truncated (expected more data)");
    const char* p = s_.data() + pos_;
    pos_ += n;
    return p;
  }
  bool done() const { return pos_ == s_.size(); }

 private:
  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
};

uint32_t crc32_of(const char* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), chunk);
    data += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

const Tensor* TensorFile::find(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

const Tensor& TensorFile::get(const std::string& name, const Shape& expected,
                              const std::string& path) const {
  const Tensor* t = find(name);
  if (!t) throw InputError(path + ": tensor '" + name + "' is missing");
  if (t->shape() != expected)
    throw InputError(path + ": tensor '" + name + "' has shape " + t->shape().str() +
                     ", expected " + expected.str());
  return *t;
}

void write_tensor_file(const std::string& path, const TensorFile& file) {
  std::string out(kMagic, sizeof(kMagic));
  put<uint32_t>(out, kVersion);
  put<uint64_t>(out, file.meta.size());
  out += file.meta;
  put<uint32_t>(out, static_cast<uint32_t>(file.tensors.size()));
  for (const auto& [name, t] : file.tensors) {
    put<uint32_t>(out, static_cast<uint32_t>(name.size()));
    out += name;
    put<uint32_t>(out, static_cast<uint32_t>(t.shape().rank));
    for (int i = 0; i < t.shape().rank; ++i) put<int64_t>(out, t.shape()[i]);
    out.append(reinterpret_cast<const char*>(t.data()), t.bytes());
  }
  put<uint32_t>(out, crc32_of(out.data(), out.size()));
  write_file_atomically(path, out);
}

void write_file_atomically(const std::string& path, const std::string& out) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw RuntimeError(tmp + ": cannot create: " + std::strerror(errno));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::write(fd, out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw RuntimeError(tmp + ": write failed: " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw RuntimeError(tmp + ": fsync/close failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw RuntimeError(path + ": rename failed: " + std::strerror(errno));
  }
  // Make the rename itself durable.
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

TensorFile read_tensor_file(const std::string& path) {
  // A folder opens as a stream and fails on the first read with the library's own words; a
  // FIFO or a device would be read without end.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw InputError(path +
                     ": not a regular file (a folder, a FIFO or a device); expected a "
                     "zotrain model or checkpoint file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open (no such file or not readable)");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(kMagic) + 4 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw InputError(path + ": not a zotrain model or checkpoint file (bad magic)");
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  if (crc32_of(bytes.data(), bytes.size() - 4) != stored)
    throw InputError(path + ": checksum mismatch (the file is corrupt or truncated)");
  std::string body = bytes.substr(0, bytes.size() - 4);
  Reader r(body, path);
  r.take(sizeof(kMagic));
  uint32_t version = r.get<uint32_t>();
  if (version != kVersion)
    throw InputError(path + ": format version " + std::to_string(version) + ", expected " +
                     std::to_string(kVersion));
  TensorFile file;
  uint64_t meta_len = r.get<uint64_t>();
  file.meta.assign(r.take(meta_len), meta_len);
  uint32_t count = r.get<uint32_t>();
  for (uint32_t k = 0; k < count; ++k) {
    uint32_t name_len = r.get<uint32_t>();
    std::string name(r.take(name_len), name_len);
    uint32_t rank = r.get<uint32_t>();
    if (rank < 1 || rank > Shape::kMaxDims)
      throw InputError(path + ": tensor '" + name + "' has rank " + std::to_string(rank) +
                       ", expected 1 to 4");
    Shape shape;
    uint64_t numel = 1;
    for (uint32_t i = 0; i < rank; ++i) {
      int64_t d = r.get<int64_t>();
      // Bounded by the file size, so the product cannot overflow.
      if (d < 0 || static_cast<uint64_t>(d) > body.size())
        throw InputError(path + ": tensor '" + name + "' has invalid dimension " +
                         std::to_string(d));
      numel *= static_cast<uint64_t>(d);
      if (numel > body.size())
        throw InputError(path + ": tensor '" + name + "' is larger than the file");
      shape[shape.rank++] = d;
    }
    const char* src = r.take(numel * sizeof(float));
    // Two tensors of one name: the first won silently (issue 22, defect 10).
    if (file.find(name))
      throw InputError(path + ": tensor '" + name + "' appears twice; names must be unique");
    Tensor t = Tensor::zeros(shape);
    std::memcpy(t.data(), src, t.bytes());
    // Stored values are results, and every result is finite (a crafted NaN evaluated to garbage).
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!std::isfinite(t[i]))
        throw InputError(path + ": tensor '" + name + "' holds " + std::to_string(t[i]) +
                         " at element " + std::to_string(i) + "; expected finite numbers");
    file.tensors.emplace_back(std::move(name), std::move(t));
  }
  if (!r.done()) throw InputError(path + ": unexpected trailing data");
  return file;
}

}  // namespace zotrain
