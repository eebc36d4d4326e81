// Inference of the elementwise, reduce, creation and effect families: edge cases and messages.
#include <doctest/doctest.h>

#include "unit/tape/infer_helpers.h"

using namespace ytape;
using namespace ytape::testing;

// ---- elementwise ------------------------------------------------------------------------

TEST_CASE("binary ops broadcast by Julia's rule") {
  CHECK(infer(Prim::add, {"f32[]", "f32[2,3]"}) == "f32[2,3]");
  CHECK(infer(Prim::add, {"f32[2,3]", "f32[]"}) == "f32[2,3]");
  CHECK(infer(Prim::add, {"f32[3]", "f32[3,4]"}) == "f32[3,4]");
  CHECK(infer(Prim::add, {"f32[1,4,1]", "f32[3,1]"}) == "f32[3,4,1]");
  CHECK(infer(Prim::add, {"f32[1]", "f32[0,2]"}) == "f32[0,2]");
  CHECK(infer(Prim::mul, {"f32[0]", "f32[1]"}) == "f32[0]");
  CHECK(infer(Prim::mul, {"f32[0]", "f32[]"}) == "f32[0]");
  CHECK_THROWS_WITH_AS(infer(Prim::add, {"f32[3,4]", "f32[5]"}),
                       "shapes f32[3,4] and f32[5] do not broadcast (dim 1: 3 vs 5)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::add, {"f32[2,3]", "f32[2,4]"}),
                       "shapes f32[2,3] and f32[2,4] do not broadcast (dim 2: 3 vs 4)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::sub, {"f32[0]", "f32[2]"}),
                       "shapes f32[0] and f32[2] do not broadcast (dim 1: 0 vs 2)", UserError);
}

TEST_CASE("elementwise ops check dtypes") {
  CHECK_THROWS_WITH_AS(infer(Prim::neg, {"bool[]"}),
                       "the argument must be numeric (f32, f64 or i64), got bool[]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::relu, {"bool[2]"}),
                       "the argument must be numeric (f32, f64 or i64), got bool[2]", UserError);
  for (Prim p : elementwise_prims(1, DTypes::floating)) {
    CAPTURE(prim_name(p));
    CHECK_THROWS_WITH_AS(infer(p, {"i64[3]"}), "the argument must be f32 or f64, got i64[3]",
                         UserError);
  }
  CHECK_THROWS_WITH_AS(infer(Prim::add, {"f32[2]", "f64[2]"}),
                       "arguments must have one dtype, got f32[2] and f64[2]; convert one first",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max, {"bool[2]", "bool[2]"}),
                       "the arguments must be numeric (f32, f64 or i64), got bool[2]", UserError);
  for (Prim p : elementwise_prims(2, DTypes::floating)) {
    CAPTURE(prim_name(p));
    CHECK_THROWS_WITH_AS(infer(p, {"i64[2]", "i64[2]"}),
                         "the arguments must be f32 or f64, got i64[2]", UserError);
  }
  CHECK_THROWS_WITH_AS(infer(Prim::pow, {"f32[2]", "f64[]"}),
                       "arguments must have one dtype, got f32[2] and f64[]; convert one first",
                       UserError);
}

TEST_CASE("comparisons give bool") {
  CHECK(infer(Prim::eq, {"f32[2]", "f32[2,3]"}) == "bool[2,3]");
  CHECK(infer(Prim::ge, {"i64[]", "i64[4]"}) == "bool[4]");
  CHECK_THROWS_WITH_AS(infer(Prim::lt, {"bool[2]", "bool[2]"}),
                       "the arguments must be numeric (f32, f64 or i64), got bool[2]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::eq, {"i64[2]", "f32[2]"}),
                       "arguments must have one dtype, got i64[2] and f32[2]; convert one first",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::ne, {"i64[2]", "i64[3]"}),
                       "shapes i64[2] and i64[3] do not broadcast (dim 1: 2 vs 3)", UserError);
}

