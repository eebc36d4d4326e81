#include "runtime/executor.h"

#include <doctest/doctest.h>

#include <cmath>

#include "runtime/inputs.h"
#include "tape/builder.h"
#include "tape/error.h"
#include "unit/runtime/kernel_harness.h"

using namespace ytape;
using namespace ytape::testing;

namespace {

Type f32(Shape s) {
  return Type{DType::f32, std::move(s)};
}

// z = relu(x * y) + sin(x * y); w = sum(z): fan-out, an elementwise chain, a reduction.
Tape sample() {
  Builder b("f");
  Var x = b.input("x", f32({4}));
  Var y = b.input("y", f32({4}));
  Var m = b.mul(x, y);
  Var z = b.add(b.relu(m), b.sin(m));
  b.output(z, "z");
  b.output(b.sum(z, {.dims = {1}}), "w");
  return b.finish();
}

std::vector<double> expected_z(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> z;
  for (size_t i = 0; i < x.size(); ++i) {
    double m = static_cast<double>(static_cast<float>(x[i]) * static_cast<float>(y[i]));
    z.push_back(std::max(m, 0.0) + std::sin(m));
  }
  return z;
}

}  // namespace

TEST_CASE("the executor runs a tape and returns its outputs in order") {
  Tape t = sample();
  Executor ex(t);
  std::vector<double> x = {1, -2, 3, 0.5}, y = {2, 2, -1, 4};
  std::vector<Tensor> outs =
      ex.run({{"x", make_tensor(f32({4}), x)}, {"y", make_tensor(f32({4}), y)}});
  REQUIRE(outs.size() == 2);
  std::vector<double> z = expected_z(x, y);
  check_close(outs[0], z, 1e-6, 1e-6);
  check_close(outs[1], {z[0] + z[1] + z[2] + z[3]}, 1e-6, 1e-6);
}

TEST_CASE("ops that neither an output nor an effect needs get no step") {
  Builder b("dead");
  Var x = b.input("x", f32({4}));
  Var unread = b.exp(b.sin(x));  // a chain nothing reads
  (void)unread;
  Var idx = b.constant(DType::i64, 9, {1});  // out of range: it would fail if it ran
  (void)b.gather(x, idx, {.dim = 1});
  b.print({b.neg(x)}, {.format = "kept {}"});  // an effect and what it reads
  b.output(b.cos(x), "y");
  Tape t = b.finish();
  Executor ex(t);
  std::vector<std::string_view> ran;
  for (const Plan::Step& s : ex.plan().steps) ran.push_back(prim_name(s.op->prim));
  CHECK(ran == std::vector<std::string_view>{"neg", "print", "cos"});
  check_close(ex.run({{"x", make_tensor(f32({4}), {0, 1, 2, 3})}})[0],
              {1, std::cos(1.0f), std::cos(2.0f), std::cos(3.0f)}, 1e-6, 1e-6);
}

TEST_CASE("outputs of one run survive the next") {
  Tape t = sample();
  Executor ex(t);
  std::vector<double> x = {1, 2, 3, 4}, y = {1, 1, 1, 1};
  Tensor first = ex.run({{"x", make_tensor(f32({4}), x)}, {"y", make_tensor(f32({4}), y)}})[0];
  ex.run({{"x", make_tensor(f32({4}), {9, 9, 9, 9})}, {"y", make_tensor(f32({4}), y)}});
  check_close(first, expected_z(x, y), 1e-6, 1e-6);
}

TEST_CASE("an output dropped by the caller keeps its buffer for the next run") {
  Tape t = sample();
  Executor ex(t);
  std::vector<double> x = {1, 2, 3, 4}, y = {1, 1, 1, 1};
  TensorMap inputs{{"x", make_tensor(f32({4}), x)}, {"y", make_tensor(f32({4}), y)}};
  const void* first = ex.run(inputs)[0].raw();  // the outputs are dropped here
  std::vector<Tensor> kept = ex.run(inputs);
  CHECK(kept[0].raw() == first);
  std::vector<Tensor> next = ex.run(inputs);  // `kept` still holds the last buffers
  CHECK(next[0].raw() != kept[0].raw());
  check_close(next[0], expected_z(x, y), 1e-6, 1e-6);
}

