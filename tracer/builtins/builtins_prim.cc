// Every primitive as a function `Prim.<name>(args...; attributes...)`, for the prelude and
// for programs that need a primitive the language has no operator for (conv2d, gather);
// and the ops composed of primitives (tape/spatial3d.h) as `Composite.<name>(...)`.
#include <fmt/format.h>

#include "tape/error.h"
#include "tape/spatial3d.h"
#include "tracer/builtins/builtins.h"
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
          case TypeTag::float16:
            return DType::f16;
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

// Values as an OpSink: a composed op's primitives are computed on concrete values and
// recorded on traced ones, as `Prim.` calls are.
class ValueSink final : public OpSink {
 public:
  explicit ValueSink(Interpreter& in) : in_(in) {}
  Var add(Value v) {
    values_.push_back(std::move(v));
    return Var{static_cast<uint32_t>(values_.size() - 1)};
  }
  const Value& operator[](Var v) const { return values_[v.id]; }
  Var call(Prim p, VarList args, const Attrs& attrs) override {
    std::vector<Value> vs;
    for (Var a : args) vs.push_back(values_[a.id]);
    return add(in_.prim1(p, vs, attrs));
  }
  Type type(Var v) const override { return values_[v.id].tensor().type; }

 private:
  Interpreter& in_;
  std::vector<Value> values_;
};

// The positional arguments of `Composite.<name>`, which are arrays, in the sink.
std::vector<Var> array_args(ValueSink& s, const Args& args, size_t n, const char* name) {
  need_args(args, n, n, name);
  std::vector<Var> vars;
  for (const Value& a : args.pos) {
    if (!a.is_tensor() || a.tensor().number)
      user_error("{} takes arrays, got {}", name, a_type_name(a));
    vars.push_back(s.add(a));
  }
  return vars;
}

// The keyword arguments of `Composite.<name>`, each a static integer or tuple of them, into
// `fields`; any other keyword is an error.
using Keywords = std::vector<std::pair<std::string_view, std::vector<int64_t>*>>;
void read_keywords(const Args& args, const char* name, const Keywords& fields) {
  for (const auto& [key, v] : args.kw) {
    std::vector<int64_t>* field = nullptr;
    for (const auto& [k, f] : fields) {
      if (key == k) field = f;
    }
    if (field == nullptr) user_error("{} has no keyword '{}'", name, key);
    *field = int_list(v, key);
  }
}

// Composite.conv3d(x, w; stride, pad, dilation, groups) and, with the keyword shape,
// Composite.conv3d_backward_input(dy, w; shape, stride, pad, dilation, groups).
template <bool Backward>
Value conv3d_builtin(Interpreter& in, Args& args) {
  const char* name = Backward ? "Composite.conv3d_backward_input" : "Composite.conv3d";
  ValueSink s(in);
  std::vector<Var> xw = array_args(s, args, 2, name);
  Conv3dAttrs a;
  std::vector<int64_t> groups{1}, shape;
  Keywords fields{
      {"stride", &a.stride}, {"pad", &a.pad}, {"dilation", &a.dilation}, {"groups", &groups}};
  if (Backward) fields.push_back({"shape", &shape});
  read_keywords(args, name, fields);
  if (groups.size() != 1) user_error("{}: groups must be one integer", name);
  a.groups = groups[0];
  if (!Backward) return s[conv3d(s, xw[0], xw[1], a)];
  if (shape.empty()) user_error("{} needs the keyword shape", name);
  return s[conv3d_backward_input(s, xw[0], xw[1], shape, a)];
}

// Composite.max_pool3d(x; window, stride, pad) and Composite.avg_pool3d.
template <bool Max>
Value pool3d_builtin(Interpreter& in, Args& args) {
  const char* name = Max ? "Composite.max_pool3d" : "Composite.avg_pool3d";
  ValueSink s(in);
  Var x = array_args(s, args, 1, name)[0];
  Pool3dAttrs a;
  read_keywords(args, name, {{"window", &a.window}, {"stride", &a.stride}, {"pad", &a.pad}});
  return s[Max ? max_pool3d(s, x, a) : avg_pool3d(s, x, a)];
}

}  // namespace

void add_prim_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
// Region ops take tapes, which the language makes from its loops, not from a call.
#define X_REGION(...)
#define X(name, family, arity, outputs, flags, dtypes, cost, attrs) \
  {"Prim." #name, prim_builtin<Prim::name>},
#include "tape/ops.def"
#undef X
                    });
  t.insert(t.end(), {{"Composite.conv3d", conv3d_builtin<false>},
                     {"Composite.conv3d_backward_input", conv3d_builtin<true>},
                     {"Composite.max_pool3d", pool3d_builtin<true>},
                     {"Composite.avg_pool3d", pool3d_builtin<false>}});
}

}  // namespace ytape::tracer
