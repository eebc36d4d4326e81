// Type and shape inference of every primitive: one good case each in a table, then per
// family the edge cases and the exact message of each rejected input.
#include "tape/infer.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "tape/error.h"
#include "tape/prim.h"

using namespace ytape;

namespace {

using Ints = std::vector<int64_t>;

constexpr int64_t k2to48 = int64_t{1} << 48;

// The output types of `p` on arguments of the given types, space-separated ("" if none).
std::string infer(Prim p, std::vector<std::string_view> args, const Attrs& attrs = {}) {
  std::vector<Type> types;
  for (std::string_view a : args) {
    Type t;
    std::string why;
    REQUIRE_MESSAGE(parse_type(a, &t, &why), why);
    types.push_back(std::move(t));
  }
  std::vector<Type> out = infer_types(p, types, normalize_attrs(p, attrs));
  REQUIRE(out.size() == static_cast<size_t>(prim_info(p).outputs));
  std::vector<std::string> text;
  for (const Type& t : out) text.push_back(type_str(t));
  return fmt::format("{}", fmt::join(text, " "));
}

struct Good {
  Prim prim;
  std::vector<std::string_view> args;
  Attrs attrs;
  std::string_view out;
};

const Attrs kResNetStem{{"stride", Ints{2, 2}}, {"pad", Ints{3, 3, 3, 3}}};
const Attrs kResNetPool{{"window", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"pad", Ints{1, 1, 1, 1}}};

// One good case per primitive.
const std::vector<Good>& good_cases() {
  static const std::vector<Good> cases = {
      {Prim::neg, {"f32[3,4]"}, {}, "f32[3,4]"},
      {Prim::exp, {"f32[3,4]"}, {}, "f32[3,4]"},
      {Prim::log, {"f64[2]"}, {}, "f64[2]"},
      {Prim::log1p, {"f32[]"}, {}, "f32[]"},
      {Prim::expm1, {"f32[0,2]"}, {}, "f32[0,2]"},
      {Prim::sqrt, {"f64[5]"}, {}, "f64[5]"},
      {Prim::abs, {"i64[5]"}, {}, "i64[5]"},
      {Prim::sign, {"f32[2,2]"}, {}, "f32[2,2]"},
      {Prim::sin, {"f32[7]"}, {}, "f32[7]"},
      {Prim::cos, {"f32[7]"}, {}, "f32[7]"},
      {Prim::tan, {"f64[7]"}, {}, "f64[7]"},
      {Prim::tanh, {"f32[7,1]"}, {}, "f32[7,1]"},
      {Prim::sigmoid, {"f32[10,32]"}, {}, "f32[10,32]"},
      {Prim::relu, {"i64[3]"}, {}, "i64[3]"},
      {Prim::softplus, {"f32[3]"}, {}, "f32[3]"},
      {Prim::add, {"f32[3,1]", "f32[1,4]"}, {}, "f32[3,4]"},
      {Prim::sub, {"i64[3]", "i64[]"}, {}, "i64[3]"},
      {Prim::mul, {"f64[2,3]", "f64[2]"}, {}, "f64[2,3]"},
      {Prim::div, {"f32[4]", "f32[4]"}, {}, "f32[4]"},
      {Prim::pow, {"f64[]", "f64[2,2]"}, {}, "f64[2,2]"},
      {Prim::max, {"f32[3,4]", "f32[1,4]"}, {}, "f32[3,4]"},
      {Prim::min, {"i64[1]", "i64[5]"}, {}, "i64[5]"},
      {Prim::eq, {"bool[3]", "bool[3]"}, {}, "bool[3]"},
      {Prim::ne, {"i64[3,1]", "i64[1,2]"}, {}, "bool[3,2]"},
      {Prim::lt, {"f32[3]", "f32[]"}, {}, "bool[3]"},
      {Prim::le, {"i64[3]", "i64[3]"}, {}, "bool[3]"},
      {Prim::gt, {"f64[2,2]", "f64[2,2]"}, {}, "bool[2,2]"},
      {Prim::ge, {"f32[]", "f32[]"}, {}, "bool[]"},
      {Prim::select, {"bool[3,1]", "f32[1,4]", "f32[]"}, {}, "f32[3,4]"},
      {Prim::convert, {"f32[2,3]"}, {{"dtype", DType::i64}}, "i64[2,3]"},
      {Prim::sum, {"f32[3,4,5]"}, {{"dims", Ints{3, 1}}}, "f32[4]"},
      {Prim::maximum, {"i64[3,4]"}, {{"dims", Ints{1}}}, "i64[4]"},
      {Prim::minimum, {"f64[3,4]"}, {{"dims", Ints{1, 2}}}, "f64[]"},
      {Prim::argmax, {"f32[10,32]"}, {{"dim", 1}}, "i64[32]"},
      {Prim::softmax, {"f32[10,32]"}, {{"dims", Ints{1}}}, "f32[10,32]"},
      {Prim::log_softmax, {"f64[10,32]"}, {{"dims", Ints{1}}}, "f64[10,32]"},
      {Prim::reshape, {"f32[2,3]"}, {{"shape", Ints{3, 2}}}, "f32[3,2]"},
      {Prim::permutedims, {"f32[2,3,4]"}, {{"perm", Ints{3, 1, 2}}}, "f32[4,2,3]"},
      {Prim::broadcast_to, {"f32[3]"}, {{"shape", Ints{3, 4}}}, "f32[3,4]"},
      {Prim::slice,
       {"f32[10,5]"},
       {{"start", Ints{2, 1}}, {"stop", Ints{10, 5}}, {"step", Ints{2, 1}}},
       "f32[5,5]"},
      {Prim::concat, {"f32[2,3]", "f32[2,4]"}, {{"dim", 2}}, "f32[2,7]"},
      {Prim::pad,
       {"f32[3,4]"},
       {{"lo", Ints{1, 0}}, {"hi", Ints{2, 1}}, {"interior", Ints{1, 0}}},
       "f32[8,5]"},
      {Prim::gather, {"f32[10,32]", "i64[1,32]"}, {{"dim", 1}}, "f32[1,32]"},
      {Prim::scatter_add, {"f32[1,32]", "i64[1,32]"}, {{"dim", 1}, {"size", 10}}, "f32[10,32]"},
      {Prim::matmul, {"f32[3,4]", "f32[4,5]"}, {}, "f32[3,5]"},
      {Prim::conv2d, {"f32[224,224,3,1]", "f32[7,7,3,64]"}, kResNetStem, "f32[112,112,64,1]"},
      {Prim::conv2d_backward_input,
       {"f32[112,112,64,1]", "f32[7,7,3,64]"},
       {{"shape", Ints{224, 224, 3, 1}}, {"stride", Ints{2, 2}}, {"pad", Ints{3, 3, 3, 3}}},
       "f32[224,224,3,1]"},
      {Prim::conv2d_backward_filter,
       {"f32[224,224,3,1]", "f32[112,112,64,1]"},
       {{"shape", Ints{7, 7, 3, 64}}, {"stride", Ints{2, 2}}, {"pad", Ints{3, 3, 3, 3}}},
       "f32[7,7,3,64]"},
      {Prim::max_pool2d, {"f32[112,112,64,1]"}, kResNetPool, "f32[56,56,64,1]"},
      {Prim::max_pool2d_with_indices,
       {"f32[112,112,64,1]"},
       kResNetPool,
       "f32[56,56,64,1] i64[56,56,64,1]"},
      {Prim::max_pool2d_backward,
       {"f32[56,56,64,1]", "i64[56,56,64,1]"},
       {{"shape", Ints{112, 112, 64, 1}}},
       "f32[112,112,64,1]"},
      {Prim::avg_pool2d,
       {"f32[7,7,512,1]"},
       {{"window", Ints{7, 7}}, {"stride", Ints{1, 1}}},
       "f32[1,1,512,1]"},
      {Prim::avg_pool2d_backward,
       {"f32[1,1,512,1]"},
       {{"shape", Ints{7, 7, 512, 1}}, {"window", Ints{7, 7}}, {"stride", Ints{1, 1}}},
       "f32[7,7,512,1]"},
      {Prim::batchnorm, {"f32[56,56,64,8]", "f32[64]", "f32[64]"}, {}, "f32[56,56,64,8]"},
      {Prim::batchnorm_with_stats,
       {"f32[16,32]", "f32[16]", "f32[16]"},
       {},
       "f32[16,32] f32[16] f32[16]"},
      {Prim::batchnorm_backward,
       {"f32[56,56,64,8]", "f32[56,56,64,8]", "f32[64]", "f32[64]", "f32[64]"},
       {},
       "f32[56,56,64,8] f32[64] f32[64]"},
      {Prim::fill, {}, {{"value", 0.5}, {"dtype", DType::f32}, {"shape", Ints{2, 3}}}, "f32[2,3]"},
      {Prim::iota, {}, {{"dtype", DType::i64}, {"shape", Ints{3, 4}}, {"dim", 2}}, "i64[3,4]"},
      {Prim::rand, {}, {{"dtype", DType::f32}, {"shape", Ints{2, 2}}, {"seed", 1}}, "f32[2,2]"},
      {Prim::randn, {}, {{"dtype", DType::f64}, {"shape", Ints{5}}, {"seed", 7}}, "f64[5]"},
      {Prim::print, {"f32[2]", "i64[]"}, {{"format", std::string("x={} n={}")}}, ""},
      {Prim::guard, {"bool[]"}, {{"message", std::string("x must be positive")}}, ""},
  };
  return cases;
}

}  // namespace

