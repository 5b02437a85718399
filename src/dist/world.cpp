#include "zotrain/dist/world.h"

#include <cstdlib>
#include <cstring>

#ifdef ZOTRAIN_WITH_MPI
#include <mpi.h>
#endif

#include "zotrain/core/error.h"

namespace zotrain::dist {

World& world() {
  static World w;
  return w;
}

bool World::has_mpi() {
#ifdef ZOTRAIN_WITH_MPI
  return true;
#else
  return false;
#endif
}

bool launched_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

#ifdef ZOTRAIN_WITH_MPI

namespace {

// Large payloads go in pieces whose counts fit MPI's int.
constexpr size_t kMaxPiece = size_t{1} << 30;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw RuntimeError(std::string("MPI ") + what + " failed: " + std::string(msg, len));
}

}  // namespace

void init(int* argc, char*** argv) {
  World& w = world();
  if (w.mpi_ || !launched_by_mpirun()) return;
  int provided = 0;
  // Only the main thread calls MPI; the thread pool's workers never do.
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "init");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  w.mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size_);
}

void finalize() {
  World& w = world();
  if (!w.mpi_) return;
  MPI_Finalize();
  w.mpi_ = false;
}

void World::allgather(const void* mine, const std::vector<size_t>& counts, void* all) {
  size_t total = 0;
  for (size_t c : counts) total += c;
  if (!mpi_) {
    if (total) std::memcpy(all, mine, total);
    return;
  }
  count(total, 1);
  if (total > kMaxPiece) {  // rare: one broadcast per rank, in order
    char* out = static_cast<char*>(all);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) std::memcpy(out, mine, counts[r]);
      for (size_t off = 0; off < counts[r]; off += kMaxPiece)
        check(MPI_Bcast(out + off, static_cast<int>(std::min(kMaxPiece, counts[r] - off)), MPI_BYTE,
                        r, MPI_COMM_WORLD),
              "broadcast");
      out += counts[r];
    }
    return;
  }
  std::vector<int> n(size_), at(size_);
  size_t offset = 0;
  for (int r = 0; r < size_; ++r) {
    n[r] = static_cast<int>(counts[r]);
    at[r] = static_cast<int>(offset);
    offset += counts[r];
  }
  check(
      MPI_Allgatherv(mine, n[rank_], MPI_BYTE, all, n.data(), at.data(), MPI_BYTE, MPI_COMM_WORLD),
      "all-gather");
}

void World::sum(int64_t* values, size_t n) {
  if (!mpi_ || n == 0) return;
  count(n * sizeof(int64_t), 2);
  for (size_t off = 0; off < n; off += kMaxPiece / sizeof(int64_t))
    check(MPI_Allreduce(MPI_IN_PLACE, values + off,
                        static_cast<int>(std::min(kMaxPiece / sizeof(int64_t), n - off)),
                        MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD),
          "all-reduce");
}

int World::max(int value) {
  if (!mpi_) return value;
  count(sizeof(int), 2);
  check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "all-reduce");
  return value;
}

void World::broadcast(void* data, size_t bytes, int root) {
  if (!mpi_ || bytes == 0) return;
  count(bytes, 1);
  for (size_t off = 0; off < bytes; off += kMaxPiece)
    check(MPI_Bcast(static_cast<char*>(data) + off,
                    static_cast<int>(std::min(kMaxPiece, bytes - off)), MPI_BYTE, root,
                    MPI_COMM_WORLD),
          "broadcast");
}

void World::abort(int code) {
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

#else  // one process

void init(int*, char***) {}
void finalize() {}

void World::allgather(const void* mine, const std::vector<size_t>& counts, void* all) {
  if (!counts.empty() && counts[0]) std::memcpy(all, mine, counts[0]);
}
void World::sum(int64_t*, size_t) {}
int World::max(int value) {
  return value;
}
void World::broadcast(void*, size_t, int) {}
void World::abort(int code) {
  std::exit(code);
}

#endif

}  // namespace zotrain::dist