TEST_CASE("select broadcasts its three arguments together") {
  CHECK(infer(Prim::select, {"bool[]", "i64[2]", "i64[2]"}) == "i64[2]");
  CHECK(infer(Prim::select, {"bool[2,3]", "f64[]", "f64[]"}) == "f64[2,3]");
  CHECK_THROWS_WITH_AS(infer(Prim::select, {"f32[3]", "f32[3]", "f32[3]"}),
                       "the condition must be bool, got f32[3]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::select, {"bool[3]", "f32[3]", "f64[3]"}),
                       "arguments must have one dtype, got f32[3] and f64[3]; convert one first",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::select, {"bool[2]", "f32[3]", "f32[3]"}),
                       "shapes bool[2] and f32[3] do not broadcast (dim 1: 2 vs 3)", UserError);
}

TEST_CASE("convert changes only the dtype") {
  CHECK(infer(Prim::convert, {"bool[4]"}, {{"dtype", DType::f64}}) == "f64[4]");
  CHECK(infer(Prim::convert, {"f32[]"}, {{"dtype", DType::boolean}}) == "bool[]");
}

// ---- reduce -----------------------------------------------------------------------------

TEST_CASE("reductions drop the reduced dims") {
  CHECK(infer(Prim::sum, {"f32[3,4,5]"}, {{"dims", Ints{}}}) == "f32[3,4,5]");
  CHECK(infer(Prim::sum, {"f32[3,4,5]"}, {{"dims", Ints{2}}}) == "f32[3,5]");
  CHECK(infer(Prim::sum, {"i64[]"}, {{"dims", Ints{}}}) == "i64[]");
  CHECK(infer(Prim::sum, {"f32[0,4]"}, {{"dims", Ints{1}}}) == "f32[4]");
  CHECK(infer(Prim::maximum, {"f32[0]"}, {{"dims", Ints{1}}}) == "f32[]");
  CHECK(infer(Prim::minimum, {"i64[2,0]"}, {{"dims", Ints{1}}}) == "i64[0]");
  CHECK_THROWS_WITH_AS(infer(Prim::sum, {"f32[2,2]"}, {{"dims", Ints{1, 1}}}),
                       "dims=[1,1] names dim 1 twice", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::sum, {"f32[2,2]"}, {{"dims", Ints{1, 3}}}),
                       "dims=[1,3]: dim 3 is out of range for f32[2,2] (dims are 1-based)",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::maximum, {"f32[2,2]"}, {{"dims", Ints{0}}}),
                       "dims=[0]: dim 0 is out of range for f32[2,2] (dims are 1-based)",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::minimum, {"f32[]"}, {{"dims", Ints{1}}}),
                       "dims=[1]: dim 1 is out of range for f32[] (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::sum, {"bool[2]"}, {{"dims", Ints{1}}}),
                       "the argument must be numeric (f32, f64 or i64), got bool[2]", UserError);
}

TEST_CASE("argmax drops its dim and gives i64") {
  CHECK(infer(Prim::argmax, {"i64[3,4,5]"}, {{"dim", 2}}) == "i64[3,5]");
  CHECK(infer(Prim::argmax, {"f32[7]"}, {{"dim", 1}}) == "i64[]");
  CHECK(infer(Prim::argmax, {"f32[0,3]"}, {{"dim", 2}}) == "i64[0]");
  CHECK_THROWS_WITH_AS(infer(Prim::argmax, {"f32[0,3]"}, {{"dim", 1}}),
                       "dim=1 of f32[0,3] is empty, so it has no maximum", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::argmax, {"f32[2,3]"}, {{"dim", 0}}),
                       "dim=0 is out of range for rank 2 (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::argmax, {"f32[2,3]"}, {{"dim", 3}}),
                       "dim=3 is out of range for rank 2 (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::argmax, {"bool[2]"}, {{"dim", 1}}),
                       "the argument must be numeric (f32, f64 or i64), got bool[2]", UserError);
}

TEST_CASE("softmax keeps the shape") {
  CHECK(infer(Prim::softmax, {"f32[3,4,5]"}, {{"dims", Ints{1, 3}}}) == "f32[3,4,5]");
  CHECK(infer(Prim::log_softmax, {"f32[0,4]"}, {{"dims", Ints{1}}}) == "f32[0,4]");
  CHECK(infer(Prim::softmax, {"f32[3]"}, {{"dims", Ints{}}}) == "f32[3]");
  CHECK_THROWS_WITH_AS(infer(Prim::softmax, {"i64[3]"}, {{"dims", Ints{1}}}),
                       "the argument must be f32 or f64, got i64[3]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::log_softmax, {"f32[3,4]"}, {{"dims", Ints{2, 2}}}),
                       "dims=[2,2] names dim 2 twice", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::log_softmax, {"f32[3,4]"}, {{"dims", Ints{-1}}}),
                       "dims=[-1]: dim -1 is out of range for f32[3,4] (dims are 1-based)",
                       UserError);
}

