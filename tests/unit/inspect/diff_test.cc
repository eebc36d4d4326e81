#include "inspect/diff.h"

#include <doctest/doctest.h>

#include "tape/builder.h"

using namespace ytape;

namespace {

Type f32(Shape s) {
  return Type{DType::f32, std::move(s)};
}

// A two-layer network, with knobs for the edits the tests make.
struct Net {
  Prim activation = Prim::relu;
  bool extra_op_first = false;  // an independent op before everything else
  bool swap_layers = false;     // the two independent products in the other order
  float scale = 2.0f;
  Shape x_shape = {4, 3};
};

Tape net(const Net& n) {
  Builder b("loss");
  b.add_meta("entry", "loss");
  Var w1 = b.input("w1", f32({5, 4}));
  Var w2 = b.input("w2", f32({5, 4}));
  Var x = b.input("x", f32(n.x_shape));
  b.set_loc({b.intern_file("net.jl"), 3});
  if (n.extra_op_first) b.output(b.sin(x), "extra");
  Attrs plain;
  Var h1, h2;
  if (n.swap_layers) {
    h2 = b.call1(Prim::matmul, {w2, x}, plain);
    h1 = b.call1(Prim::matmul, {w1, x}, plain);
  } else {
    h1 = b.call1(Prim::matmul, {w1, x}, plain);
    h2 = b.call1(Prim::matmul, {w2, x}, plain);
  }
  b.set_loc({b.intern_file("net.jl"), 4});
  Var a = b.call1(n.activation, {h1});
  b.set_loc({b.intern_file("net.jl"), 5});
  Var z = b.add(a, h2);
  Var c = b.constant(DType::f32, n.scale);
  Var s = b.mul(z, c);
  Var total = b.sum(s, {.dims = {1, 2}});
  b.output(total, "loss");
  return b.finish();
}

std::string text(const Tape& a, const Tape& b) {
  return diff_str(a, b, diff_tapes(a, b), {"a.json", "b.json"});
}

}  // namespace

TEST_CASE("diff: a tape against itself is empty") {
  Tape t = net({});
  TapeDiff d = diff_tapes(t, t);
  CHECK(d.same());
  CHECK(d.ops.empty());
  CHECK(text(t, t).empty());
  CHECK(diff_stat(t, t, d).empty());
  for (size_t j = 0; j < t.ops.size(); ++j) CHECK(d.a_of_b[j] == j);
}

TEST_CASE("diff: reordering independent ops is no difference") {
  Tape a = net({});
  Tape b = net({.swap_layers = true});
  TapeDiff d = diff_tapes(a, b);
  CHECK(d.same());
  CHECK(text(a, b).empty());
}

TEST_CASE("diff: one op inserted first is one added line, not a renumbered tape") {
  Tape a = net({});
  Tape b = net({.extra_op_first = true});
  TapeDiff d = diff_tapes(a, b);
  CHECK_FALSE(d.same());
  CHECK(text(a, b) ==
        "--- a.json\n"
        "+++ b.json\n"
        "+ %4 = sin(%3)::f32[4,3]  # net.jl:3\n"
        "+ out %4 extra\n");
}

TEST_CASE("diff: a changed activation is one changed op; what reads it does not differ") {
  Tape a = net({});
  Tape b = net({.activation = Prim::tanh});
  TapeDiff d = diff_tapes(a, b);
  REQUIRE(d.ops.size() == 1);
  CHECK(d.ops[0].change == Change::changed);
  CHECK(d.outputs.empty());
  CHECK(text(a, b) ==
        "--- a.json\n"
        "+++ b.json\n"
        "- %6 = relu(%4)::f32[5,3]  # net.jl:4\n"
        "+ %6 = tanh(%4)::f32[5,3]  # net.jl:4\n");
  CHECK(diff_stat(a, b, d) ==
        "primitive  removed  added\n"
        "tanh             0      1\n"
        "relu             1      0\n"
        "1 op changed, 0 added, 0 removed\n");
}

TEST_CASE("diff: a changed constant") {
  Tape a = net({});
  Tape b = net({.scale = 3.0f});
  CHECK(text(a, b) ==
        "--- a.json\n"
        "+++ b.json\n"
        "- %8 = const(2.0)::f32[]  # net.jl:5\n"
        "+ %8 = const(3.0)::f32[]  # net.jl:5\n");
}

