// The thread governor on simulated step times: each count's time is given, the governor's
// choices are checked (no clock is read).
#include "runtime/thread_governor.h"

#include <doctest/doctest.h>

#include <functional>

#include "runtime/parallel.h"

namespace ytape {

namespace {

struct Outcome {
  int final_count = 0;
  double seconds = 0;  // all runs
  int64_t trials = 0, moves = 0;
};

// Runs `runs` runs whose time at count c in run i is time(i, c).
Outcome simulate(ThreadGovernor& g, int64_t runs, const std::function<double(int64_t, int)>& time) {
  const int saved = num_threads();
  Outcome o;
  for (int64_t i = 0; i < runs; ++i) {
    int c = g.next();
    CHECK(num_threads() == c);
    double t = time(i, c);
    o.seconds += t;
    g.done(t);
  }
  o.final_count = g.current();
  o.trials = g.trials();
  o.moves = g.moves();
  set_num_threads(saved);
  return o;
}

}  // namespace

TEST_CASE("on an idle machine the governor keeps the faster count, trying the other rarely") {
  auto time = [](int64_t, int c) { return c == 2 ? 1.1e-3 : 1.6e-3; };
  // The load shows every core free: no trial at all.
  ThreadGovernor looking(2, 2, [] { return 2; });
  Outcome o = simulate(looking, 5000, time);
  CHECK(o.final_count == 2);
  CHECK(o.trials == 0);
  // Without a reading of the load: trials of one thread, each failed one waiting twice as
  // long as the last (4, 8, ..., 1024 runs).
  ThreadGovernor blind(2, 2);
  o = simulate(blind, 5000, time);
  CHECK(o.final_count == 2);
  CHECK(o.moves == 0);
  CHECK(o.trials <= 12);
  CHECK(o.seconds < 1.01 * 5000 * 1.1e-3);
}

TEST_CASE("beside a busy process the governor moves to fewer threads, and back when it ends") {
  // Runs of two threads take 10 ms while another process is busy (the first 300 runs).
  int free = 1;
  ThreadGovernor g(2, 2, [&] { return free; });
  auto time = [&](int64_t i, int c) {
    free = i < 300 ? 1 : 2;
    if (c == 1) return 1.6e-3;
    return i < 300 ? 10e-3 : 1.1e-3;
  };
  Outcome busy = simulate(g, 300, time);
  CHECK(busy.final_count == 1);
  CHECK(busy.moves == 1);
  CHECK(busy.seconds < 300 * 1.6e-3 + 10 * 10e-3);  // a few slow runs before the move
  Outcome after = simulate(g, 3000, [&](int64_t i, int c) { return time(i + 300, c); });
  CHECK(after.final_count == 2);
  CHECK(after.moves == 2);  // down, then up
}

TEST_CASE("no trial of more threads while no core is free for them") {
  ThreadGovernor g(4, 1, [] { return 1; });
  Outcome o = simulate(g, 2000, [](int64_t, int c) { return 1e-3 / c; });
  CHECK(o.final_count == 1);
  CHECK(o.trials == 0);
}

TEST_CASE("a trial that loses much makes the next wait in proportion") {
  // A core looks free, but two threads take 200 ms: after the first trial, the next waits
  // fifty times the 0.2 s it lost, past the end of this run.
  ThreadGovernor g(2, 1, [] { return 2; });
  Outcome o = simulate(g, 2000, [](int64_t, int c) { return c == 1 ? 1.6e-3 : 0.2; });
  CHECK(o.final_count == 1);
  CHECK(o.trials == 1);
  CHECK(o.seconds < 1.1 * 2000 * 1.6e-3);
}

TEST_CASE("the governor stays within its counts") {
  ThreadGovernor one(1, 3);
  CHECK(one.current() == 1);
  Outcome o = simulate(one, 100, [](int64_t, int) { return 1e-3; });
  CHECK(o.trials == 0);
  ThreadGovernor g(3, 0);
  CHECK(g.current() == 1);
  // Each extra thread halves the time: it climbs to 3 and stays.
  o = simulate(g, 3000, [](int64_t, int c) { return 1e-3 / c; });
  CHECK(o.final_count == 3);
  CHECK(o.moves == 2);
}

}  // namespace ytape
