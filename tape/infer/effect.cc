// Inference rules of the effect family: print and guard. They have no outputs.
#include <fmt/format.h>

#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

// print(xs...; format): each "{}" in a non-empty format takes one argument, in order.
std::vector<Type> print(Prim, std::span<const Type> a, const Attrs& attrs) {
  const std::string format = attrs_of<Prim::print>(attrs).format;
  if (format.empty()) return {};
  size_t holes = 0;
  for (size_t i = format.find("{}"); i != std::string::npos; i = format.find("{}", i + 2)) ++holes;
  if (holes != a.size()) {
    user_error("format {} has {} placeholder(s) {{}} for {} argument(s)", quoted(format), holes,
               a.size());
  }
  return {};
}

// guard(cond; message): stops a run with `message` when cond is false.
std::vector<Type> guard(Prim, std::span<const Type> a, const Attrs&) {
  if (a[0].dtype != DType::boolean || a[0].rank() != 0) {
    user_error("the condition must be a bool scalar, got {}", type_str(a[0]));
  }
  return {};
}

}  // namespace

void register_effect_infer(InferTable& t) {
  t.set(Prim::print, print);
  t.set(Prim::guard, guard);
}

}  // namespace ytape