TEST_CASE("diff: an input of another type is one changed input") {
  Tape a = net({});
  Tape b = net({.x_shape = {4, 7}});
  TapeDiff d = diff_tapes(a, b);
  CHECK(text(a, b) ==
        "--- a.json\n"
        "+++ b.json\n"
        "- in  %3::f32[4,3] x\n"
        "+ in  %3::f32[4,7] x\n");
  CHECK_FALSE(d.same());
}

TEST_CASE("diff: commutative arguments in either order are the same") {
  auto make = [](bool swapped) {
    Builder b;
    Var x = b.input("x", f32({3}));
    Var y = b.input("y", f32({3}));
    Var s = b.sin(y);
    b.output(swapped ? b.mul(s, x) : b.mul(x, s), "z");
    b.output(swapped ? b.sub(s, x) : b.sub(s, x), "w");
    return b.finish();
  };
  CHECK(diff_tapes(make(false), make(true)).same());
}

TEST_CASE("diff: an op that reads another existing value is changed") {
  auto make = [](bool other) {
    Builder b;
    Var x = b.input("x", f32({3}));
    Var y = b.input("y", f32({3}));
    Var z = b.input("z", f32({3}));
    b.output(b.div(x, other ? z : y), "q");
    return b.finish();
  };
  Tape a = make(false), b = make(true);
  CHECK(text(a, b) ==
        "--- a.json\n"
        "+++ b.json\n"
        "- %4 = div(%1, %2)::f32[3]\n"
        "+ %4 = div(%1, %3)::f32[3]\n");
}

TEST_CASE("diff: an op inserted into a chain, and one removed") {
  auto make = [](bool extra) {
    Builder b;
    Var x = b.input("x", f32({3}));
    Var s = b.sin(x);
    if (extra) s = b.exp(s);
    b.output(b.neg(s), "y");
    return b.finish();
  };
  Tape a = make(false), b = make(true);
  CHECK(text(a, b) ==
        "--- a.json\n"
        "+++ b.json\n"
        "+ %3 = exp(%2)::f32[3]\n"
        "- %3 = neg(%2)::f32[3]\n"
        "+ %4 = neg(%3)::f32[3]\n");
  CHECK(text(b, a) ==
        "--- a.json\n"
        "+++ b.json\n"
        "- %3 = exp(%2)::f32[3]\n"
        "- %4 = neg(%3)::f32[3]\n"
        "+ %3 = neg(%2)::f32[3]\n");
}

TEST_CASE("diff: equal constants and repeated subexpressions are interchangeable") {
  // B lacks the first of many equal constants: the rest must not shift their pairing.
  auto make = [](bool first) {
    Builder b;
    Var x = b.input("x", f32({3}));
    Var v = x;
    if (first) v = b.add(v, b.constant(DType::f32, 1.0));
    for (int i = 0; i < 5; ++i) {
      Var s = b.sin(v);
      v = b.mul(s, b.constant(DType::f32, 1.0));
    }
    b.output(v, "y");
    return b.finish();
  };
  Tape a = make(true), b = make(false);
  TapeDiff d = diff_tapes(a, b);
  CHECK(text(a, b) ==
        "--- a.json\n"
        "+++ b.json\n"
        "- %2 = const(1.0)::f32[]\n"
        "- %3 = add(%1, %2)::f32[3]\n"
        "- %4 = sin(%3)::f32[3]\n"
        "+ %2 = sin(%1)::f32[3]\n");
}

TEST_CASE("diff: a value computed twice is an added op") {
  auto make = [](bool twice) {
    Builder b;
    Var x = b.input("x", f32({3}));
    Var s = b.sin(x);
    Var t = twice ? b.sin(x) : s;
    b.output(b.mul(s, t), "y");
    return b.finish();
  };
  Tape a = make(false), b = make(true);
  TapeDiff d = diff_tapes(a, b);
  REQUIRE(d.ops.size() == 1);
  CHECK(d.ops[0].change == Change::added);
  CHECK(d.ops[0].b == 2);
}

