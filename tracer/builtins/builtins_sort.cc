// Sorting concrete vectors: sort(x; rev=false) and sortperm(x; rev=false), stable, as
// Julia's (NaN last). No primitive sorts, so they take no traced values.
#include <cmath>
#include <string_view>
#include <utility>

#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// The order of the vector that sort and sortperm take, which sortperm returns and sort
// indexes the vector with.
Tensor sorted_order(const Args& args, std::string_view name) {
  need_args(args, 1, 1, name);
  const Value& x = args.pos[0];
  if (!x.is_tensor() || x.tensor().number || x.tensor().type.rank() != 1)
    user_error("{} takes a vector, got {}", name, a_type_name(x));
  if (x.tensor().traced)
    user_error("{} of a traced vector is not supported: no primitive sorts", name);
  const Value* rev = keyword(args, "rev");
  bool descending = rev != nullptr && rev->kind == VKind::boolean && rev->b;
  const Tensor& t = x.tensor().data;
  return stable_order(t.size(), [&](int64_t a, int64_t b) {
    double u = element_value(t, a - 1), v = element_value(t, b - 1);
    if (std::isnan(u) || std::isnan(v)) return !std::isnan(u) && std::isnan(v);
    return descending ? u > v : u < v;
  });
}

Value sortperm(Interpreter&, Args& args) {
  return Value::concrete(sorted_order(args, "sortperm"));
}

Value sort(Interpreter& in, Args& args) {
  Tensor order = sorted_order(args, "sort");
  return index_tensor(in, args.pos[0], {Value::concrete(std::move(order))});
}

}  // namespace

void add_sort_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"sort", sort},
                        {"sortperm", sortperm},
                    });
}

}  // namespace ytape::tracer