TEST_CASE("every primitive has an inference rule") {
  for (Prim p : all_prims()) {
    CAPTURE(prim_name(p));
    CHECK(has_infer_rule(p));
  }
}

TEST_CASE("every primitive infers its good case, with its number of outputs") {
  std::set<Prim> covered;
  for (const Good& g : good_cases()) {
    CAPTURE(prim_name(g.prim));
    CHECK(infer(g.prim, g.args, g.attrs) == g.out);
    covered.insert(g.prim);
  }
  for (Prim p : all_prims()) {
    CAPTURE(prim_name(p));
    CHECK(covered.count(p) == 1);
  }
}

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
  for (Prim p : {Prim::exp, Prim::log, Prim::log1p, Prim::expm1, Prim::sqrt, Prim::sin, Prim::cos,
                 Prim::tan, Prim::tanh, Prim::sigmoid, Prim::softplus}) {
    CAPTURE(prim_name(p));
    CHECK_THROWS_WITH_AS(infer(p, {"i64[3]"}), "the argument must be f32 or f64, got i64[3]",
                         UserError);
  }
  CHECK_THROWS_WITH_AS(infer(Prim::add, {"f32[2]", "f64[2]"}),
                       "arguments must have one dtype, got f32[2] and f64[2]; convert one first",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max, {"bool[2]", "bool[2]"}),
                       "the arguments must be numeric (f32, f64 or i64), got bool[2]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::div, {"i64[2]", "i64[2]"}),
                       "the arguments must be f32 or f64, got i64[2]", UserError);
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

// ---- shape ------------------------------------------------------------------------------

