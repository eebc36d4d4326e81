// Every primitive as a function `Prim.<name>(args...; attributes...)`, for the prelude and
// for programs that need a primitive the language has no operator for (conv2d, gather).
#include <fmt/format.h>

#include "tape/error.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// A keyword argument as the attribute kind the primitive's schema asks for.
AttrValue attr_of(const AttrSpec& spec, const Value& v, std::string_view prim) {
  switch (spec.kind) {
    case AttrKind::int_:
      if (v.kind == VKind::integer) return v.i;
      break;
    case AttrKind::ints:
      return int_list(v, spec.name);
    case AttrKind::float_:
      if (v.kind == VKind::integer || v.kind == VKind::float_) return as_double(v);
      break;
    case AttrKind::bool_:
      if (v.kind == VKind::boolean) return v.b;
      break;
    case AttrKind::string:
      if (v.kind == VKind::string) return v.text();
      break;
    case AttrKind::dtype:
      if (v.kind == VKind::type) {
        switch (v.type_ref()->tag) {
          case TypeTag::float32:
            return DType::f32;
          case TypeTag::float64:
            return DType::f64;
          case TypeTag::int64:
            return DType::i64;
          case TypeTag::boolean:
            return DType::boolean;
          default:
            break;
        }
      }
      break;
  }
  user_error("{}: attribute '{}' must be a static {}, got {}", prim, spec.name,
             attr_kind_name(spec.kind), a_type_name(v));
}

Value apply_prim(Interpreter& in, Args& args, Prim p) {
  const PrimInfo& info = prim_info(p);
  Attrs attrs;
  for (const auto& [name, v] : args.kw) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : info.attrs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) user_error("{} has no attribute '{}'", info.name, name);
    attrs.set(name, attr_of(*spec, v, info.name));
  }
  // Numbers among the arguments take the dtype of the first tensor argument.
  DType d = DType::f64;
  for (const Value& a : args.pos) {
    if (a.is_tensor()) {
      d = a.tensor().type.dtype;
      break;
    }
  }
  std::vector<Value> tensors;
  for (const Value& a : args.pos)
    tensors.push_back(in.as_tensor(a, a.is_tensor() ? a.tensor().type.dtype : d));
  std::vector<Value> outs = in.prim(p, tensors, attrs);
  if (outs.empty()) return Value();
  if (outs.size() == 1) return outs[0];
  return Value::tuple(std::move(outs));
}

template <Prim P>
Value prim_builtin(Interpreter& in, Args& args) {
  return apply_prim(in, args, P);
}

}  // namespace

void add_prim_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
#define X(name, family, arity, outputs, flags, attrs) {"Prim." #name, prim_builtin<Prim::name>},
#include "tape/ops.def"
#undef X
                    });
}

}  // namespace ytape::tracer
