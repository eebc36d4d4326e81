// One good case of inference per primitive (infer_test.cc, prim_facts_test.cc).
#pragma once

#include <string_view>
#include <vector>

#include "tape/attrs.h"
#include "tape/prim.h"
#include "unit/tape/infer_helpers.h"

namespace ytape::testing {

struct Good {
  Prim prim;
  std::vector<std::string_view> args;
  Attrs attrs;
  std::string_view out;
};

inline const Attrs kResNetStem{{"stride", Ints{2, 2}}, {"pad", Ints{3, 3, 3, 3}}};
inline const Attrs kResNetPool{
    {"window", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"pad", Ints{1, 1, 1, 1}}};

// One good case per primitive.
inline const std::vector<Good>& good_cases() {
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
      {Prim::gelu, {"f32[3]"}, {}, "f32[3]"},
      {Prim::erf, {"f64[2,3]"}, {}, "f64[2,3]"},
      {Prim::asin, {"f32[3]"}, {}, "f32[3]"},
      {Prim::acos, {"f64[]"}, {}, "f64[]"},
      {Prim::atan, {"f64[2,1]"}, {}, "f64[2,1]"},
      {Prim::floor, {"f32[]"}, {}, "f32[]"},
      {Prim::ceil, {"f64[4]"}, {}, "f64[4]"},
      {Prim::round, {"f32[1,2]"}, {}, "f32[1,2]"},
      {Prim::add, {"f32[3,1]", "f32[1,4]"}, {}, "f32[3,4]"},
      {Prim::sub, {"i64[3]", "i64[]"}, {}, "i64[3]"},
      {Prim::mul, {"f64[2,3]", "f64[2]"}, {}, "f64[2,3]"},
      {Prim::div, {"f32[4]", "f32[4]"}, {}, "f32[4]"},
      {Prim::pow, {"f64[]", "f64[2,2]"}, {}, "f64[2,2]"},
      {Prim::rem, {"f32[3,1]", "f32[1,4]"}, {}, "f32[3,4]"},
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
      {Prim::stop_gradient, {"bool[2,3]"}, {}, "bool[2,3]"},
      {Prim::pad,
       {"f32[3,4]"},
       {{"lo", Ints{1, 0}}, {"hi", Ints{2, 1}}, {"interior", Ints{1, 0}}},
       "f32[8,5]"},
      {Prim::gather, {"f32[10,32]", "i64[1,32]"}, {{"dim", 1}}, "f32[1,32]"},
      {Prim::scatter_add, {"f32[1,32]", "i64[1,32]"}, {{"dim", 1}, {"size", 10}}, "f32[10,32]"},
      {Prim::matmul, {"f32[3,4]", "f32[4,5]"}, {}, "f32[3,5]"},
      {Prim::attention,
       {"f32[8,5,4,2]", "f32[8,7,4,2]", "f32[6,7,4,2]", "bool[7,5]"},
       {},
       "f32[6,5,4,2] f32[5,4,2]"},
      {Prim::attention_backward,
       {"f32[8,5,3]", "f32[8,7,3]", "f32[6,7,3]", "bool[7,5]", "f32[6,5,3]", "f32[5,3]",
        "f32[6,5,3]"},
       {},
       "f32[8,5,3] f32[8,7,3] f32[6,7,3]"},
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
      {Prim::fill, {}, {{"value", 1.0}, {"dtype", DType::f32}, {"shape", Ints{2, 3}}}, "f32[2,3]"},
      {Prim::iota, {}, {{"dtype", DType::i64}, {"shape", Ints{3, 4}}, {"dim", 2}}, "i64[3,4]"},
      {Prim::rand, {}, {{"dtype", DType::f32}, {"shape", Ints{2, 2}}, {"seed", 1}}, "f32[2,2]"},
      {Prim::randn, {}, {{"dtype", DType::f64}, {"shape", Ints{5}}, {"seed", 7}}, "f64[5]"},
      {Prim::print, {"f32[2]", "i64[]"}, {{"format", std::string("x={} n={}")}}, ""},
      {Prim::guard, {"bool[]"}, {{"message", std::string("x must be positive")}}, ""},
      {Prim::allreduce, {"f32[3,4]", "f32[]"}, {{"ranks", 2}}, "f32[3,4] f32[]"},
      {Prim::shard, {"f32[3,8]"}, {{"dim", 2}, {"ranks", 4}}, "f32[3,2]"},
      {Prim::allgather, {"f32[3,2]"}, {{"dim", 2}, {"ranks", 4}}, "f32[3,8]"},
  };
  return cases;
}

}  // namespace ytape::testing
