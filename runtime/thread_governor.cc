#include "runtime/thread_governor.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "runtime/parallel.h"

namespace ytape {

void ThreadGovernor::Recent::add(double t) {
  times[static_cast<size_t>(at)] = t;
  at = (at + 1) % kWindow;
  filled = std::min(filled + 1, kWindow);
}

double ThreadGovernor::Recent::mean() const {
  double sum = 0;
  for (int i = 0; i < filled; ++i) sum += times[static_cast<size_t>(i)];
  return filled > 0 ? sum / filled : std::numeric_limits<double>::infinity();
}

ThreadGovernor::ThreadGovernor(int most, int start, std::function<int()> free_cores)
    : most_(std::max(most, 1)),
      current_(std::clamp(start, 1, most_)),
      recent_(static_cast<size_t>(most_) + 1),
      free_cores_(std::move(free_cores)) {}

// Starts a trial (sets trial_) where one is due.
void ThreadGovernor::start_trial_if_due() {
  if (most_ == 1 || since_trial_ < wait_ || since_seconds_ < std::max(kCostRatio * lost_, pause_) ||
      recent(current_).filled < kTrialRuns) {
    return;
  }
  // More threads where a core looks free for them, fewer where this count's cores do not
  // all look free (on an idle machine no trial costs anything); else ask again after
  // kCheckEvery seconds of runs. Without a reading, alternate where both are open.
  bool up = current_ == 1 || (current_ < most_ && !trial_up_);
  if (free_cores_) {
    const int free = free_cores_();
    if ((free > current_ && current_ < most_) || (free < current_ && current_ > 1)) {
      up = free > current_;
    } else {
      since_trial_ = 0;
      since_seconds_ = 0;
      lost_ = 0;
      pause_ = kCheckEvery;
      return;
    }
  }
  trial_ = up ? current_ + 1 : current_ - 1;
  trial_up_ = up;
  trial_runs_ = 0;
  recent(trial_) = Recent{};
  ++trials_;
}

int ThreadGovernor::next() {
  if (trial_ == 0) start_trial_if_due();
  int count = trial_ != 0 ? trial_ : current_;
  set_num_threads(count);
  return count;
}

void ThreadGovernor::done(double seconds) {
  const double now = recent(current_).mean();
  if (trial_ == 0) {
    recent(current_).add(seconds);
    ++since_trial_;
    since_seconds_ += seconds;
    return;
  }
  lost_ += std::max(seconds - now, 0.0);
  if (seconds > 3 * now) return end_trial(false);
  // A trial's first run builds the kernels for its count (oneDNN's per thread count) and
  // finds the other count's threads still waiting: the runs after it count.
  if (trial_runs_++ == 0) return;
  Recent& tried = recent(trial_);
  tried.add(seconds);
  // Clearly faster, so that noise does not move it back and forth.
  if (trial_runs_ == kTrialRuns) end_trial(tried.mean() < 0.85 * now);
}

void ThreadGovernor::end_trial(bool faster) {
  if (faster) {
    current_ = trial_;
    ++moves_;
    lost_ = 0;
  }
  wait_ = faster ? kFirstWait : std::min(2 * wait_, kLongestWait);
  pause_ = 0;
  since_trial_ = 0;
  since_seconds_ = 0;
  trial_ = 0;
}

}  // namespace ytape