TEST_CASE("reshape keeps the element count") {
  CHECK(infer(Prim::reshape, {"f32[2,3]"}, {{"shape", Ints{6}}}) == "f32[6]");
  CHECK(infer(Prim::reshape, {"i64[1,1]"}, {{"shape", Ints{}}}) == "i64[]");
  CHECK(infer(Prim::reshape, {"f32[]"}, {{"shape", Ints{1, 1, 1}}}) == "f32[1,1,1]");
  CHECK(infer(Prim::reshape, {"f32[0,3]"}, {{"shape", Ints{3, 0, 7}}}) == "f32[3,0,7]");
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[2,3]"}, {{"shape", Ints{4}}}),
                       "shape=[4] has 4 elements, but f32[2,3] has 6", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[6]"}, {{"shape", Ints{-1, 6}}}),
                       "shape: dimension -1 is negative", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[6]"}, {{"shape", Ints{-2, -3}}}),
                       "shape: dimension -2 is negative", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[0]"}, {{"shape", Ints{0, int64_t{1} << 62}}}),
                       "shape: dimension 4611686018427387904 is too large", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[2]"}, {{"shape", Ints{1 << 24, 1 << 24, 2}}}),
                       "shape: shape [16777216,16777216,2] has more than 2^48 elements", UserError);
  // 2^32 * 2^32 wraps to 0 in int64 arithmetic: it must not pass as a reshape of 0 elements.
  CHECK_THROWS_WITH_AS(
      infer(Prim::reshape, {"f32[0]"}, {{"shape", Ints{int64_t{1} << 32, int64_t{1} << 32}}}),
      "shape: shape [4294967296,4294967296] has more than 2^48 elements", UserError);
}

TEST_CASE("permutedims permutes the dims") {
  CHECK(infer(Prim::permutedims, {"f32[2,3]"}, {{"perm", Ints{2, 1}}}) == "f32[3,2]");
  CHECK(infer(Prim::permutedims, {"f32[]"}, {{"perm", Ints{}}}) == "f32[]");
  CHECK(infer(Prim::permutedims, {"bool[0,5]"}, {{"perm", Ints{2, 1}}}) == "bool[5,0]");
  for (const Ints& perm : {Ints{1, 1}, Ints{1}, Ints{1, 2, 3}, Ints{0, 1}, Ints{1, 3}}) {
    CHECK_THROWS_WITH_AS(
        infer(Prim::permutedims, {"f32[2,3]"}, {{"perm", perm}}),
        fmt::format("perm=[{}] is not a permutation of 1..2", fmt::join(perm, ",")).c_str(),
        UserError);
  }
}

TEST_CASE("broadcast_to follows Julia's rule") {
  CHECK(infer(Prim::broadcast_to, {"f32[]"}, {{"shape", Ints{2, 2}}}) == "f32[2,2]");
  CHECK(infer(Prim::broadcast_to, {"f32[1,4]"}, {{"shape", Ints{0, 4}}}) == "f32[0,4]");
  CHECK(infer(Prim::broadcast_to, {"i64[3,1]"}, {{"shape", Ints{3, 5, 2}}}) == "i64[3,5,2]");
  CHECK(infer(Prim::broadcast_to, {"f32[0]"}, {{"shape", Ints{0, 3}}}) == "f32[0,3]");
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[3,4]"}, {{"shape", Ints{3}}}),
                       "shape=[3] has rank 1, less than the rank 2 of f32[3,4]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[3,4]"}, {{"shape", Ints{3, 5}}}),
                       "f32[3,4] does not broadcast to shape=[3,5] (dim 2: 4 vs 5)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[0]"}, {{"shape", Ints{2}}}),
                       "f32[0] does not broadcast to shape=[2] (dim 1: 0 vs 2)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[1]"}, {{"shape", Ints{1, -4}}}),
                       "shape: dimension -4 is negative", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[]"}, {{"shape", Ints{1 << 30, 1 << 30}}}),
                       "shape: shape [1073741824,1073741824] has more than 2^48 elements",
                       UserError);
}

TEST_CASE("slice takes Julia ranges") {
  Attrs a{{"start", Ints{1}}, {"stop", Ints{10}}, {"step", Ints{3}}};
  CHECK(infer(Prim::slice, {"f32[10]"}, a) == "f32[4]");
  a = {{"start", Ints{4, 1}}, {"stop", Ints{3, 5}}, {"step", Ints{1, 1}}};
  CHECK(infer(Prim::slice, {"f32[10,5]"}, a) == "f32[0,5]");
  // An empty range may start just past the end.
  a = {{"start", Ints{11}}, {"stop", Ints{10}}, {"step", Ints{1}}};
  CHECK(infer(Prim::slice, {"f32[10]"}, a) == "f32[0]");
  // 3:2:2 is empty although (2 - 3) / 2 + 1 truncates to 1.
  a = {{"start", Ints{3}}, {"stop", Ints{2}}, {"step", Ints{2}}};
  CHECK(infer(Prim::slice, {"f32[10]"}, a) == "f32[0]");
  a = {{"start", Ints{1}}, {"stop", Ints{0}}, {"step", Ints{1}}};
  CHECK(infer(Prim::slice, {"f32[0]"}, a) == "f32[0]");
  a = {{"start", Ints{}}, {"stop", Ints{}}, {"step", Ints{}}};
  CHECK(infer(Prim::slice, {"i64[]"}, a) == "i64[]");

  auto bad = [](Ints start, Ints stop, Ints step) {
    return infer(
        Prim::slice, {"f32[10,5]"},
        {{"start", std::move(start)}, {"stop", std::move(stop)}, {"step", std::move(step)}});
  };
  CHECK_THROWS_WITH_AS(bad({1}, {1, 1}, {1, 1}), "start must have 2 elements, got [1]", UserError);
  CHECK_THROWS_WITH_AS(bad({1, 1}, {1, 1}, {1, 1, 1}), "step must have 2 elements, got [1,1,1]",
                       UserError);
  CHECK_THROWS_WITH_AS(bad({0, 1}, {1, 1}, {1, 1}), "start=[0,1] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad({1, 1}, {1, 1}, {1, 0}), "step=[1,0] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad({1, 1}, {11, 5}, {1, 1}),
                       "stop=[11,5] exceeds f32[10,5] at dim 1 (11 > 10)", UserError);
  CHECK_THROWS_WITH_AS(bad({5, 1}, {3, 5}, {1, 1}),
                       "start=[5,1] and stop=[3,5] give a negative length at dim 1 (write an "
                       "empty range as stop = start - 1)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad({1, 1}, {1, INT64_MIN}, {1, 1}),
                       "start=[1,1] and stop=[1,-9223372036854775808] give a negative length at "
                       "dim 2 (write an empty range as stop = start - 1)",
                       UserError);
}

