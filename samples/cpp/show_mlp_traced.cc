// Prints the tape of the C++-traced MLP (samples/cpp/mlp_traced.cc) as `ytape show` does.
// usage: mlp_traced [BATCH]
#include <fmt/format.h>

#include <cstdlib>

#include "samples/cpp/mlp_traced.h"
#include "tape/error.h"
#include "tape/print.h"

int main(int argc, char** argv) {
  int64_t batch = argc > 1 ? std::atoll(argv[1]) : 32;
  try {
    fmt::print("{}", ytape::print_tape(ytape::samples::mlp_traced(batch)));
  } catch (const ytape::UserError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  return 0;
}
