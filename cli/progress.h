// A progress line on standard error for long work.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace ytape::cli {

/// One line on standard error, redrawn in place as work advances. It appears only when
/// standard error is a terminal and the work has run for over a second (short commands and
/// logs stay clean), is redrawn at most ten times a second, and is erased by done() or the
/// destructor, so the command's own output follows on a clean line.
class Progress {
 public:
  Progress();
  ~Progress() { done(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Shows `text` (one line, no newline) if the line is due.
  void update(std::string_view text);
  /// Erases the line, if one was shown.
  void done();

 private:
  using Clock = std::chrono::steady_clock;
  bool terminal_ = false;
  bool shown_ = false;
  Clock::time_point start_, last_;
};

}  // namespace ytape::cli