TEST_CASE("concat joins along one dim") {
  CHECK(infer(Prim::concat, {"f32[2,3]"}, {{"dim", 1}}) == "f32[2,3]");
  CHECK(infer(Prim::concat, {"f32[2,3]", "f32[5,3]", "f32[0,3]"}, {{"dim", 1}}) == "f32[7,3]");
  CHECK(infer(Prim::concat, {"bool[0]", "bool[0]"}, {{"dim", 1}}) == "bool[0]");
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {}, {{"dim", 1}}), "needs at least one argument",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[2]", "i64[2]"}, {{"dim", 1}}),
                       "arguments must have one dtype, got f32[2] and i64[2]; convert one first",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[2,3]", "f32[2]"}, {{"dim", 1}}),
                       "arguments must have one rank, got f32[2,3] and f32[2]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[2,3]", "f32[2,3]"}, {{"dim", 3}}),
                       "dim=3 is out of range for rank 2 (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[]", "f32[]"}, {{"dim", 1}}),
                       "dim=1 is out of range for rank 0 (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[2,3]", "f32[3,3]"}, {{"dim", 2}}),
                       "f32[2,3] and f32[3,3] differ at dim 1, but dim=2", UserError);
  std::string big = fmt::format("f32[{}]", k2to48);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {big, big}, {{"dim", 1}}),
                       "the result: dimension 562949953421312 is too large", UserError);
}

TEST_CASE("pad adds lo, hi and interior elements") {
  Attrs a{{"lo", Ints{1}}, {"hi", Ints{1}}, {"interior", Ints{5}}, {"value", 1}};
  CHECK(infer(Prim::pad, {"f32[0]"}, a) == "f32[2]");
  CHECK(infer(Prim::pad, {"f32[1]"}, a) == "f32[3]");
  CHECK(infer(Prim::pad, {"i64[2]"}, a) == "i64[9]");
  CHECK(infer(Prim::pad, {"bool[2]"}, a) == "bool[9]");
  CHECK(infer(Prim::pad, {"f32[]"}, {{"lo", Ints{}}, {"hi", Ints{}}, {"interior", Ints{}}}) ==
        "f32[]");
  a.set("value", 1.5);
  CHECK(infer(Prim::pad, {"f64[2]"}, a) == "f64[9]");
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"i64[2]"}, a), "value=1.5 is not an exact i64", UserError);
  a.set("value", 2.0);
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"bool[2]"}, a), "value=2.0 is not a bool (use 0 or 1)",
                       UserError);
  a.set("value", 0.0);
  a.set("lo", Ints{-1});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[2]"}, a), "lo=[-1] must be non-negative", UserError);
  a.set("lo", Ints{1, 1});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[2]"}, a), "lo must have 1 elements, got [1,1]",
                       UserError);
  a.set("lo", Ints{0});
  a.set("interior", Ints{int64_t{1} << 62});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[3]"}, a),
                       "interior=[4611686018427387904]: 4611686018427387904 is too large",
                       UserError);
  a.set("interior", Ints{int64_t{1} << 47});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[5]"}, a),
                       "interior=[140737488355328] makes dim 1 of f32[5] larger than 2^48",
                       UserError);
  a.set("interior", Ints{0});
  a.set("hi", Ints{k2to48});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[5]"}, a),
                       "the result: dimension 281474976710661 is too large", UserError);
}

// ---- index ------------------------------------------------------------------------------

TEST_CASE("gather picks along one dim, broadcasting idx elsewhere") {
  // Labels: logits (C, N), one index per sample.
  CHECK(infer(Prim::gather, {"f32[10,32]", "i64[1,32]"}, {{"dim", 1}}) == "f32[1,32]");
  // Embeddings: table (D, V), token ids (1, L).
  CHECK(infer(Prim::gather, {"f32[64,1000]", "i64[1,16]"}, {{"dim", 2}}) == "f32[64,16]");
  CHECK(infer(Prim::gather, {"bool[3]", "i64[5]"}, {{"dim", 1}}) == "bool[5]");
  CHECK(infer(Prim::gather, {"f32[3,4]", "i64[0,4]"}, {{"dim", 1}}) == "f32[0,4]");
  CHECK_THROWS_WITH_AS(infer(Prim::gather, {"f32[10,32]", "f32[1,32]"}, {{"dim", 1}}),
                       "idx must be i64, got f32[1,32]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::gather, {"f32[10,32]", "i64[32]"}, {{"dim", 1}}),
                       "idx i64[32] must have the rank of f32[10,32]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::gather, {"f32[10,32]", "i64[1,32]"}, {{"dim", 3}}),
                       "dim=3 is out of range for rank 2 (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::gather, {"f32[10,32]", "i64[1,31]"}, {{"dim", 1}}),
                       "idx i64[1,31] does not fit f32[10,32] at dim 2 (31 is neither 1 nor 32)",
                       UserError);
}

