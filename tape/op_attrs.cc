#include "tape/op_attrs.h"

#include "tape/error.h"

namespace ytape {

#define ATTR(kind, name) r.name = a.get_##kind(#name);
#define ATTR_OR(kind, name, dflt) ATTR(kind, name)
#define X(p, family, arity, outputs, flags, dtypes, cost, attrs)             \
  AttrsOf<Prim::p> AttrsOf<Prim::p>::from([[maybe_unused]] const Attrs& a) { \
    AttrsOf r;                                                               \
    attrs return r;                                                          \
  }
#include "tape/ops.def"
#undef X
#undef ATTR_OR
#undef ATTR

#define ATTR(kind, name) \
  out.push_back({#name, AttrValue(std::in_place_type<YTAPE_ATTR_TYPE_##kind>, name)});
#define ATTR_OR(kind, name, dflt) ATTR(kind, name)
#define X(p, family, arity, outputs, flags, dtypes, cost, attrs) \
  Attrs AttrsOf<Prim::p>::to_attrs() const {                     \
    Attrs out;                                                   \
    attrs return out;                                            \
  }
#include "tape/ops.def"
#undef X
#undef ATTR_OR
#undef ATTR

std::vector<int64_t> reduce_dims(Prim p, const Attrs& attrs) {
  switch (p) {
    case Prim::sum:
      return attrs_of<Prim::sum>(attrs).dims;
    case Prim::maximum:
      return attrs_of<Prim::maximum>(attrs).dims;
    case Prim::minimum:
      return attrs_of<Prim::minimum>(attrs).dims;
    case Prim::softmax:
      return attrs_of<Prim::softmax>(attrs).dims;
    case Prim::log_softmax:
      return attrs_of<Prim::log_softmax>(attrs).dims;
    default:
      internal_error("{} reduces no dims", prim_name(p));
  }
}

Attrs reduce_attrs(Prim p, std::vector<int64_t> dims) {
  switch (p) {
    case Prim::sum:
      return AttrsOf<Prim::sum>{.dims = std::move(dims)}.to_attrs();
    case Prim::maximum:
      return AttrsOf<Prim::maximum>{.dims = std::move(dims)}.to_attrs();
    case Prim::minimum:
      return AttrsOf<Prim::minimum>{.dims = std::move(dims)}.to_attrs();
    case Prim::softmax:
      return AttrsOf<Prim::softmax>{.dims = std::move(dims)}.to_attrs();
    case Prim::log_softmax:
      return AttrsOf<Prim::log_softmax>{.dims = std::move(dims)}.to_attrs();
    default:
      internal_error("{} reduces no dims", prim_name(p));
  }
}

}  // namespace ytape
