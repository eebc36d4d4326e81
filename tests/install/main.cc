// Uses the installed library as docs/cpp-api.md shows: traces loss(x, w) = sum(w .* x .* x) / 2
// with the C++ tracing API, differentiates and optimizes the tape, and runs it. Prints the
// loss and gradients; exits 1 if they are not the known values.
#include <fmt/ranges.h>

#include <algorithm>
#include <span>
#include <vector>

#include "grad/grad.h"
#include "opt/optimize.h"
#include "runtime/executor.h"
#include "tape/error.h"
#include "tracer/cpp_api.h"

using namespace ytape;

namespace {

Tensor vector_of(std::vector<double> values) {
  Tensor t({DType::f64, {static_cast<int64_t>(values.size())}});
  std::copy(values.begin(), values.end(), t.data<double>());
  return t;
}

bool expect(const Tensor& got, std::vector<double> want, const char* name) {
  std::span<const double> values = got.span<double>();
  fmt::print("{} = [{}]\n", name, fmt::join(values, ", "));
  return std::vector<double>(values.begin(), values.end()) == want;
}

}  // namespace

int main() {
  try {
    cpp::Tracer t("loss");
    cpp::Traced x = t.input("x", {DType::f64, {3}});
    cpp::Traced w = t.input("w", {DType::f64, {3}});
    t.output(sum(w * x * x) / 2.0, "loss");
    Tape gradient = optimize(grad::gradient(t.finish()));  // loss, grad.x, grad.w

    Executor executor(gradient);
    std::vector<Tensor> out =
        executor.run({{"x", vector_of({1, 2, 3})}, {"w", vector_of({0.5, -1, 2})}});
    // loss = (0.5 - 4 + 18) / 2; grad.x = w .* x; grad.w = x .* x / 2.
    bool ok = expect(out[0], {7.25}, "loss") & expect(out[1], {0.5, -2, 6}, "grad.x") &
              expect(out[2], {0.5, 2, 4.5}, "grad.w");
    return ok ? 0 : 1;
  } catch (const UserError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