TEST_CASE("a value reshaped into an output is written in the output's buffer") {
  // m = x * y, read only by the reshape that makes it the output r: no slot and no copy.
  Builder b("f");
  Var x = b.input("x", f32({4}));
  Var y = b.input("y", f32({4}));
  Var m = b.mul(x, y);
  b.output(b.reshape(b.reshape(m, {.shape = {4, 1}}), {.shape = {2, 2}}), "r");
  Var n = b.mul(x, x);
  b.output(b.sum(n, {.dims = {1}}), "n");
  b.output(b.reshape(n, {.shape = {2, 2}}), "n2");  // n is read twice: a slot of its own
  Tape t = b.finish();
  Executor ex(t);
  CHECK(ex.plan().output_views.size() == 2);  // m and its first reshape
  CHECK(ex.plan().slot_of[m.id] == Plan::kNoSlot);
  CHECK(ex.plan().slot_of[n.id] != Plan::kNoSlot);
  std::vector<double> x0 = {1, 2, 3, 4}, y0 = {2, 2, 2, 2};
  std::vector<Tensor> first =
      ex.run({{"x", make_tensor(f32({4}), x0)}, {"y", make_tensor(f32({4}), y0)}});
  std::vector<Tensor> second =
      ex.run({{"x", make_tensor(f32({4}), y0)}, {"y", make_tensor(f32({4}), y0)}});
  CHECK(first[0].raw() != second[0].raw());  // the first run's outputs are still held
  check_equal(first[0], {2, 4, 6, 8});
  check_equal(first[1], {30});
  check_equal(first[2], {1, 4, 9, 16});
  check_equal(second[0], {4, 4, 4, 4});
  first.clear(), second.clear();  // dropped: the next run writes in a recycled buffer
  std::vector<Tensor> third =
      ex.run({{"x", make_tensor(f32({4}), x0)}, {"y", make_tensor(f32({4}), x0)}});
  check_equal(third[0], {1, 4, 9, 16});
}

TEST_CASE("a loop that keeps each run's outputs until the next alternates two buffers") {
  // A training step feeds its outputs back as inputs: x' = relu(x * y) + sin(x * y).
  Tape t = sample();
  Executor ex(t);
  std::vector<double> y = {1, 0.5, -1, 2};
  std::vector<Tensor> inputs{make_tensor(f32({4}), {1, 2, 3, 4}), make_tensor(f32({4}), y)};
  std::vector<Tensor> outs;
  std::vector<const void*> buffers;
  std::vector<double> want = to_doubles(inputs[0]);
  for (int step = 0; step < 5; ++step) {
    ex.run(inputs, outs);
    want = expected_z(want, y);
    check_close(outs[0], want, 1e-5, 1e-5);
    buffers.push_back(outs[0].raw());
    inputs[0] = outs[0];
  }
  CHECK(buffers[2] == buffers[0]);
  CHECK(buffers[3] == buffers[1]);
  CHECK(buffers[4] == buffers[0]);
  CHECK(buffers[1] != buffers[0]);
}

TEST_CASE("inputs given in order are checked as those given by name") {
  Tape t = sample();
  Executor ex(t);
  std::vector<Tensor> outs;
  Tensor x = make_tensor(f32({4}), {1, 2, 3, 4});
  CHECK_THROWS_WITH_AS(ex.run(std::vector<Tensor>{x}, outs), "1 inputs given, but tape f has 2",
                       UserError);
  CHECK_THROWS_WITH_AS(ex.run(std::vector<Tensor>{x, make_tensor(f32({2}), {1, 2})}, outs),
                       "input 'y' is f32[2], but the tape declares f32[4]", UserError);
}

TEST_CASE("buffers are reused by liveness, in place for elementwise ops") {
  // A chain of 50 elementwise ops on 1000 floats needs two buffers at most, not 50.
  Builder b("chain");
  Var v = b.input("x", f32({1000}));
  for (int i = 0; i < 25; ++i) v = b.tanh(b.relu(b.add(v, v)));
  b.output(b.sum(v, {.dims = {1}}), "s");
  Tape t = b.finish();
  Executor ex(t);
  CHECK(ex.plan().planned_bytes() <= 2 * 4000);
  Tensor x = random_tensor(f32({1000}), 7);
  double want = 0;
  for (double e : to_doubles(x)) {
    float f = static_cast<float>(e);
    for (int i = 0; i < 25; ++i) f = std::tanh(std::max(f + f, 0.0f));
    want += f;
  }
  check_close(ex.run({{"x", x}})[0], {want}, 1e-5, 1e-5);
}

