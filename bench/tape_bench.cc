// Tape stages at scale: build, write JSON, read JSON, validate and copy tapes of 10^4,
// 10^5 and 10^6 scalar ops, reporting time per op; every stage must be linear.
//
// usage: bench_tape [max_ops]   (default 1000000)
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "io/json.h"
#include "samples/cpp/models.h"
#include "tape/allocator.h"
#include "tape/builder.h"
#include "tape/validate.h"

using namespace ytape;

namespace {

double seconds(const std::function<void()>& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();  // as the CLI does
  int64_t max_ops = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const char* stages[] = {"build", "write", "read", "validate", "copy"};
  fmt::print("{:>9} {:>10} {:>10} {:>10} {:>10} {:>10}   (ns per op; JSON MB)\n", "ops", stages[0],
             stages[1], stages[2], stages[3], stages[4]);
  std::vector<std::vector<double>> per_op;
  for (int64_t n = 10000; n <= max_ops; n *= 10) {
    Tape t, back, copy;
    std::string json;
    double s[5] = {seconds([&] { t = samples::scalar_chain(n); }),
                   seconds([&] { json = write_tape_json(t); }),
                   seconds([&] { back = read_tape_json(json, "bench"); }),
                   seconds([&] { validate(back); }), seconds([&] { copy = copy_tape(back); })};
    if (write_tape_json(copy) != json) {
      fmt::print(stderr, "round trip changed the tape\n");
      return 1;
    }
    std::vector<double> ns;
    for (double x : s) ns.push_back(x * 1e9 / static_cast<double>(n));
    fmt::print("{:>9} {:>10.0f} {:>10.0f} {:>10.0f} {:>10.0f} {:>10.0f}   {:.1f}\n", n, ns[0],
               ns[1], ns[2], ns[3], ns[4], json.size() / 1e6);
    per_op.push_back(ns);
  }
  if (per_op.size() >= 2) {
    const auto& big = per_op.back();
    const auto& small = per_op[per_op.size() - 2];
    fmt::print("\nlinearity (time per op at the largest size / at a tenth of it; goal <= 1.3):\n");
    for (int i = 0; i < 5; ++i) fmt::print("  {:<9} {:.2f}\n", stages[i], big[i] / small[i]);
  }
  return 0;
}
