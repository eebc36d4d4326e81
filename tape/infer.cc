#include "tape/infer.h"

#include "tape/error.h"

namespace ytape {

namespace {

InferTable make_table() {
  InferTable t;
  register_elementwise_infer(t);
  register_reduce_infer(t);
  register_shape_infer(t);
  register_index_infer(t);
  register_linalg_infer(t);
  register_conv_infer(t);
  register_pool_infer(t);
  register_norm_infer(t);
  register_creation_infer(t);
  register_effect_infer(t);
  return t;
}

const InferTable& table() {
  static const InferTable t = make_table();
  return t;
}

}  // namespace

std::vector<Type> infer_types(Prim p, std::span<const Type> args, const Attrs& attrs) {
  InferRule rule = table().rules[static_cast<int>(p)];
  if (rule == nullptr) internal_error("no inference rule for {}", prim_name(p));
  return rule(p, args, attrs);
}

bool has_infer_rule(Prim p) {
  return table().rules[static_cast<int>(p)] != nullptr;
}

}  // namespace ytape