// Every pair of values live at the same step lies apart in the plan's arena (but an output
// written over its argument, in the same slot); returns the most bytes live at a step.
int64_t check_arena(const Plan& p) {
  const Tape& t = *p.tape;
  std::vector<size_t> def(t.types.size(), SIZE_MAX), last(t.types.size(), 0);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    for (Var o : p.outs(p.steps[s])) def[o.id] = last[o.id] = s;
  }
  for (size_t s = 0; s < p.steps.size(); ++s) {
    for (Var a : p.args(p.steps[s])) last[a.id] = std::max(last[a.id], s);
  }
  std::vector<uint32_t> held;  // vars with a slot
  for (uint32_t v = 0; v < t.types.size(); ++v) {
    if (def[v] != SIZE_MAX && p.slot_of[v] != Plan::kNoSlot) held.push_back(v);
  }
  auto bytes = [&](uint32_t v) { return t.types[v].size() * dtype_size(t.types[v].dtype); };
  int64_t peak = 0;
  for (size_t s = 0; s < p.steps.size(); ++s) {
    int64_t live = 0;
    for (uint32_t v : held) live += def[v] <= s && s <= last[v] ? bytes(v) : 0;
    peak = std::max(peak, live);
  }
  for (uint32_t a : held) {
    for (uint32_t b : held) {
      int sa = p.slot_of[a], sb = p.slot_of[b];
      if (a >= b || sa == sb || last[a] < def[b] || last[b] < def[a]) continue;
      int64_t oa = p.slot_offset[sa], ob = p.slot_offset[sb];
      CHECK_MESSAGE((oa + bytes(a) <= ob || ob + bytes(b) <= oa), "%", a + 1, " and %", b + 1);
    }
  }
  CHECK(p.arena_bytes <= p.planned_bytes());
  return peak;
}

TEST_CASE(
    "values live together lie apart in the arena, which holds little more than the most live") {
  // Branches of many sizes that die at different steps: what reusing freed slots as they
  // come wastes (a small slot grown for a large value while a large one sits free).
  Builder b("branches");
  Var x = b.input("x", f32({64, 64}));
  std::vector<Var> kept;
  Var v = x;
  for (int i = 1; i <= 12; ++i) {
    Var wide = b.broadcast_to(b.reshape(v, {.shape = {64, 64, 1}}), {.shape = {64, 64, i % 4 + 1}});
    Var narrow = b.sum(b.exp(wide), {.dims = {3}});
    kept.push_back(b.sin(narrow));
    v = b.tanh(b.add(narrow, v));
  }
  for (Var k : kept) v = b.add(v, k);
  b.output(b.sum(v, {.dims = {1, 2}}), "s");
  Tape t = b.finish();
  Executor ex(t);
  int64_t most_live = check_arena(ex.plan());
  CHECK(ex.plan().planned_bytes() <= most_live + most_live / 4);
}

TEST_CASE("a reshape of a value that dies with it takes its buffer") {
  // Chains of reshapes between elementwise ops need one buffer, not one per reshape.
  Builder b("reshapes");
  Var v = b.neg(b.input("x", f32({6, 4})));
  for (int i = 0; i < 5; ++i) {
    v = b.reshape(v, {.shape = i % 2 == 0 ? Shape{4, 6} : Shape{24}});
    v = b.neg(v);
  }
  b.output(b.sum(v, {.dims = {1, 2}}), "s");  // of the last reshape, to [4, 6]
  Tape t = b.finish();
  Executor ex(t);
  CHECK(ex.plan().planned_bytes() <= 128);  // 24 floats, padded to 64 bytes; the last sum's 4
  Tensor x = random_tensor(f32({6, 4}), 3);
  double want = 0;
  for (double e : to_doubles(x)) want += static_cast<float>(e);  // negated six times
  check_close(ex.run({{"x", x}})[0], {want}, 1e-5, 1e-5);
}

