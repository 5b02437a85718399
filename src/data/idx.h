// The IDX file format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/): a 4-byte
// magic (0, 0, type, number of dims), one big-endian uint32 per dim, then the data, row-major.
// Files may be raw or gzip-compressed; both are read transparently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zotrain {

// An IDX array of unsigned bytes (type code 0x08), the only type the data sets we read use.
struct IdxArray {
  std::vector<int64_t> dims;  // outermost first, e.g. {60000, 28, 28}
  std::vector<uint8_t> data;  // product(dims) bytes, row-major
};

// Reads an IDX file, raw or gzip. Throws InputError naming the file for anything wrong with it:
// missing, shorter than its header, bad magic, a type other than 0x08, a bad number of dims, data
// shorter or longer than the dims say, or a corrupt gzip stream.
IdxArray read_idx(const std::string& path);

// Writes `a` as an IDX file, gzip-compressed if `gzip`. Throws RuntimeError if the file cannot be
// written; `a` must be consistent (1 to 4 dims, data size equal to their product).
void write_idx(const std::string& path, const IdxArray& a, bool gzip);

}  // namespace zotrain
