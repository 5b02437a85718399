// The output folder of one run, held for the run's life: created, locked (flock on
// <out>/.lock, which the kernel drops when the process ends, however it ends), cleared of the
// temporary checkpoints of killed runs and, for a new run, checked to hold no other run's
// results. Two runs never write one folder (issue 22, defect 6).
#pragma once

#include <string>

namespace zotrain {

class OutputFolder {
 public:
  // InputError when the folder cannot be written or another process holds it.
  explicit OutputFolder(const std::string& path);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  // InputError naming the file when the folder holds a run's results (checkpoint.bin,
  // metrics.jsonl, summary.json): a new run would replace them.
  void require_no_results() const;
  // Deletes them (--overwrite 1): a crash before the new run's first checkpoint must not leave
  // the old results beside the new metrics.
  void remove_results() const;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace zotrain