TEST_CASE("a value read again later keeps its buffer") {
  // m is read by relu (where it could be overwritten in place) and again by the final add.
  Builder b("f");
  Var x = b.input("x", f32({3}));
  Var m = b.neg(x);
  Var r = b.relu(m);
  Var s = b.exp(r);
  b.output(b.add(s, m), "out");
  Tape t = b.finish();
  Executor ex(t);
  Tensor out = ex.run({{"x", make_tensor(f32({3}), {1, -2, 3})}})[0];
  check_close(out, {std::exp(0.0) - 1, std::exp(2.0) + 2, std::exp(0.0) - 3}, 1e-6, 1e-6);
}

TEST_CASE("inputs and constants can be outputs") {
  Builder b("f");
  Var x = b.input("x", f32({2}));
  Var c = b.constant(DType::f32, 3.0, {2});
  b.output(x, "same");
  b.output(c, "three");
  Tape t = b.finish();
  Executor ex(t);
  std::vector<Tensor> outs = ex.run({{"x", make_tensor(f32({2}), {1, 2})}});
  check_equal(outs[0], {1, 2});
  check_equal(outs[1], {3, 3});
}

TEST_CASE("bad inputs name the input") {
  Tape t = sample();
  Executor ex(t);
  Tensor good = make_tensor(f32({4}), {1, 2, 3, 4});
  CHECK_THROWS_WITH_AS(ex.run({{"x", good}}), "missing input 'y' (f32[4])", UserError);
  CHECK_THROWS_WITH_AS(ex.run({{"x", good}, {"y", make_tensor(f32({3}), {1, 2, 3})}}),
                       "input 'y' is f32[3], but the tape declares f32[4]", UserError);
  CHECK_THROWS_WITH_AS(ex.run({{"x", good}, {"y", make_tensor({DType::f64, {4}}, {1, 2, 3, 4})}}),
                       "input 'y' is f64[4], but the tape declares f32[4]", UserError);
  CHECK_THROWS_WITH_AS(ex.run({{"x", good}, {"y", good}, {"z", good}}),
                       "'z' is not an input of tape f", UserError);
}

TEST_CASE("errors inside a kernel name the op and its location") {
  Builder b("f");
  Var table = b.input("table", f32({3, 2}));
  Var idx = b.input("idx", {DType::i64, {1, 2}});
  b.set_loc({b.intern_file("model.jl"), 4});
  b.output(b.gather(table, idx, {.dim = int64_t{1}}), "picked");
  Tape t = b.finish();
  Executor ex(t);
  auto run = [&](std::vector<double> labels) {
    return ex.run({{"table", random_tensor(f32({3, 2}), 1)},
                   {"idx", make_tensor({DType::i64, {1, 2}}, labels)}});
  };
  CHECK(run({3, 1})[0].size() == 2);
  CHECK_THROWS_AS(run({4, 1}), UserError);
  try {
    run({4, 1});
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).starts_with(
        "op 3 (%3 = gather(%1, %2; dim=1)::f32[1,2]) at model.jl:4: "));
  }
}

TEST_CASE("print goes to the run's printer; a failing guard stops the run") {
  Builder b("f");
  Var x = b.input("x", f32({}));
  Var positive = b.gt(x, b.constant(DType::f32, 0.0));
  b.guard(positive, {.message = std::string("x > 0")});
  b.print({x, b.sqrt(x)}, {.format = std::string("x={} sqrt={}")});
  b.print({x, x});
  Tape t = b.finish();
  Executor ex(t);
  std::vector<std::string> lines;
  ex.set_print([&](std::string_view line) { lines.emplace_back(line); });
  ex.run({{"x", make_tensor(f32({}), {4})}});
  CHECK(lines == std::vector<std::string>{"x=4.0 sqrt=2.0", "4.0 4.0"});
  CHECK_THROWS_WITH_AS(ex.run({{"x", make_tensor(f32({}), {-1})}}), "op 4: guard failed: x > 0",
                       UserError);
}

