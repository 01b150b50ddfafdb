// The metrics file: one JSON object per line for every step and every
// evaluation, flushed as it is written so that a crash or a reader tailing
// the file loses nothing.
#pragma once

#include <cstdio>
#include <string>

#include "kiln/kiln.h"

namespace kiln::train {

class MetricsLog {
 public:
  // No file: writing does nothing. Otherwise the file is created (or
  // emptied) now; one that cannot be opened fails naming it.
  explicit MetricsLog(const char* path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  void write(const kiln_step_metrics& m);
  void write(const kiln_eval_metrics& m);

 private:
  void write_line(const std::string& line);

  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace kiln::train
