// The ring allreduce's latency and bandwidth between the ranks it runs on, for the cost
// model of docs/distributed.md: allreduces of f32 buffers from 4 B to 64 MB on the step's
// channel (as batch norm's statistics and the loss travel), the best of RUNS each, the
// slowest rank's time. Prints a line per size on rank 0, then α (one ring step's latency:
// the smallest size's time over its 2(N-1) steps) and β (bytes a second between
// neighbours: from the slope of the time over the sizes of 1 MB and more, which carry
// 2(N-1)/N of the buffer each way).
//   mpirun -np 2 build/release/bench/bench_comm [RUNS]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "cli/mpi.h"
#include "runtime/comm.h"

namespace {

using ytape::Communicator;
using ytape::DType;
using ytape::Reduction;

// The slowest rank's best time of `runs` allreduces of `count` floats, in seconds.
double time_allreduce(Communicator& comm, int64_t count, int runs) {
  std::vector<float> data(static_cast<size_t>(std::max<int64_t>(count, 1)), 1.0f);
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    int64_t ready = 0;  // every rank starts together
    comm.allreduce(&ready, 1, DType::i64, Reduction::sum);
    const auto start = std::chrono::steady_clock::now();
    comm.allreduce(data.data(), count, DType::f32, Reduction::sum);
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  comm.allreduce(&best, 1, DType::f64, Reduction::max);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  Communicator comm(ytape::cli::mpi_world(std::chrono::seconds(60)));
  const int n = comm.size();
  if (n < 2) {
    fmt::print(stderr, "bench_comm: run it under mpirun -np 2 or more\n");
    return 2;
  }
  if (comm.rank() == 0) fmt::print("ring allreduce over {} ranks, best of {} runs\n", n, runs);
  std::vector<double> sizes, times;
  double smallest = 0;
  for (int64_t bytes = 4; bytes <= (int64_t{64} << 20); bytes *= 4) {
    const double t = time_allreduce(comm, bytes / 4, bytes >= (int64_t{16} << 20) ? 5 : runs);
    if (bytes == 4) smallest = t;
    if (bytes >= (int64_t{1} << 20))
      sizes.push_back(static_cast<double>(bytes)), times.push_back(t);
    if (comm.rank() == 0) {
      fmt::print("{:>10} B  {:>10.1f} us  {:>8.2f} GB/s\n", bytes, t * 1e6,
                 2.0 * (n - 1) / n * static_cast<double>(bytes) / t / 1e9);
    }
  }
  // Least squares of time over size: the slope is 2(N-1)/N / β.
  double ms = 0, mt = 0, sst = 0, ss = 0;
  for (size_t i = 0; i < sizes.size(); ++i) ms += sizes[i], mt += times[i];
  ms /= static_cast<double>(sizes.size()), mt /= static_cast<double>(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    sst += (sizes[i] - ms) * (times[i] - mt), ss += (sizes[i] - ms) * (sizes[i] - ms);
  }
  const double beta = 2.0 * (n - 1) / n / (sst / ss);
  if (comm.rank() == 0) {
    fmt::print("alpha {:.1f} us a ring step, beta {:.2f} GB/s\n", smallest / (2.0 * (n - 1)) * 1e6,
               beta / 1e9);
  }
  return 0;
}
