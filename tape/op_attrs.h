// Typed attributes: AttrsOf<Prim::p> has one field per attribute of p, in schema order,
// with the defaults of tape/ops.def, so that a misspelt attribute is a compile error.
//
// An op keeps its attributes as `Attrs` (name-value pairs: what JSON, the printer,
// hashing and normalization work on); `attrs_of<P>` reads them into the struct and
// `to_attrs` writes a struct back:
//
//   auto a = attrs_of<Prim::conv2d>(op.attrs);   // a.stride, a.pad, a.dilation, a.groups
//   b.conv2d(x, w, {.stride = {2, 2}, .pad = {1, 1, 1, 1}});   // Builder shorthand
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tape/attrs.h"
#include "tape/dtype.h"
#include "tape/prim.h"

// The C++ type and the AttrKind of each attribute kind of ops.def.
#define YTAPE_ATTR_TYPE_int int64_t
#define YTAPE_ATTR_TYPE_ints std::vector<int64_t>
#define YTAPE_ATTR_TYPE_float double
#define YTAPE_ATTR_TYPE_bool bool
#define YTAPE_ATTR_TYPE_string std::string
#define YTAPE_ATTR_TYPE_dtype DType
#define YTAPE_ATTR_KIND_int AttrKind::int_
#define YTAPE_ATTR_KIND_ints AttrKind::ints
#define YTAPE_ATTR_KIND_float AttrKind::float_
#define YTAPE_ATTR_KIND_bool AttrKind::bool_
#define YTAPE_ATTR_KIND_string AttrKind::string
#define YTAPE_ATTR_KIND_dtype AttrKind::dtype
// ATTR_OR's default, (1, 1), without its parentheses.
#define YTAPE_ATTR_UNPAREN(...) __VA_ARGS__

namespace ytape {

/// The attributes of primitive P as a struct (see the top of this file).
template <Prim P>
struct AttrsOf;

#define ATTR(kind, name) YTAPE_ATTR_TYPE_##kind name{};
#define ATTR_OR(kind, name, dflt) YTAPE_ATTR_TYPE_##kind name{YTAPE_ATTR_UNPAREN dflt};
// `from` reads complete attributes of p (as on a tape: a missing one is an
// InternalError); `to_attrs` writes them all, in schema order.
#define X(p, family, arity, outputs, flags, dtypes, cost, attrs)      \
  template <>                                                         \
  struct AttrsOf<Prim::p> {                                           \
    static AttrsOf from(const Attrs& a);                              \
    Attrs to_attrs() const;                                           \
    friend bool operator==(const AttrsOf&, const AttrsOf&) = default; \
    attrs                                                             \
  };
#include "tape/ops.def"
#undef X
#undef ATTR_OR
#undef ATTR

/// The attributes of an op of primitive P, typed.
template <Prim P>
AttrsOf<P> attrs_of(const Attrs& attrs) {
  return AttrsOf<P>::from(attrs);
}

/// The `dims` of sum, maximum, minimum, softmax or log_softmax, which several stages read
/// alike for all five; an InternalError for any other primitive.
std::vector<int64_t> reduce_dims(Prim p, const Attrs& attrs);
/// The attributes of one of those five primitives reducing `dims`.
Attrs reduce_attrs(Prim p, std::vector<int64_t> dims);

/// Whether a scan with attributes `a` may skip steps (`running`, `mask`: tape/ops.def), as
/// the gradient of a while_loop does; every stage that copies, counts or unrolls steps asks.
inline bool skips_steps(const AttrsOf<Prim::scan>& a) {
  return a.running > 0 || a.mask > 0;
}

}  // namespace ytape
