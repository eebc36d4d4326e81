// The thread count of a series of like runs (a training's steps), chosen by their measured
// times. Where another process keeps a core busy, a team of threads waits at every parallel
// loop for the one that shares that core, and fewer threads are faster (docs/training.md,
// "Threads on a busy machine"); no reading of the machine's load says by how much, so the
// governor measures. It starts at a count the caller guesses (the cores that look free);
// now and then it tries one thread fewer or more for a few runs and moves when they were
// clearly faster on average (the mean, not the least: beside a busy process most runs of a
// team wait, a few do not). Trials cost: beside a busy loop one run of two threads took
// 85-210 ms where one thread took 1.6. So a failed trial waits twice as many runs for the
// next, and as long as fifty times what it lost; one run three times slower than the
// current count's ends a trial; and trials wait until the machine's load calls for them: a
// free core for more threads, a busy one among this count's for fewer. The kernels give the same
// bits at every thread count (tests/unit/runtime/thread_invariance_test.cc), so the choice changes
// the time of a run, never its results.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace ytape {

class ThreadGovernor {
 public:
  /// Counts from 1 to `most` (at least 1), starting at `start` (clamped to them).
  /// `free_cores`, where given, says how many cores look free for this process's threads
  /// now (its own threads not counted busy); trials wait until it calls for one.
  ThreadGovernor(int most, int start, std::function<int()> free_cores = {});

  /// The thread count for the next run; sets it (set_num_threads).
  int next();
  /// Reports the time of the run that next() prepared.
  void done(double seconds);
  /// The count it runs at, trials aside.
  int current() const { return current_; }
  /// How many times it has moved to another count, and how many trials it has made.
  int64_t moves() const { return moves_; }
  int64_t trials() const { return trials_; }

  static constexpr int kWindow = 8;         ///< runs that make a count's recent time
  static constexpr int kTrialRuns = 4;      ///< runs of a trial, the first not counted
  static constexpr int64_t kFirstWait = 4;  ///< runs at a count before its first trial
  static constexpr int64_t kLongestWait = 1024;
  static constexpr double kCostRatio = 50;     ///< time between trials per second a trial lost
  static constexpr double kCheckEvery = 0.02;  ///< seconds of runs between looks at the load

 private:
  // A count's last kWindow times (or fewer), whose mean is its time now.
  struct Recent {
    std::array<double, kWindow> times{};
    int filled = 0, at = 0;
    void add(double t);
    double mean() const;
  };
  void start_trial_if_due();
  void end_trial(bool faster);
  Recent& recent(int count) { return recent_[static_cast<size_t>(count)]; }

  int most_, current_, trial_ = 0;  // trial_: the count on trial, 0 when none
  int trial_runs_ = 0;
  bool trial_up_ = false;  // the direction of the last trial
  int64_t since_trial_ = 0, wait_ = kFirstWait, moves_ = 0, trials_ = 0;
  double since_seconds_ = 0, lost_ = 0;  // since the last trial; what it lost
  double pause_ = 0;                     // seconds of runs before the next look at the load
  std::vector<Recent> recent_;           // by count
  std::function<int()> free_cores_;
};

}  // namespace ytape