TEST_CASE("scatter_add is gather's transpose") {
  CHECK(infer(Prim::scatter_add, {"f32[64,16]", "i64[1,16]"}, {{"dim", 2}, {"size", 1000}}) ==
        "f32[64,1000]");
  CHECK(infer(Prim::scatter_add, {"i64[4]", "i64[4]"}, {{"dim", 1}, {"size", 0}}) == "i64[0]");
  CHECK_THROWS_WITH_AS(
      infer(Prim::scatter_add, {"bool[1,32]", "i64[1,32]"}, {{"dim", 1}, {"size", 10}}),
      "y must be numeric (f32, f64 or i64), got bool[1,32]", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::scatter_add, {"f32[1,32]", "i64[2,32]"}, {{"dim", 1}, {"size", 10}}),
      "idx i64[2,32] and y f32[1,32] differ at dim=1 (2 vs 1)", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::scatter_add, {"f32[1,32]", "i64[1,2]"}, {{"dim", 1}, {"size", 10}}),
      "idx i64[1,2] does not fit f32[1,32] at dim 2 (2 is neither 1 nor 32)", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::scatter_add, {"f32[1,32]", "i64[1,32]"}, {{"dim", 1}, {"size", -1}}),
      "size: dimension -1 is negative", UserError);
}

// ---- linalg -----------------------------------------------------------------------------

TEST_CASE("matmul multiplies (M, K) by (K, N), batch dims last") {
  CHECK(infer(Prim::matmul, {"f32[4,3]", "f32[4,5]"}, {{"transpose_a", true}}) == "f32[3,5]");
  CHECK(infer(Prim::matmul, {"f32[3,4]", "f32[5,4]"}, {{"transpose_b", true}}) == "f32[3,5]");
  CHECK(infer(Prim::matmul, {"f64[4,3]", "f64[5,4]"},
              {{"transpose_a", true}, {"transpose_b", true}}) == "f64[3,5]");
  CHECK(infer(Prim::matmul, {"f32[3,4,7,2]", "f32[4,5,7,2]"}) == "f32[3,5,7,2]");
  CHECK(infer(Prim::matmul, {"f32[3,0]", "f32[0,5]"}) == "f32[3,5]");
  CHECK(infer(Prim::matmul, {"f32[0,2]", "f32[2,1]"}) == "f32[0,1]");
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"i64[3,4]", "i64[4,5]"}),
                       "the arguments must be f32 or f64, got i64[3,4]", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::matmul, {"f32[3,4]", "f64[4,5]"}),
      "arguments must have one dtype, got f32[3,4] and f64[4,5]; convert one first", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"f32[3]", "f32[3,5]"}),
                       "a must be a matrix or a batch of matrices (rank >= 2), got f32[3]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"f32[3,4]", "f32[]"}),
                       "b must be a matrix or a batch of matrices (rank >= 2), got f32[]",
                       UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::matmul, {"f32[3,4]", "f32[5,6]"}),
      "a f32[3,4] gives A 3x4 and b f32[5,6] gives B 5x6; their inner dims differ (4 vs 5)",
      UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::matmul, {"f32[3,4]", "f32[4,5]"}, {{"transpose_a", true}}),
      "a f32[3,4] gives A 4x3 and b f32[4,5] gives B 4x5; their inner dims differ (3 vs 4)",
      UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"f32[3,4,2]", "f32[4,5,3]"}),
                       "batch dims of a f32[3,4,2] and b f32[4,5,3] differ ([2] vs [3])",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"f32[3,4,1]", "f32[4,5]"}),
                       "batch dims of a f32[3,4,1] and b f32[4,5] differ ([1] vs [])", UserError);
}

// ---- conv -------------------------------------------------------------------------------

namespace {

Attrs conv_attrs(Ints stride, Ints pad, Ints dilation = {1, 1}, int64_t groups = 1) {
  return {{"stride", std::move(stride)},
          {"pad", std::move(pad)},
          {"dilation", std::move(dilation)},
          {"groups", groups}};
}

}  // namespace

TEST_CASE("conv2d output sizes follow PyTorch's formula") {
  CHECK(infer(Prim::conv2d, {"f32[5,5,1,2]", "f32[3,3,1,4]"}) == "f32[3,3,4,2]");
  // floor((W + pads - dilation * (k - 1) - 1) / stride) + 1, per axis.
  CHECK(infer(Prim::conv2d, {"f32[10,8,2,1]", "f32[3,2,2,6]"},
              conv_attrs({1, 2}, {1, 0, 0, 2}, {2, 3})) == "f32[7,4,6,1]");
  CHECK(infer(Prim::conv2d, {"f32[7,7,1,1]", "f32[2,2,1,1]"}, conv_attrs({3, 3}, {0, 0, 0, 0})) ==
        "f32[2,2,1,1]");
  CHECK(infer(Prim::conv2d, {"f64[56,56,64,8]", "f64[3,3,64,128]"},
              conv_attrs({2, 2}, {1, 1, 1, 1})) == "f64[28,28,128,8]");
  CHECK(infer(Prim::conv2d, {"f32[56,56,64,8]", "f32[1,1,64,128]"},
              conv_attrs({2, 2}, {0, 0, 0, 0})) == "f32[28,28,128,8]");
  // Grouped and depthwise.
  CHECK(infer(Prim::conv2d, {"f32[8,8,4,2]", "f32[3,3,2,6]"},
              conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 2)) == "f32[6,6,6,2]");
  CHECK(infer(Prim::conv2d, {"f32[8,8,4,1]", "f32[3,3,1,4]"},
              conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 4)) == "f32[8,8,4,1]");
  // Empty batch, and an input that is all padding (it reads zeros).
  CHECK(infer(Prim::conv2d, {"f32[5,5,1,0]", "f32[3,3,1,4]"}) == "f32[3,3,4,0]");
  CHECK(infer(Prim::conv2d, {"f32[0,5,1,1]", "f32[3,3,1,1]"}, conv_attrs({1, 1}, {1, 2, 0, 0})) ==
        "f32[1,3,1,1]");
}

