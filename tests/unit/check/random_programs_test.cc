// Random-program differential tests: programs of the model language drawn by
// check/random_program.h are run by the interpreter and traced, and the tape is checked
// against the interpreter's value, against itself after opt, and against finite
// differences. YTAPE_RANDOM_PROGRAMS sets how many and YTAPE_RANDOM_FIRST the first seed
// (scripts/soak.sh runs many more than the default).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "check/gradcheck.h"
#include "check/random_program.h"
#include "opt/optimize.h"
#include "runtime/executor.h"
#include "tape/validate.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape::check {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

}  // namespace

TEST_CASE("random programs: the traced tape computes what the interpreter computes") {
  const int count = env_int("YTAPE_RANDOM_PROGRAMS", 300);
  const int first_seed = env_int("YTAPE_RANDOM_FIRST", 1);
  for (int seed = first_seed; seed < first_seed + count; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    std::string program = random_program([&rng](uint64_t n) { return rng() % n; });
    CAPTURE(program);

    // The program is valid: it runs, and f(x) is a Float64 number.
    tracer::Program in;
    in.run_text("random.jl", program);
    tracer::Value direct = in.eval_text("f(x)");
    REQUIRE(direct.kind == tracer::VKind::float_);

    // Its tape gives the same number, also after opt, bit for bit.
    tracer::Traced traced = tracer::trace(in, "f", {"x"});
    REQUIRE_NOTHROW(validate(traced.tape));
    std::vector<Tensor> out = Executor(traced.tape).run(traced.inputs);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].type() == Type{DType::f64, {}});
    double y = out[0].data<double>()[0];
    CHECK(std::abs(y - direct.f) <= 1e-12 * (1 + std::abs(direct.f)));
    std::vector<Tensor> opt_out = Executor(optimize(traced.tape)).run(traced.inputs);
    CHECK(same_bits(opt_out, out));

    // Its gradient matches central differences.
    GradcheckOptions options;
    options.seed = static_cast<uint64_t>(seed);
    GradcheckResult r = gradcheck(traced.tape, traced.inputs, options);
    CHECK_MESSAGE(r.ok, gradcheck_table(r));
  }
  MESSAGE(count << " random programs");
}

}  // namespace ytape::check
