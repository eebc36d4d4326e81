#include "tape/builder.h"

#include <doctest/doctest.h>

#include "tape/error.h"
#include "tape/print.h"
#include "tape/validate.h"

using namespace ytape;

namespace {

Type f32(Shape s) {
  return Type{DType::f32, std::move(s)};
}

}  // namespace

TEST_CASE("the builder numbers vars densely and infers types") {
  Builder b("loss");
  Var x = b.input("x", f32({3}));
  Var y = b.input("y", f32({3}));
  Var s = b.sin(x);
  Var m = b.mul(s, y);
  Var total = b.sum(m, {.dims = {1}});
  b.output(total, "loss");
  Tape t = b.finish();
  CHECK(x.id == 0);
  CHECK(total.id == 4);
  CHECK(type_str(t.type(total)) == "f32[]");
  CHECK(t.num_inputs() == 2);
  validate(t);
}

TEST_CASE("the builder reports bad shapes with the primitive and location") {
  Builder b("f");
  b.set_loc({b.intern_file("model.jl"), 7});
  Var x = b.input("x", f32({3}));
  Var y = b.input("y", f32({4}));
  CHECK_THROWS_WITH_AS(b.add(x, y),
                       "model.jl:7: add: shapes f32[3] and f32[4] do not broadcast (dim 1: 3 vs 4)",
                       UserError);
  b.set_loc({});
  CHECK_THROWS_WITH_AS(b.call(Prim::neg, {x, y}), "neg: takes 1 argument, got 2", UserError);
}

TEST_CASE("inputs come first and have unique names") {
  Builder b("f");
  Var x = b.input("x", f32({}));
  CHECK_THROWS_WITH_AS(b.input("x", f32({})), "two inputs are named 'x'", UserError);
  b.neg(x);
  CHECK_THROWS_WITH_AS(b.input("z", f32({})),
                       "input 'z' comes after other ops; declare every input first", UserError);
}

TEST_CASE("multi-output and zero-output ops") {
  Builder b("f");
  Var x = b.input("x", f32({4, 4, 1, 1}));
  std::vector<Var> outs = b.max_pool2d_with_indices(
      x, {.window = std::vector<int64_t>{2, 2}, .stride = std::vector<int64_t>{2, 2}});
  REQUIRE(outs.size() == 2);
  CHECK(type_str(b.type(outs[1])) == "i64[2,2,1,1]");
  CHECK(b.print({x}).empty());
  validate(b.tape());
}

TEST_CASE("copying a tape remaps every var in one pass") {
  Builder b("f");
  b.add_meta("entry", "f");
  b.set_loc({b.intern_file("m.jl"), 2});
  Var x = b.input("x", f32({2}));
  Var c = b.constant(DType::f32, 2.0, {2});
  Var y = b.mul(x, c);
  b.output(y, "y");
  Tape t = b.finish();
  Tape copy = copy_tape(t);
  CHECK(print_tape(copy) == print_tape(t));
  CHECK(copy.meta == t.meta);
  CHECK(copy.files == t.files);

  // A rewrite through VarMap: drop the constant, multiply x by itself.
  Builder r = Builder::like(t);
  VarMap map(t);
  for (const Op& op : t.ops) {
    if (op.kind == OpKind::constant) continue;
    if (op.kind == OpKind::call) {
      r.set_loc(op.loc);
      map.set(op.outs[0], r.mul(map[op.args[0]], map[op.args[0]]));
      continue;
    }
    copy_op(r, t, op, map);
  }
  r.output(map[t.outputs[0].var], "y");
  Tape rewritten = r.finish();
  validate(rewritten);
  CHECK(print_tape(rewritten) ==
        "tape f\n"
        "  meta entry = \"f\"\n"
        "  in  %1::f32[2] x  # m.jl:2\n"
        "  %2 = mul(%1, %1)::f32[2]  # m.jl:2\n"
        "  out %2 y\n");
}

TEST_CASE("record returns the op it appended") {
  Builder b("f");
  Var x = b.input("x", f32({2}));
  const Op& op =
      b.record(Prim::max_pool2d_with_indices, {b.reshape(x, {.shape = {2, 1, 1, 1}})},
               {{"window", std::vector<int64_t>{2, 1}}, {"stride", std::vector<int64_t>{2, 1}}});
  CHECK(op.prim == Prim::max_pool2d_with_indices);
  REQUIRE(op.outs.size() == 2);
  CHECK(op.outs[1].id == 3);
  CHECK(type_str(b.type(op.outs[0])) == "f32[1,1,1,1]");
  CHECK(attrs_of<Prim::max_pool2d_with_indices>(op.attrs).pad ==
        std::vector<int64_t>{0, 0, 0, 0});  // normalized
}

TEST_CASE("inference on numbers is remembered by dtype, and failures never are") {
  // Scalar ops skip their inference rule when the same primitive saw the same dtypes;
  // what they infer must not depend on that.
  Builder b("f");
  Var x = b.input("x", f32({}));
  Var y = b.input("y", Type{DType::f64, {}});
  Var i = b.input("i", Type{DType::i64, {}});
  Var v = b.input("v", f32({3}));
  CHECK(type_str(b.type(b.add(x, x))) == "f32[]");
  CHECK(type_str(b.type(b.add(y, y))) == "f64[]");
  CHECK(type_str(b.type(b.add(x, x))) == "f32[]");
  CHECK(type_str(b.type(b.add(x, v))) == "f32[3]");
  CHECK(type_str(b.type(b.lt(i, i))) == "bool[]");
  CHECK_THROWS_AS(b.add(x, y), UserError);
  CHECK_THROWS_AS(b.add(x, y), UserError);
  CHECK_THROWS_AS(b.div(i, i), UserError);
  CHECK_THROWS_AS(b.div(i, i), UserError);
  CHECK(type_str(b.type(b.div(x, x))) == "f32[]");
  CHECK_THROWS_AS(b.div(i, i), UserError);
  validate(b.tape());
}