// ---- creation ---------------------------------------------------------------------------

TEST_CASE("fill checks its shape and value") {
  auto fill = [](double value, DType dtype, Ints shape) {
    return infer(Prim::fill, {}, {{"value", value}, {"dtype", dtype}, {"shape", std::move(shape)}});
  };
  CHECK(fill(3, DType::i64, {}) == "i64[]");
  CHECK(fill(1, DType::boolean, {0, 2}) == "bool[0,2]");
  CHECK(fill(-0.25, DType::f64, {k2to48}) == "f64[281474976710656]");
  CHECK_THROWS_WITH_AS(fill(0, DType::f32, {2, -1}), "shape: dimension -1 is negative", UserError);
  CHECK_THROWS_WITH_AS(fill(0, DType::f32, {1 << 25, 1 << 25}),
                       "shape: shape [33554432,33554432] has more than 2^48 elements", UserError);
  CHECK_THROWS_WITH_AS(fill(1.5, DType::i64, {2}), "value=1.5 is not an exact i64", UserError);
  CHECK_THROWS_WITH_AS(fill(1e17, DType::i64, {2}), "value=1e+17 is not an exact i64", UserError);
  CHECK_THROWS_WITH_AS(fill(NAN, DType::i64, {2}), "value=nan is not an exact i64", UserError);
  CHECK_THROWS_WITH_AS(fill(2, DType::boolean, {2}), "value=2.0 is not a bool (use 0 or 1)",
                       UserError);
}

TEST_CASE("iota, rand and randn check dtype, shape and dim") {
  CHECK(infer(Prim::iota, {}, {{"dtype", DType::f32}, {"shape", Ints{5}}, {"dim", 1}}) == "f32[5]");
  CHECK_THROWS_WITH_AS(
      infer(Prim::iota, {}, {{"dtype", DType::boolean}, {"shape", Ints{5}}, {"dim", 1}}),
      "dtype must be numeric, got bool", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::iota, {}, {{"dtype", DType::i64}, {"shape", Ints{3, 4}}, {"dim", 3}}),
      "dim=3 is out of range for rank 2 (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::iota, {}, {{"dtype", DType::i64}, {"shape", Ints{-3}}, {"dim", 1}}),
      "shape: dimension -3 is negative", UserError);
  for (Prim p : {Prim::rand, Prim::randn}) {
    CAPTURE(prim_name(p));
    CHECK(infer(p, {}, {{"dtype", DType::f64}, {"shape", Ints{}}, {"seed", 0}}) == "f64[]");
    CHECK_THROWS_WITH_AS(infer(p, {}, {{"dtype", DType::i64}, {"shape", Ints{2}}, {"seed", 0}}),
                         "dtype must be f32 or f64, got i64", UserError);
    CHECK_THROWS_WITH_AS(infer(p, {}, {{"dtype", DType::f32}, {"shape", Ints{-2}}, {"seed", 0}}),
                         "shape: dimension -2 is negative", UserError);
  }
}

// ---- effect -----------------------------------------------------------------------------

TEST_CASE("print matches placeholders to arguments; guard takes a bool scalar") {
  CHECK(infer(Prim::print, {}) == "");
  CHECK(infer(Prim::print, {"f32[2]", "bool[]", "i64[0]"}) == "");
  CHECK_THROWS_WITH_AS(infer(Prim::print, {"f32[2]"}, {{"format", std::string("no holes")}}),
                       "format \"no holes\" has 0 placeholder(s) {} for 1 argument(s)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::print, {"f32[2]", "f32[]"}, {{"format", std::string("x={}")}}),
                       "format \"x={}\" has 1 placeholder(s) {} for 2 argument(s)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::guard, {"bool[1]"}, {{"message", std::string("m")}}),
                       "the condition must be a bool scalar, got bool[1]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::guard, {"f32[]"}, {{"message", std::string("m")}}),
                       "the condition must be a bool scalar, got f32[]", UserError);
}