TEST_CASE("profiling records the time of every call") {
  Tape t = sample();
  ExecutorOptions unfused;  // one step per op
  unfused.fusion = false;
  Executor ex(t, unfused);
  ex.set_profiling(true);
  Tensor x = make_tensor(f32({4}), {1, 2, 3, 4});
  ex.run({{"x", x}, {"y", x}});
  std::vector<double> once;
  for (const OpTime& ot : ex.op_times()) once.push_back(ot.seconds);
  ex.run({{"x", x}, {"y", x}});
  REQUIRE(ex.op_times().size() == 5);
  // Each call's time is measured (a clock's tick is far below a kernel's cost but above 0)
  // and the second run adds to the first.
  for (size_t i = 0; i < once.size(); ++i) {
    const OpTime& ot = ex.op_times()[i];
    CHECK(t.ops[ot.op].kind == OpKind::call);
    CHECK(once[i] > 0);
    CHECK(ot.seconds > once[i]);
  }
}

TEST_CASE("every primitive has a kernel") {
  for (Prim p : all_prims()) {
    CAPTURE(prim_name(p));
    bool registered = kernel_table().kernels[static_cast<int>(p)] != nullptr;
    CHECK(registered);
  }
}

TEST_CASE("an elementwise kernel has rows for exactly the dtypes of its row in ops.def") {
  // Not f16: f16 ops run as f32 ones (runtime/lower_f16.h), so only select, which moves bits
  // of any size, has f16 rows. convert picks its row by two dtypes and keeps none here.
  for (KernelSet set : {KernelSet::fast, KernelSet::reference}) {
    for (Prim p : all_prims()) {
      const PrimInfo& info = prim_info(p);
      if (!info.elementwise() || p == Prim::convert) continue;
      for (DType d : {DType::f32, DType::f64, DType::i64, DType::boolean}) {
        CAPTURE(info.name);
        CAPTURE(dtype_name(d));
        bool has_row = kernel_table(set).rows[static_cast<int>(p)][static_cast<int>(d)] != nullptr;
        CHECK(has_row == info.accepts(d));
      }
    }
  }
}

TEST_CASE("complete_inputs keeps the given inputs, with short names, as it adds the others") {
  // The first input is missing: adding it grows the list while the later names are looked up.
  Builder b("t");
  Var x = b.input("x", f32({2}));
  TensorMap given;
  std::vector<Var> ws;
  for (int i = 0; i < 8; ++i) {
    given.emplace_back(fmt::format("w{}", i), Tensor(f32({2})));
    ws.push_back(b.input(given.back().first, f32({2})));
  }
  for (Var w : ws) b.output(b.add(x, w), fmt::format("y{}", w.id));
  given.shrink_to_fit();
  TensorMap inputs = complete_inputs(b.finish(), given, 1);
  REQUIRE(inputs.size() == 9);
  CHECK(inputs[0].first == "w0");
  CHECK(inputs[8].first == "x");
}

TEST_CASE("a step with more arguments than the planner has blocked-layout bits for") {
  // concat of 40 values: the layout planner asks about each argument, past bit 31 too.
  Builder b("wide");
  VarList xs;
  TensorMap inputs;
  std::vector<double> want;
  for (int i = 0; i < 40; ++i) {
    std::string name = "x" + std::to_string(i);
    xs.push_back(b.input(name, {DType::f32, {2, 1}}));
    inputs.emplace_back(name, make_tensor({DType::f32, {2, 1}}, {i * 1.0, -i * 1.0}));
    want.insert(want.end(), {i * 1.0, -i * 1.0});
  }
  b.output(b.concat(xs, {.dim = 2}), "y");
  Tape t = b.finish();
  check_equal(Executor(t).run(inputs)[0], want);
}

