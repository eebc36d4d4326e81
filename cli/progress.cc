#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace ytape::cli {

Progress::Progress() : terminal_(isatty(STDERR_FILENO) == 1), start_(Clock::now()), last_(start_) {}

void Progress::update(std::string_view text) {
  if (!terminal_) return;
  Clock::time_point now = Clock::now();
  if (now - start_ < std::chrono::seconds(1) ||
      (shown_ && now - last_ < std::chrono::milliseconds(100))) {
    return;
  }
  // \r returns to the line's start; \x1b[K clears what a longer earlier line left.
  fmt::print(stderr, "\r{}\x1b[K", text);
  std::fflush(stderr);
  shown_ = true;
  last_ = now;
}

void Progress::done() {
  if (!shown_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace ytape::cli