TEST_CASE("conv2d checks its arguments and attributes") {
  auto bad = [](std::string_view x, std::string_view w, const Attrs& attrs = {}) {
    return infer(Prim::conv2d, {x, w}, attrs);
  };
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1]", "f32[3,3,1,1]"),
                       "x (W, H, C, N) must have rank 4, got f32[5,5,1]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1,1]", "f32[3,3,1]"),
                       "w (kw, kh, cin/groups, cout) must have rank 4, got f32[3,3,1]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1,1]", "f64[3,3,1,1]"),
                       "arguments must have one dtype, got f32[5,5,1,1] and f64[3,3,1,1]; convert "
                       "one first",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("i64[5,5,1,1]", "i64[3,3,1,1]"),
                       "the arguments must be f32 or f64, got i64[5,5,1,1]", UserError);
  const char* x = "f32[8,8,4,1]";
  const char* w = "f32[3,3,4,8]";
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({0, 1}, {0, 0, 0, 0})), "stride=[0,1] must be positive",
                       UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1}, {0, 0, 0, 0})),
                       "stride must have 2 elements, got [1]", UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {1, 1})), "pad must have 4 elements, got [1,1]",
                       UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {1, 1, 1, -1})),
                       "pad=[1,1,1,-1] must be non-negative", UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 0})),
                       "dilation=[1,0] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 0)),
                       "groups=0 must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 3)),
                       "groups=3 does not divide the 4 channels of x f32[8,8,4,1]", UserError);
  CHECK_THROWS_WITH_AS(bad(x, "f32[3,3,2,5]", conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 2)),
                       "groups=2 does not divide the 5 output channels of w f32[3,3,2,5]",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("f32[8,8,3,1]", w),
                       "w f32[3,3,4,8] takes 4 channels per group, but x f32[8,8,3,1] has 3 per "
                       "group (groups=1)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 2)),
                       "w f32[3,3,4,8] takes 4 channels per group, but x f32[8,8,4,1] has 2 per "
                       "group (groups=2)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad(x, "f32[0,3,4,8]"), "the kernel of w f32[0,3,4,8] is empty", UserError);
}

TEST_CASE("conv2d rejects a kernel that does not fit and absurd sizes") {
  auto bad = [](std::string_view x, std::string_view w, const Attrs& attrs = {}) {
    return infer(Prim::conv2d, {x, w}, attrs);
  };
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1,1]", "f32[7,7,1,1]"),
                       "the kernel of w f32[7,7,1,1] with dilation=[1,1] does not fit in x "
                       "f32[5,5,1,1] with pad=[0,0,0,0] (along W)",
                       UserError);
  CHECK(bad("f32[5,5,1,1]", "f32[7,7,1,1]", conv_attrs({1, 1}, {1, 1, 1, 1})) == "f32[1,1,1,1]");
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1,1]", "f32[7,7,1,1]", conv_attrs({1, 1}, {1, 1, 0, 1})),
                       "the kernel of w f32[7,7,1,1] with dilation=[1,1] does not fit in x "
                       "f32[5,5,1,1] with pad=[1,1,0,1] (along H)",
                       UserError);
  CHECK_THROWS_WITH_AS(
      bad("f32[5,5,1,1]", "f32[3,3,1,1]", conv_attrs({1, 1}, {0, 0, 0, 0}, {3, 1})),
      "the kernel of w f32[3,3,1,1] with dilation=[3,1] does not fit in x "
      "f32[5,5,1,1] with pad=[0,0,0,0] (along W)",
      UserError);
  CHECK_THROWS_WITH_AS(
      bad("f32[5,5,1,1]", "f32[3,3,1,1]", conv_attrs({1, 1}, {0, 0, 0, 0}, {k2to48, 1})),
      "the kernel of w f32[3,3,1,1] with dilation=[281474976710656,1] does not fit in x "
      "f32[5,5,1,1] with pad=[0,0,0,0] (along W)",
      UserError);
  CHECK_THROWS_WITH_AS(
      bad("f32[5,5,1,1]", "f32[3,3,1,1]", conv_attrs({1, 1}, {0, 0, 0, 0}, {INT64_MAX, 1})),
      "dilation=[9223372036854775807,1]: 9223372036854775807 is too large", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[1,1,1,1]", "f32[1,1,1,1]", conv_attrs({1, 1}, {k2to48, 0, 0, 0})),
                       "the result: dimension 281474976710657 is too large", UserError);
  CHECK_THROWS_WITH_AS(
      bad("f32[1,1,1,1]", "f32[1,1,1,1]", conv_attrs({INT64_MAX, 1}, {0, 0, 0, 0})),
      "stride=[9223372036854775807,1]: 9223372036854775807 is too large", UserError);
  CHECK(bad("f32[1,1,1,1]", "f32[1,1,1,1]", conv_attrs({k2to48, 1}, {0, 0, 0, 0})) ==
        "f32[1,1,1,1]");
}

TEST_CASE("conv2d gradients take the shape of what they differentiate") {
  Attrs a = conv_attrs({2, 2}, {3, 3, 3, 3});
  a.set("shape", Ints{224, 224, 3, 1});
  // With stride 2, inputs of 223 and 224 both give 112: hence the shape attribute.
  CHECK(infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a) ==
        "f32[224,224,3,1]");
  a.set("shape", Ints{223, 224, 3, 1});
  CHECK(infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a) ==
        "f32[223,224,3,1]");
  a.set("shape", Ints{225, 224, 3, 1});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a),
      "dy f32[112,112,64,1] must have shape [113,112,64,1], the output of conv2d "
      "for x [225,224,3,1] and w [7,7,3,64]",
      UserError);
  a.set("shape", Ints{224, 224, 3});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a),
      "shape must have 4 elements, got [224,224,3]", UserError);
  a.set("shape", Ints{224, 224, 3, -1});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a),
      "shape: dimension -1 is negative", UserError);
  a.set("shape", Ints{224, 224, 3, 1});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_input, {"f64[112,112,64,1]", "f32[7,7,3,64]"}, a),
      "arguments must have one dtype, got f64[112,112,64,1] and f32[7,7,3,64]; "
      "convert one first",
      UserError);

  a.set("shape", Ints{7, 7, 3, 64});
  CHECK(infer(Prim::conv2d_backward_filter, {"f32[224,224,3,1]", "f32[112,112,64,1]"}, a) ==
        "f32[7,7,3,64]");
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_filter, {"f32[224,224,3,1]", "f32[112,112,64]"}, a),
      "dy f32[112,112,64] must have shape [112,112,64,1], the output of conv2d "
      "for x [224,224,3,1] and w [7,7,3,64]",
      UserError);
  a.set("shape", Ints{7, 7, 4, 64});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_filter, {"f32[224,224,3,1]", "f32[112,112,64,1]"}, a),
      "w f32[7,7,4,64] takes 4 channels per group, but x f32[224,224,3,1] has 3 "
      "per group (groups=1)",
      UserError);
  a.set("shape", Ints{7, 7, 3, 64});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_filter, {"i64[224,224,3,1]", "i64[112,112,64,1]"}, a),
      "the arguments must be f32 or f64, got i64[224,224,3,1]", UserError);
}

