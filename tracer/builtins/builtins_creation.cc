// Arrays made from nothing but a size: zeros, ones and fill, of an element type and dims.
#include <utility>

#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

std::pair<DType, Shape> type_and_dims(const Args& args, size_t first, DType fallback) {
  DType d = fallback;
  size_t i = first;
  if (i < args.pos.size() && args.pos[i].kind == VKind::type) {
    TypeTag tag = args.pos[i].type_ref()->tag;
    if (tag == TypeTag::float32)
      d = DType::f32;
    else if (tag == TypeTag::float64)
      d = DType::f64;
    else if (tag == TypeTag::float16)
      d = DType::f16;
    else if (tag == TypeTag::int64)
      d = DType::i64;
    else if (tag == TypeTag::boolean)
      d = DType::boolean;
    else
      user_error("unsupported element type {}", args.pos[i].type_ref()->name);
    ++i;
  }
  Shape shape;
  for (; i < args.pos.size(); ++i) {
    for (int64_t n : int_list(args.pos[i], "dimensions")) {
      if (n < 0) user_error("dimensions must be ≥ 0, got {}", n);
      shape.push_back(n);
    }
  }
  return {d, shape};
}

Value filled(Interpreter& in, DType d, Shape shape, double value) {
  return in.prim1<Prim::fill>({}, {.value = value, .dtype = d, .shape = std::move(shape)});
}

namespace {

Value zeros(Interpreter& in, Args& args) {
  auto [d, shape] = type_and_dims(args, 0, DType::f64);
  return filled(in, d, shape, 0);
}

Value ones(Interpreter& in, Args& args) {
  auto [d, shape] = type_and_dims(args, 0, DType::f64);
  return filled(in, d, shape, 1);
}

Value fill(Interpreter& in, Args& args) {
  need_args(args, 1, 1 << 30, "fill");
  Value v = args.pos[0];
  if (!v.is_number() || v.is_tensor()) user_error("fill takes a number first");
  DType d = v.kind == VKind::float_    ? v.dtype
            : v.kind == VKind::boolean ? DType::boolean
                                       : DType::i64;
  auto [unused, shape] = type_and_dims(args, 1, d);
  return filled(in, d, shape, as_double(v));
}

}  // namespace

void add_creation_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"zeros", zeros},
                        {"ones", ones},
                        {"fill", fill},
                    });
}

}  // namespace ytape::tracer
