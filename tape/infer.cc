#include "tape/infer.h"

#include "tape/error.h"

namespace ytape {

namespace {

InferTable make_table() {
  InferTable t;
#define FAMILY(f) register_##f##_infer(t);
#include "tape/families.def"
#undef FAMILY
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
