#include "tape/validate.h"

#include <doctest/doctest.h>

#include "tape/builder.h"
#include "tape/error.h"

using namespace ytape;

namespace {

Type f32(Shape s) {
  return Type{DType::f32, std::move(s)};
}

// in %1 x, in %2 y, %3 = add(%1, %2), %4 = sum(%3; dims=[1]) at m.jl:3, out %4.
Tape sample() {
  Builder b("f");
  Var x = b.input("x", f32({3}));
  Var y = b.input("y", f32({3}));
  Var s = b.add(x, y);
  b.set_loc({b.intern_file("m.jl"), 3});
  Var total = b.sum(s, {.dims = {1}});
  b.output(total, "loss");
  return b.finish();
}

}  // namespace

TEST_CASE("a built tape is valid") {
  validate(sample());
}

TEST_CASE("validator: use before definition") {
  Tape t = sample();
  t.ops[2].args[1] = Var{3};
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 3 (%3 = add(%1, %4)::f32[3]): %4 is used before it is defined; "
                       "move its definition up",
                       UserError);
}

TEST_CASE("validator: a var that is never defined") {
  Tape t = sample();
  t.ops[2].args[0] = Var{41};
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 3 (%3 = add(%42, %2)::f32[3]): %42 is never defined", UserError);
}

TEST_CASE("validator: a var defined twice") {
  Tape t = sample();
  t.ops[3].outs[0] = Var{2};
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 4 (%3 = sum(%3; dims=[1])::f32[3]) at m.jl:3: %3 is already "
                       "defined by an earlier op; each var is defined once",
                       UserError);
}

TEST_CASE("validator: numbering that is not dense") {
  Tape t = sample();
  t.types.push_back(f32({}));
  t.ops[3].outs[0] = Var{4};
  CHECK_THROWS_WITH_AS(
      validate(t),
      "tape f: op 4 (%5 = sum(%3; dims=[1])::f32[]) at m.jl:3: it defines %5 where "
      "%4 comes next; vars are numbered densely in definition order",
      UserError);
}

TEST_CASE("validator: a type with no op") {
  Tape t = sample();
  t.types.push_back(f32({}));
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: %5 has a type but no op defines it; vars must be numbered densely",
                       UserError);
}

TEST_CASE("validator: recorded type disagrees with inference") {
  Tape t = sample();
  t.types.set(2, f32({4}));
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 3 (%3 = add(%1, %2)::f32[4]): %3 is recorded as f32[4], but its "
                       "arguments give f32[3]",
                       UserError);
}

TEST_CASE("validator: arguments whose shapes do not agree") {
  Tape t = sample();
  t.types.set(1, f32({4}));
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 3 (%3 = add(%1, %2)::f32[3]): shapes f32[3] and f32[4] do not "
                       "broadcast (dim 1: 3 vs 4)",
                       UserError);
}

TEST_CASE("validator: wrong arity and output count") {
  Tape t = sample();
  t.ops[2].args.push_back(Var{0});
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 3 (%3 = add(%1, %2, %1)::f32[3]): add takes 2 arguments, not 3",
                       UserError);
  t = sample();
  t.ops[3].outs.clear();
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 4 (sum(%3; dims=[1])) at m.jl:3: sum has 1 outputs, not 0",
                       UserError);
}

TEST_CASE("validator: attributes against the schema") {
  Tape t = sample();
  t.ops[3].attrs = Attrs{};
  CHECK_THROWS_WITH_AS(
      validate(t), "tape f: op 4 (%4 = sum(%3)::f32[]) at m.jl:3: needs attribute 'dims' (ints)",
      UserError);
  t.ops[3].attrs = Attrs{{"dims", int64_t{1}}};
  CHECK_THROWS_WITH_AS(
      validate(t),
      "tape f: op 4 (%4 = sum(%3; dims=1)::f32[]) at m.jl:3: attribute 'dims' must be "
      "ints, not int 1",
      UserError);
  t.ops[3].attrs = Attrs{{"dims", std::vector<int64_t>{2}}};
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 4 (%4 = sum(%3; dims=[2])::f32[]) at m.jl:3: dims=[2]: dim 2 is "
                       "out of range for f32[3] (dims are 1-based)",
                       UserError);
}

TEST_CASE("validator: inputs first, named, unique") {
  Tape t = sample();
  std::swap(t.ops[1], t.ops[2]);
  // The swapped call now reads %2 before the input defines it.
  CHECK_THROWS_AS(validate(t), UserError);
  Builder b("g");
  Var x = b.input("x", f32({}));
  b.neg(x);
  Tape late = b.finish();
  Op extra;
  extra.kind = OpKind::input;
  extra.name = "z";
  extra.outs = {Var{2}};
  late.types.push_back(f32({}));
  late.ops.push_back(extra);
  CHECK_THROWS_WITH_AS(validate(late),
                       "tape g: op 3 (in  %3::f32[] z): inputs must come before every other op; "
                       "move it to the top",
                       UserError);
  t = sample();
  t.ops[1].name = "x";
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 2 (in  %2::f32[3] x): another input is named 'x'; rename one",
                       UserError);
  t.ops[1].name = "";
  CHECK_THROWS_WITH_AS(validate(t), "tape f: op 2 (in  %2::f32[3] ): an input needs a name",
                       UserError);
}

TEST_CASE("validator: constants hold exactly their elements") {
  Builder b("c");
  b.constant(DType::f32, 1.0, {2});
  Tape t = b.finish();
  t.ops[0].value = std::vector<uint8_t>(t.ops[0].value.begin(), t.ops[0].value.end() - 1);
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape c: op 1 (%1 = const(<7 bytes>)::f32[2]): its value has 7 bytes, but "
                       "f32[2] needs 8",
                       UserError);
  Builder bb("c");
  bb.constant(DType::boolean, 1.0, {});
  t = bb.finish();
  t.ops[0].value[0] = 7;
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape c: op 1 (%1 = const(true)::bool[]): a bool constant holds the byte 7; "
                       "bools are stored as 0 or 1",
                       UserError);
}

TEST_CASE("validator: absurd shapes") {
  Tape t = sample();
  t.types.set(0, f32({-1}));
  CHECK_THROWS_WITH_AS(validate(t), "tape f: op 1 (in  %1::f32[-1] x): dimension -1 is negative",
                       UserError);
}

TEST_CASE("validator: outputs") {
  Tape t = sample();
  t.outputs.push_back({Var{9}, "extra"});
  CHECK_THROWS_WITH_AS(validate(t), "tape f: output 'extra' is %10, which no op defines",
                       UserError);
  t = sample();
  t.outputs.push_back({Var{2}, "loss"});
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: two outputs are named 'loss'; give each output its own name",
                       UserError);
}

TEST_CASE("validator: locations refer to known files") {
  Tape t = sample();
  t.ops[2].loc = Loc{5, 1};
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape f: op 3 (%3 = add(%1, %2)::f32[3]): its location names file 5, which "
                       "the tape does not list",
                       UserError);
}
