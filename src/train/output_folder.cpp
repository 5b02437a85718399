#include "output_folder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "zotrain/core/error.h"

namespace zotrain {

namespace {

// Removes checkpoint.bin.tmp.<pid> files of processes that no longer exist: a run killed
// mid-write left them forever.
void remove_stale_temp_files(const std::string& out) {
  const std::string prefix = "checkpoint.bin.tmp.";
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      std::filesystem::remove(entry.path());
  }
}

}  // namespace

OutputFolder::OutputFolder(const std::string& path) : path_(path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw InputError("output folder " + path + ": cannot create it (" + ec.message() + ")");
  const std::string lock = path + "/.lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw InputError("output folder " + path + ": cannot write in it (" + lock + ": " +
                     std::strerror(errno) + ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw InputError("output folder " + path +
                     (err == EWOULDBLOCK
                          ? " is in use by another zotrain run (" + lock +
                                " is locked); give each run a folder of its own"
                          : ": cannot lock " + lock + " (" + std::strerror(err) + ")"));
  }
  remove_stale_temp_files(path);
}

OutputFolder::~OutputFolder() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

constexpr const char* kResults[] = {"checkpoint.bin", "metrics.jsonl", "summary.json"};

void OutputFolder::require_no_results() const {
  for (const char* name : kResults) {
    const std::string file = path_ + "/" + name;
    if (std::filesystem::is_regular_file(file))
      throw InputError("output folder " + path_ + " holds another run's results (" + file +
                       "): a new run would replace them. Continue that run with --resume " + path_ +
                       ", choose another --out, or pass --overwrite 1");
  }
}

void OutputFolder::remove_results() const {
  for (const char* name : kResults)
    if (std::filesystem::is_regular_file(path_ + "/" + name))
      std::filesystem::remove(path_ + "/" + name);
}

}  // namespace zotrain