TEST_CASE("diff: effects pair in order; a new one is added") {
  auto make = [](bool more) {
    Builder b;
    Var x = b.input("x", f32({}));
    Attrs fmt1{{"format", std::string("x = {}")}};
    b.call(Prim::print, {x}, fmt1);
    if (more) b.call(Prim::print, {x}, fmt1);
    Attrs r{{"dtype", DType::f32}, {"shape", std::vector<int64_t>{}}, {"seed", int64_t{1}}};
    Var u = b.call1(Prim::rand, {}, r);
    Var v = b.call1(Prim::rand, {}, r);
    b.output(b.sub(u, v), "d");
    return b.finish();
  };
  Tape a = make(false), b = make(true);
  CHECK(diff_tapes(a, a).same());
  TapeDiff d = diff_tapes(a, b);
  REQUIRE(d.ops.size() == 1);
  CHECK(d.ops[0].change == Change::added);
  CHECK(d.ops[0].b == 2);
}

TEST_CASE("diff: outputs by name") {
  auto make = [](std::string first, bool swap) {
    Builder b;
    Var x = b.input("x", f32({3}));
    Var s = b.sin(x), c = b.cos(x);
    if (swap) {
      b.output(c, "c");
      b.output(s, first);
    } else {
      b.output(s, first);
      b.output(c, "c");
    }
    return b.finish();
  };
  Tape a = make("s", false);
  CHECK(text(a, make("sine", false)) ==
        "--- a.json\n"
        "+++ b.json\n"
        "- out %2 s\n"
        "+ out %2 sine\n");
  TapeDiff d = diff_tapes(a, make("s", true));
  CHECK(d.outputs_reordered);
  CHECK_FALSE(d.same());
  CHECK(text(a, make("s", true)) ==
        "--- a.json\n"
        "+++ b.json\n"
        "- outputs s, c\n"
        "+ outputs c, s\n");
}

TEST_CASE("diff: name and metadata show but do not count") {
  Tape a = net({});
  Tape b = net({});
  b.name = "main";
  b.meta = {{"entry", "main"}, {"seed", "7"}};
  TapeDiff d = diff_tapes(a, b);
  CHECK(d.same());
  CHECK(text(a, b) ==
        "--- a.json\n"
        "+++ b.json\n"
        "- tape loss\n"
        "+ tape main\n"
        "- meta entry = \"loss\"\n"
        "+ meta entry = \"main\"\n"
        "+ meta seed = \"7\"\n");
  CHECK(diff_stat(a, b, d).empty());
}

TEST_CASE("diff: the JSON report") {
  Tape a = net({});
  Tape b = net({.activation = Prim::tanh});
  CHECK(
      diff_json(a, b, diff_tapes(a, b), {"a.json", "b.json"}) ==
      "{\"format\":\"ytape-diff\",\"version\":1,\"same\":false,\"a\":\"a.json\",\"b\":\"b.json\",\n"
      "\"summary\":{\"changed\":1,\"added\":0,\"removed\":0,\"outputs\":0,\"outputs_reordered\":"
      "false},\n"
      "\"name\":{\"a\":\"loss\",\"b\":\"loss\"},\n"
      "\"meta\":[\n"
      "],\n"
      "\"ops\":[\n"
      "{\"change\":\"changed\",\"a\":{\"index\":6,\"out\":[6],\"op\":\"relu\",\"text\":\"%6 = "
      "relu(%4)::f32[5,3]\",\"loc\":\"net.jl:4\"},\"b\":{\"index\":6,\"out\":[6],\"op\":\"tanh\","
      "\"text\":\"%6 = tanh(%4)::f32[5,3]\",\"loc\":\"net.jl:4\"}}\n"
      "],\n"
      "\"outputs\":[\n"
      "],\n"
      "\"stat\":[\n"
      "{\"op\":\"tanh\",\"removed\":0,\"added\":1},\n"
      "{\"op\":\"relu\",\"removed\":1,\"added\":0}\n"
      "]}\n");
}