// ---- pool -------------------------------------------------------------------------------

namespace {

Attrs pool_attrs(Ints window, Ints stride, Ints pad = {0, 0, 0, 0}) {
  return {{"window", std::move(window)}, {"stride", std::move(stride)}, {"pad", std::move(pad)}};
}

}  // namespace

TEST_CASE("pooling output sizes follow PyTorch's formula") {
  CHECK(infer(Prim::max_pool2d, {"f32[4,4,1,1]"}, pool_attrs({2, 2}, {2, 2})) == "f32[2,2,1,1]");
  CHECK(infer(Prim::avg_pool2d, {"f64[5,5,3,2]"}, pool_attrs({2, 2}, {2, 2})) == "f64[2,2,3,2]");
  CHECK(infer(Prim::avg_pool2d, {"f32[5,6,3,2]"}, pool_attrs({3, 2}, {1, 2}, {1, 1, 0, 1})) ==
        "f32[5,3,3,2]");
  CHECK(infer(Prim::max_pool2d, {"f32[4,4,0,0]"}, pool_attrs({2, 2}, {2, 2})) == "f32[2,2,0,0]");
  CHECK(infer(Prim::max_pool2d_with_indices, {"f64[3,3,2,1]"}, pool_attrs({3, 3}, {1, 1})) ==
        "f64[1,1,2,1] i64[1,1,2,1]");
  // A stride that skips the last elements, as PyTorch's floor does.
  CHECK(infer(Prim::max_pool2d, {"f32[3,3,1,1]"}, pool_attrs({2, 2}, {3, 3}, {0, 1, 0, 0})) ==
        "f32[1,1,1,1]");
}

TEST_CASE("pooling checks its argument and attributes") {
  auto bad = [](std::string_view x, const Attrs& attrs) {
    return infer(Prim::max_pool2d, {x}, attrs);
  };
  Attrs a = pool_attrs({2, 2}, {2, 2});
  CHECK_THROWS_WITH_AS(bad("f32[4,4]", a), "x (W, H, C, N) must have rank 4, got f32[4,4]",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("i64[4,4,1,1]", a), "x must be f32 or f64, got i64[4,4,1,1]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::avg_pool2d, {"i64[4,4,1,1]"}, a),
                       "x must be f32 or f64, got i64[4,4,1,1]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({0, 2}, {2, 2})),
                       "window=[0,2] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({2, 2}, {2})),
                       "stride must have 2 elements, got [2]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({2, 2}, {2, -2})),
                       "stride=[2,-2] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({2, 2}, {2, 2}, {1, 1})),
                       "pad must have 4 elements, got [1,1]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({2, 2}, {2, 2}, {0, 0, -1, 0})),
                       "pad=[0,0,-1,0] must be non-negative", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[2,2,1,1]", pool_attrs({3, 3}, {1, 1})),
                       "window=[3,3] does not fit in x f32[2,2,1,1] with pad=[0,0,0,0] (along W)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("f32[3,2,1,1]", pool_attrs({3, 3}, {1, 1})),
                       "window=[3,3] does not fit in x f32[3,2,1,1] with pad=[0,0,0,0] (along H)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("f32[0,2,1,1]", pool_attrs({1, 1}, {1, 1})),
                       "window=[1,1] does not fit in x f32[0,2,1,1] with pad=[0,0,0,0] (along W)",
                       UserError);
}

TEST_CASE("every pooling window holds an element of x") {
  auto pool = [](Prim p, Ints window, Ints stride, Ints pad) {
    return infer(p, {"f32[4,4,1,1]"},
                 pool_attrs(std::move(window), std::move(stride), std::move(pad)));
  };
  CHECK(pool(Prim::max_pool2d, {2, 2}, {1, 1}, {1, 1, 1, 1}) == "f32[5,5,1,1]");
  for (Prim p : {Prim::max_pool2d, Prim::avg_pool2d, Prim::max_pool2d_with_indices}) {
    CAPTURE(prim_name(p));
    CHECK_THROWS_WITH_AS(pool(p, {2, 2}, {1, 1}, {2, 0, 0, 0}),
                         "window=[2,2] and pad=[2,0,0,0] give a window along W of x f32[4,4,1,1] "
                         "that holds only padding",
                         UserError);
    CHECK_THROWS_WITH_AS(pool(p, {2, 2}, {1, 1}, {0, 0, 0, 2}),
                         "window=[2,2] and pad=[0,0,0,2] give a window along H of x f32[4,4,1,1] "
                         "that holds only padding",
                         UserError);
  }
  // The last window starts at 4 in padded coordinates, past x's 0..3.
  CHECK_THROWS_WITH_AS(pool(Prim::max_pool2d, {2, 2}, {4, 4}, {0, 2, 0, 0}),
                       "window=[2,2] and pad=[0,2,0,0] give a window along W of x f32[4,4,1,1] "
                       "that holds only padding",
                       UserError);
  CHECK_THROWS_WITH_AS(pool(Prim::max_pool2d, {2, 2}, {1, 1}, {0, 0, k2to48, 0}),
                       "window=[2,2] and pad=[0,0,281474976710656,0] give a window along H of x "
                       "f32[4,4,1,1] that holds only padding",
                       UserError);
  CHECK_THROWS_WITH_AS(pool(Prim::max_pool2d, {2, 2}, {1, 1}, {0, 0, INT64_MAX, 0}),
                       "pad=[0,0,9223372036854775807,0]: 9223372036854775807 is too large",
                       UserError);
}