TEST_CASE("a convolution's algorithm attribute fixes its variant, whatever the work memory") {
  // A shape where oneDNN's Winograd convolution may run (3x3, stride 1, 64 channels).
  auto tape = [](const char* algorithm) {
    Builder b("conv");
    Var x = b.input("x", f32({28, 28, 64, 2}));
    Var w = b.input("w", f32({3, 3, 64, 64}));
    b.output(b.conv2d(x, w, {.pad = {1, 1, 1, 1}, .algorithm = algorithm}), "y");
    return b.finish();
  };
  ExecutorOptions roomy, tight;
  roomy.extra_work_bytes = int64_t{1} << 40;
  tight.extra_work_bytes = -1;  // never a faster variant by choice
  Tape automatic = tape("auto");
  bool offered = Executor(automatic, roomy).plan().steps[0].variant == Variant::faster;
  CHECK(Executor(automatic, tight).plan().steps[0].variant == Variant::standard);
  Tape direct = tape("direct"), winograd = tape("winograd");
  CHECK(Executor(direct, roomy).plan().steps[0].variant == Variant::standard);
  CHECK((Executor(winograd, tight).plan().steps[0].variant == Variant::faster) == offered);
  TensorMap in = {{"x", random_tensor(f32({28, 28, 64, 2}), 1)},
                  {"w", random_tensor(f32({3, 3, 64, 64}), 2)}};
  // The same values within rounding either way.
  check_close(Executor(winograd).run(in)[0], to_doubles(Executor(direct).run(in)[0]), 1e-3, 1e-3);
}

namespace {

// A training step's shape: loss = sum(w * w) read first, then w' = w - 0.5 * g, the
// output that replaces input w (output 1 into input 0).
Tape step_tape() {
  Builder b("step");
  Var w = b.input("w", f32({4}));
  Var g = b.input("g", f32({4}));
  b.output(b.sum(b.mul(w, w), {.dims = {1}}), "loss");
  b.output(b.sub(w, b.mul(b.constant(DType::f32, 0.5, {4}), g)), "out.w");
  return b.finish();
}

}  // namespace

TEST_CASE("a donated input's buffer holds the output that replaces it") {
  Tape t = step_tape();
  Executor plain(t);
  Executor donating(t, {.donate = {{1, 0}}});
  REQUIRE(donating.plan().donations.size() == 1);
  Tensor g = make_tensor(f32({4}), {1, 2, 3, 4});
  std::vector<Tensor> a{make_tensor(f32({4}), {1, -1, 2, 0}), g}, b{a[0].clone(), g}, outs_a,
      outs_b;
  for (int step = 0; step < 3; ++step) {  // carried, as ytape train does
    const void* given = b[0].raw();
    plain.run(a, outs_a);
    donating.run(b, outs_b);
    CHECK(outs_b[1].raw() == given);
    CHECK(same_bits(outs_a, outs_b));
    a[0] = outs_a[1];
    b[0] = outs_b[1];
  }
  check_equal(outs_b[1], {-0.5, -4, -2.5, -6});  // w - 3 * 0.5 * g
}

TEST_CASE("a donation is refused where the input is read after its output is written") {
  Builder b("f");
  Var w = b.input("w", f32({4}));
  b.output(b.neg(w), "out.w");
  b.output(b.sum(w, {.dims = {1}}), "s");  // reads w after out.w's step
  Tape t = b.finish();
  Executor ex(t, {.donate = {{0, 0}}});
  CHECK(ex.plan().donations.empty());
  Tensor in = make_tensor(f32({4}), {1, 2, 3, 4});
  std::vector<Tensor> outs = ex.run({{"w", in}});
  CHECK(outs[0].raw() != in.raw());
  check_equal(in, {1, 2, 3, 4});
  check_equal(outs[1], {10});
}

TEST_CASE("one tensor given for a donated input and another is not written over") {
  Builder b("f");
  Var w = b.input("w", f32({4}));
  Var v = b.input("v", f32({4}));
  b.output(b.neg(w), "out.w");
  b.output(b.add(v, v), "r");  // reads v after out.w's step
  Tape t = b.finish();
  Executor ex(t, {.donate = {{0, 0}}});
  REQUIRE(ex.plan().donations.size() == 1);
  Tensor both = make_tensor(f32({4}), {1, 2, 3, 4});
  std::vector<Tensor> outs = ex.run({{"w", both}, {"v", both}});
  CHECK(outs[0].raw() != both.raw());
  check_equal(both, {1, 2, 3, 4});
  check_equal(outs[0], {-1, -2, -3, -4});
  check_equal(outs[1], {2, 4, 6, 8});
  std::vector<Tensor> again = ex.run({{"w", both.clone()}, {"v", both}});  // apart: donated
  check_equal(again[0], {-1, -2, -3, -4});
  check_equal(again[1], {2, 4, 6, 8});
}
