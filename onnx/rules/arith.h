// Arithmetic on the importer's values, for the rules that compose formulas (the recurrent
// cells, GridSample's weights): each op folds where its arguments are known.
#pragma once

#include "onnx/importer.h"

namespace ytape::onnx_import::arith {

/// A rank-0 constant `value` of `like`'s dtype.
inline Var k(Importer& im, Var like, double value) {
  return im.scalar(im.type(like).dtype, value);
}
inline Var add(Importer& im, Var a, Var b) {
  return im.op<Prim::add>({a, b});
}
inline Var sub(Importer& im, Var a, Var b) {
  return im.op<Prim::sub>({a, b});
}
inline Var mul(Importer& im, Var a, Var b) {
  return im.op<Prim::mul>({a, b});
}

}  // namespace ytape::onnx_import::arith