TEST_CASE("pooling gradients") {
  Attrs shape{{"shape", Ints{5, 5, 3, 2}}};
  CHECK(infer(Prim::max_pool2d_backward, {"f64[2,2,3,2]", "i64[2,2,3,2]"}, shape) ==
        "f64[5,5,3,2]");
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"i64[2,2,3,2]", "i64[2,2,3,2]"}, shape),
                       "dy must be f32 or f64, got i64[2,2,3,2]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3,2]", "f32[2,2,3,2]"}, shape),
                       "idx must be i64, got f32[2,2,3,2]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3]", "i64[2,2,3]"}, shape),
                       "dy (W', H', C, N) must have rank 4, got f32[2,2,3]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3,2]", "i64[2,3,3,2]"}, shape),
                       "dy f32[2,2,3,2] and idx i64[2,3,3,2] must have one shape", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3,1]", "i64[2,2,3,1]"}, shape),
                       "shape=[5,5,3,2] must have the C and N of dy f32[2,2,3,1]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3,2]", "i64[2,2,3,2]"},
                             {{"shape", Ints{5, 5, 3}}}),
                       "shape must have 4 elements, got [5,5,3]", UserError);

  Attrs a = pool_attrs({2, 2}, {2, 2});
  a.set("shape", Ints{5, 5, 3, 2});
  CHECK(infer(Prim::avg_pool2d_backward, {"f32[2,2,3,2]"}, a) == "f32[5,5,3,2]");
  CHECK_THROWS_WITH_AS(infer(Prim::avg_pool2d_backward, {"f32[3,2,3,2]"}, a),
                       "dy f32[3,2,3,2] must have shape [2,2,3,2], the output of avg_pool2d for x "
                       "[5,5,3,2]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::avg_pool2d_backward, {"i64[2,2,3,2]"}, a),
                       "dy must be f32 or f64, got i64[2,2,3,2]", UserError);
  a.set("window", Ints{6, 2});
  CHECK_THROWS_WITH_AS(infer(Prim::avg_pool2d_backward, {"f32[2,2,3,2]"}, a),
                       "window=[6,2] does not fit in x f32[5,5,3,2] with pad=[0,0,0,0] (along W)",
                       UserError);
}

// ---- norm -------------------------------------------------------------------------------

TEST_CASE("batchnorm normalizes over all dims but the second to last") {
  CHECK(infer(Prim::batchnorm, {"f32[16,32]", "f32[16]", "f32[16]"}) == "f32[16,32]");
  CHECK(infer(Prim::batchnorm, {"f64[10,3,4]", "f64[3]", "f64[3]"}, {{"eps", 0}}) == "f64[10,3,4]");
  CHECK(infer(Prim::batchnorm_with_stats, {"f32[56,56,64,8]", "f32[64]", "f32[64]"}) ==
        "f32[56,56,64,8] f32[64] f32[64]");
  CHECK(infer(Prim::batchnorm_backward, {"f64[16,32]", "f64[16,32]", "f64[16]", "f64[16]",
                                         "f64[16]"}) == "f64[16,32] f64[16] f64[16]");
  for (Prim p : {Prim::batchnorm, Prim::batchnorm_with_stats}) {
    CAPTURE(prim_name(p));
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16]", "f32[16]", "f32[16]"}),
                         "x must have rank >= 2 (channels second to last), got f32[16]", UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"i64[16,32]", "i64[16]", "i64[16]"}),
                         "x must be f32 or f64, got i64[16,32]", UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[32]", "f32[16]"}),
                         "scale must be f32[16] (one per channel of x f32[16,32]), got f32[32]",
                         UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[16]", "f64[16]"}),
                         "bias must be f32[16] (one per channel of x f32[16,32]), got f64[16]",
                         UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[16]", "f32[]"}),
                         "bias must be f32[16] (one per channel of x f32[16,32]), got f32[]",
                         UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[16]", "f32[16]"}, {{"eps", -1}}),
                         "eps=-1.0 must be non-negative", UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[16]", "f32[16]"}, {{"eps", NAN}}),
                         "eps=nan must be non-negative", UserError);
  }
}

TEST_CASE("batchnorm_backward checks dy and the statistics") {
  const char* x = "f32[8,8,4,2]";
  const char* c = "f32[4]";
  CHECK(infer(Prim::batchnorm_backward, {x, x, c, c, c}) == "f32[8,8,4,2] f32[4] f32[4]");
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {"f32[8,8,4,1]", x, c, c, c}),
                       "dy must be f32[8,8,4,2] like x, got f32[8,8,4,1]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {x, x, "f32[2]", c, c}),
                       "scale must be f32[4] (one per channel of x f32[8,8,4,2]), got f32[2]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {x, x, c, "f64[4]", c}),
                       "mean must be f32[4] (one per channel of x f32[8,8,4,2]), got f64[4]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {x, x, c, c, "f32[4,1]"}),
                       "invstd must be f32[4] (one per channel of x f32[8,8,4,2]), got f32[4,1]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {"f32[4]", "f32[4]", c, c, c}),
                       "x must have rank >= 2 (channels second to last), got f32[4]", UserError);
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
