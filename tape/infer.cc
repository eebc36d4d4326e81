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

std::vector<Type> infer_types(Prim p, std::span<const Type> args, const Attrs& attrs,
                              std::span<const Tape> regions) {
  if (RegionInferRule rule = table().region_rules[static_cast<int>(p)])
    return rule(p, args, attrs, regions);
  if (!regions.empty())
    user_error("{} holds no regions, but {} are given", prim_name(p), regions.size());
  InferRule rule = table().rules[static_cast<int>(p)];
  if (rule == nullptr) internal_error("no inference rule for {}", prim_name(p));
  return rule(p, args, attrs);
}

bool has_infer_rule(Prim p) {
  return table().rules[static_cast<int>(p)] != nullptr ||
         table().region_rules[static_cast<int>(p)] != nullptr;
}

}  // namespace ytape
