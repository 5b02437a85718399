// The processes of a distributed run (MPI's world), or this process alone. A distributed ZO run
// exchanges only what its ranks need to take the same step: loss values, the rows of a batch's
// outputs, integer ranges and gradients (docs/distributed.md). Every collective here is
// deterministic: what a rank receives depends on the ranks' data, never on the network's order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zotrain::dist {

class World {
 public:
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool distributed() const { return size_ > 1; }

  // Concatenates each rank's `counts[r]` bytes in rank order into `all` (every rank gets all).
  void allgather(const void* mine, const std::vector<size_t>& counts, void* all);
  // Element-wise sums over the ranks, in place: exact for integers, whatever the order.
  void sum(int64_t* values, size_t n);
  // The largest of the ranks' values.
  int max(int value);
  // `root`'s bytes to every rank.
  void broadcast(void* data, size_t bytes, int root);
  // Stops every rank with exit code `code` (a rank that has failed while others wait).
  [[noreturn]] void abort(int code);

  // Bytes this rank has sent, as ring algorithms send them: (N−1)/N of an all-gather's or a
  // broadcast's payload, 2(N−1)/N of an all-reduce's. The model docs/distributed.md compares
  // with data-parallel backprop's ring all-reduce.
  uint64_t bytes_sent() const { return bytes_sent_; }

  // Where the library was built without MPI: a distributed run is refused with this message.
  static bool has_mpi();

 private:
  friend void init(int* argc, char*** argv);
  friend void finalize();
  void count(size_t payload, int times) {
    if (size_ > 1)
      bytes_sent_ += payload * static_cast<uint64_t>(times) * static_cast<uint64_t>(size_ - 1) /
                     static_cast<uint64_t>(size_);
  }
  int rank_ = 0, size_ = 1;
  bool mpi_ = false;
  uint64_t bytes_sent_ = 0;
};

// This process's world: one rank until init() has joined an MPI launch.
World& world();
// Joins the MPI world when the process was started by mpirun (and MPI is built in); else the
// world stays this process alone. Call once, first thing in main().
void init(int* argc, char*** argv);
// Leaves the MPI world (no-op without one).
void finalize();

// Whether this process was started by an MPI launcher (its environment says so).
bool launched_by_mpirun();

}  // namespace zotrain::dist
