// The driver: passes by name, to a fixed point, deterministic and idempotent.
#include "opt/optimize.h"

#include <doctest/doctest.h>

#include "helpers.h"
#include "io/json.h"
#include "tape/error.h"

namespace ytape::passes_test {

namespace {

// loss = sum((1 * sin(x)) + sin(x) * (2 + 3)), with a dead cos(x) and a reshape there and
// back: every pass has work, and each pass's work makes work for another.
Tape busy_tape() {
  Builder b("busy");
  Var x = b.input("x", f32({4}));
  Var one = b.constant(DType::f32, 1.0);
  Var s1 = b.sin(x);
  Var scaled = b.mul(one, s1);
  Var s2 = b.sin(x);
  Var two = b.constant(DType::f32, 2.0);
  Var three = b.constant(DType::f32, 3.0);
  Var five = b.add(two, three);
  Var term = b.mul(s2, five);
  b.cos(x);
  Var there = b.reshape(b.add(scaled, term), {.shape = {2, 2}});
  Var back = b.reshape(there, {.shape = {4}});
  b.output(b.sum(back, {.dims = {1}}), "loss");
  return b.finish();
}

}  // namespace

TEST_CASE("optimize runs every pass to a fixed point") {
  std::vector<PassRun> log;
  Tape t = optimize(busy_tape(), {}, &log);
  validate(t);
  CHECK(print_tape(t) ==
        "tape busy\n"
        "  in  %1::f32[4] x\n"
        "  %2 = sin(%1)::f32[4]\n"
        "  %3 = const(5.0)::f32[]\n"
        "  %4 = mul(%2, %3)::f32[4]\n"
        "  %5 = add(%2, %4)::f32[4]\n"
        "  %6 = sum(%5; dims=[1])::f32[]\n"
        "  out %6 loss\n");
  // A fixed point: no pass changes the result.
  for (const PassInfo& pass : all_passes()) CHECK(pass.run(t).changed == 0);
  CHECK(log.front().ops_before == busy_tape().num_ops());
  CHECK(log.back().ops_after == t.num_ops());
}

TEST_CASE("optimize is idempotent and deterministic") {
  Tape once = optimize(busy_tape());
  std::vector<PassRun> log;
  Tape twice = optimize(once, {}, &log);
  CHECK(write_tape_json(twice) == write_tape_json(once));
  CHECK(log.size() == all_passes().size());
  CHECK(write_tape_json(optimize(busy_tape())) == write_tape_json(once));
}

TEST_CASE("optimize runs only the passes named, in their order") {
  std::vector<PassRun> log;
  Tape t = optimize(busy_tape(), {{"dce"}}, &log);
  REQUIRE(log.size() == 1);  // dce is idempotent: no second run to see that
  CHECK(log[0].pass == "dce");
  CHECK(log[0].changed == 1);
  CHECK(t.num_ops() == busy_tape().num_ops() - 1);
  log.clear();
  optimize(busy_tape(), {{"cse", "dce"}}, &log);
  REQUIRE(log.size() >= 2);
  CHECK(log[0].pass == "cse");
  CHECK(log[1].pass == "dce");
}

TEST_CASE("an unknown pass name is an error listing the passes") {
  CHECK_THROWS_WITH_AS(optimize(busy_tape(), {{"dce", "inlin"}}),
                       "unknown pass 'inlin' (the passes: fold, simplify, cse, dce, inline, "
                       "hoist); did you mean 'inline'?",
                       UserError);
}

TEST_CASE("optimize runs a pass that is not idempotent again on its own result") {
  std::vector<PassRun> log;
  optimize(busy_tape(), {{"simplify"}}, &log);
  REQUIRE(log.size() == 2);
  CHECK(log[0].changed == 2);
  CHECK(log[1].changed == 0);
}

TEST_CASE("optimize stops after max_rounds rounds") {
  std::vector<PassRun> log;
  optimize(busy_tape(), {{"simplify", "dce"}, 1}, &log);
  CHECK(log.size() == 2);
}

}  // namespace ytape::passes_test