TEST_CASE("diff: long chains align in linear time, an insertion at the top is one line") {
  auto make = [](bool extra) {
    Builder b;
    Var x = b.input("x", {DType::f64, {}});
    if (extra) b.output(b.cos(x), "extra");
    Var v = x;
    for (int i = 0; i < 100000; ++i)
      v = i % 3 == 0 ? b.sin(v) : i % 3 == 1 ? b.mul(v, x) : b.neg(v);
    b.output(v, "y");
    return b.finish();
  };
  Tape a = make(false), b = make(true);
  TapeDiff d = diff_tapes(a, b);
  REQUIRE(d.ops.size() == 1);
  CHECK(d.ops[0].b == 1);
  REQUIRE(d.outputs.size() == 1);
  CHECK(d.outputs[0].change == Change::added);
}

namespace {

// A random DAG of unary and binary ops over two inputs, reading any earlier value; many
// ops are shared, some dead. `changed` turns op number `changed` (if a sin) into an
// expm1, which the generator never uses otherwise.
Tape random_dag(uint64_t seed, int n, int changed = -1) {
  Builder b("random");
  std::vector<Var> vals = {b.input("x", f32({2})), b.input("y", f32({2}))};
  uint64_t state = seed;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  const Prim unary[] = {Prim::sin, Prim::tanh, Prim::neg};
  const Prim binary[] = {Prim::add, Prim::mul, Prim::sub};
  for (int i = 0; i < n; ++i) {
    Var a = vals[next() % vals.size()], c = vals[next() % vals.size()];
    bool is_unary = next() % 2;
    Prim p = is_unary ? unary[next() % 3] : binary[next() % 3];
    if (i == changed && p == Prim::sin) p = Prim::expm1;
    vals.push_back(is_unary ? b.call1(p, {a}) : b.call1(p, {a, c}));
  }
  for (int k = 1; k <= 3; ++k) b.output(vals[vals.size() - k], "out" + std::to_string(k));
  return b.finish();
}

// The same ops in another order that respects their dependencies, drawn at random.
Tape shuffled(const Tape& t, uint64_t seed) {
  std::vector<std::vector<size_t>> readers(t.ops.size());
  std::vector<size_t> def(t.types.size()), waiting(t.ops.size(), 0), ready;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    for (Var o : t.ops[i].outs) def[o.id] = i;
    for (Var a : t.ops[i].args) {
      readers[def[a.id]].push_back(i);
      ++waiting[i];
    }
    if (waiting[i] == 0 && t.ops[i].kind != OpKind::input) ready.push_back(i);
  }
  Builder b = Builder::like(t);
  VarMap map(t);
  for (size_t i = 0; i < t.num_inputs(); ++i) copy_op(b, t, t.ops[i], map);
  for (size_t i = 0; i < t.num_inputs(); ++i) {
    for (size_t r : readers[i]) {
      if (--waiting[r] == 0) ready.push_back(r);
    }
  }
  uint64_t state = seed;
  while (!ready.empty()) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    size_t k = (state >> 33) % ready.size();
    size_t i = ready[k];
    ready[k] = ready.back();
    ready.pop_back();
    copy_op(b, t, t.ops[i], map);
    for (size_t r : readers[i]) {
      if (--waiting[r] == 0) ready.push_back(r);
    }
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

}  // namespace

TEST_CASE("diff: random tapes against random reorderings of themselves, and one edit") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    Tape a = random_dag(seed, 2000);
    Tape b = shuffled(a, seed * 7);
    TapeDiff d = diff_tapes(a, b);
    CHECK(d.same());
    CHECK(diff_tapes(b, a).same());
    // One sin becomes an expm1: one changed op, whether live or dead.
    int changed = -1;
    for (int i = 0; i < 2000 && changed < 0; ++i) {
      if (a.ops[a.num_inputs() + i].prim == Prim::sin && i > 500) changed = i;
    }
    REQUIRE(changed >= 0);
    Tape c = shuffled(random_dag(seed, 2000, changed), seed * 11);
    TapeDiff e = diff_tapes(a, c);
    if (e.ops.size() != 1) MESSAGE(diff_str(a, c, e, {}));
    REQUIRE(e.ops.size() == 1);
    CHECK(e.ops[0].change == Change::changed);
    CHECK(a.ops[e.ops[0].a].prim == Prim::sin);
    CHECK(c.ops[e.ops[0].b].prim == Prim::expm1);
    CHECK(e.outputs.empty());
  }
}
