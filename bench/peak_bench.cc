// The machine's f32 FMA peak, the ceiling that kernel and training-step figures are stated
// against: independent chains of fused multiply-adds in registers, for each instruction set
// the processor has (chosen at run time), on 1..N threads.
//
//   bench_peak [--threads N] [--json]
//
// --json prints one object: {"cpu": ..., "threads": N, "avx512": GFLOP/s, "avx2": GFLOP/s}
// (an instruction set the processor lacks is absent), which bench/compare_torch.py reads.
#include <fmt/format.h>
#include <immintrin.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kIterations = 100'000'000;
constexpr int kChains = 12;  // enough independent FMAs to cover the latency of two ports

// kChains independent accumulators of `V`, each updated by one FMA per iteration. A macro,
// not a template: each body must be compiled inside its function's target attribute.
#define YTAPE_FMA_CHAINS(V, fma, set1)                         \
  V b = set1(1.0000001f), c = set1(1e-7f);                     \
  V a[kChains];                                                \
  for (V & v : a) v = b;                                       \
  for (long n = 0; n < kIterations; ++n) {                     \
    _Pragma("GCC unroll 12") for (V & v : a) v = fma(v, b, c); \
  }                                                            \
  float sink = 0;                                              \
  for (V & v : a) sink += v[0];                                \
  return sink;

__attribute__((target("avx512f"))) float run512() {
  YTAPE_FMA_CHAINS(__m512, _mm512_fmadd_ps, _mm512_set1_ps)
}
__attribute__((target("avx2,fma"))) float run256() {
  YTAPE_FMA_CHAINS(__m256, _mm256_fmadd_ps, _mm256_set1_ps)
}

// GFLOP/s of `kernel` (lanes f32 lanes per FMA) run on `threads` threads at once.
double measure(float (*kernel)(), int lanes, int threads) {
  std::vector<std::thread> pool;
  std::vector<float> sinks(static_cast<size_t>(threads));
  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sinks[t] = kernel(); });
  for (std::thread& t : pool) t.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return 2.0 * lanes * kChains * kIterations * threads / seconds * 1e-9;
}

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--json") {
      json = true;
    } else {
      fmt::print(stderr, "usage: bench_peak [--threads N] [--json]\n");
      return 2;
    }
  }
  __builtin_cpu_init();
  struct Isa {
    const char* name;
    bool present;
    float (*kernel)();
    int lanes;
  } isas[] = {{"avx512", __builtin_cpu_supports("avx512f") != 0, run512, 16},
              {"avx2", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), run256, 8}};
  std::string fields;
  if (!json) fmt::print("f32 FMA peak on {}\n", cpu_name());
  for (const Isa& isa : isas) {
    if (!isa.present) continue;
    // The best of three: a neighbour's burst can only lower a figure.
    double best = 0;
    for (int r = 0; r < 3; ++r) best = std::max(best, measure(isa.kernel, isa.lanes, threads));
    if (json) {
      fields += fmt::format(", \"{}\": {:.1f}", isa.name, best);
    } else {
      fmt::print("{:<7} {} threads: {:.0f} GFLOP/s\n", isa.name, threads, best);
    }
  }
  if (json) fmt::print("{{\"cpu\": \"{}\", \"threads\": {}{}}}\n", cpu_name(), threads, fields);
  return 0;
}
