// Type expressions: `Float32`, `AbstractArray{T, 2}`, `Union{A, B}`, `Tuple{A, B}`,
// `NTuple{N, T}`, `Val{x}`, and the where variables that methods bind from their arguments.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "tape/error.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// The where variable `name` (`T` or `T<:Real`), if `where` declares it.
const Expr* find_where(const std::vector<ExprPtr>* where, const std::string& name) {
  if (where == nullptr) return nullptr;
  for (const ExprPtr& w : *where) {
    const Expr& var = w->kind == Kind::call ? *w->args[1] : *w;
    if (var.kind == Kind::id && var.name == name) return w.get();
  }
  return nullptr;
}

bool is_free(const Expr& p, const std::vector<ExprPtr>* where) {
  return p.kind == Kind::id && find_where(where, p.name) != nullptr;
}

TypeRef or_any(TypeRef t) {
  return t ? t : builtin_type(TypeTag::any);
}

// `AbstractArray{Float32, 2}`: the element type (a known number type) and the rank; other
// parameters (a where variable `T`) leave them open.
TypeRef refine_array(const Expr& type, const TypeObj& head, const Interpreter& in) {
  auto refined = std::make_shared<TypeObj>(head);
  refined->name = type_expr_str(type);
  for (size_t i = 1; i < type.args.size(); ++i) {
    const Expr& p = *type.args[i];
    if (p.kind == Kind::int_lit) {
      refined->rank = static_cast<int>(p.int_value);
    } else if (p.kind == Kind::id) {
      const Value* g = in.global(p.name);
      if (g != nullptr && g->kind == VKind::type && g->type_ref()->tag != TypeTag::user) {
        TypeTag tag = g->type_ref()->tag;
        refined->has_eltype = tag == TypeTag::float32 || tag == TypeTag::float64 ||
                              tag == TypeTag::float16 || tag == TypeTag::int64 ||
                              tag == TypeTag::boolean;
        refined->eltype = tag == TypeTag::float32   ? DType::f32
                          : tag == TypeTag::float64 ? DType::f64
                          : tag == TypeTag::float16 ? DType::f16
                          : tag == TypeTag::int64   ? DType::i64
                                                    : DType::boolean;
      }
    }
  }
  return refined;
}

// A copy of type expression `e` with each name that `subst` maps replaced by a copy of its
// expression.
ExprPtr substituted(const Expr& e, const std::unordered_map<std::string, const Expr*>& subst) {
  if (e.kind == Kind::id) {
    auto it = subst.find(e.name);
    if (it != subst.end()) return substituted(*it->second, {});
  }
  ExprPtr out = make_expr(e.kind, e.pos, e.name);
  out->int_value = e.int_value;
  out->float_value = e.float_value;
  out->float32 = e.float32;
  for (const ExprPtr& a : e.args) out->args.push_back(substituted(*a, subst));
  return out;
}

}  // namespace

Value Interpreter::define_alias(const Expr& target, const Expr& rhs, const EnvPtr& env) {
  TypeAlias a;
  for (size_t i = 1; i < target.args.size(); ++i) {
    const Expr& p = *target.args[i];
    if (p.kind != Kind::id)
      fail(p.pos, "a type alias's parameters are names, as in 'const A{T} = AbstractArray{T, 3}'");
    a.params.push_back(substituted(p, {}));
  }
  a.rhs = substituted(rhs, {});
  // By its bare name, the alias is its right side with the parameters free (Julia's
  // UnionAll): `x isa AA3`.
  Value v = Value::type(eval_type(*a.rhs, env, &a.params));
  aliases_[target.args[0]->name] = std::move(a);
  assign(*target.args[0], v, env);
  return v;
}

ExprPtr Interpreter::expand_alias(const Expr& type) const {
  if (type.kind != Kind::curly || type.args[0]->kind != Kind::id) return nullptr;
  auto it = aliases_.find(type.args[0]->name);
  if (it == aliases_.end()) return nullptr;
  const TypeAlias& a = it->second;
  if (type.args.size() - 1 > a.params.size()) {
    fail(type.pos, fmt::format("the type alias {} takes {} parameters; got {}", type.args[0]->name,
                               a.params.size(), type.args.size() - 1));
  }
  std::unordered_map<std::string, const Expr*> subst;
  for (size_t i = 1; i < type.args.size(); ++i) subst[a.params[i - 1]->name] = type.args[i].get();
  return substituted(*a.rhs, subst);
}

TypeRef Interpreter::eval_type(const Expr& type, const EnvPtr& env,
                               const std::vector<ExprPtr>* where) {
  if (ExprPtr expanded = expand_alias(type)) return eval_type(*expanded, env, where);
  const Expr& head = type.kind == Kind::curly ? *type.args[0] : type;
  // `<:Real` as a parameter (`Tuple{<:Real}`) stands for its bound.
  if (head.kind == Kind::call && head.args.size() == 2 && head.args[0]->name == "<:") {
    return eval_type(*head.args[1], env, where);
  }
  if (head.kind == Kind::id) {
    if (const Expr* w = find_where(where, head.name)) {
      return w->kind == Kind::call ? eval_type(*w->args[2], env, nullptr) : nullptr;
    }
  }
  Value v = head.kind == Kind::field ? eval(*make_expr(Kind::id, head.pos, head.name), env)
                                     : eval(head, env);
  if (v.kind != VKind::type) fail(type.pos, fmt::format("'{}' is not a type", type_expr_str(type)));
  if (type.kind != Kind::curly) return v.type_ref();
  return eval_curly(type, v.type_ref(), env, where);
}

TypeRef Interpreter::eval_curly(const Expr& type, TypeRef head, const EnvPtr& env,
                                const std::vector<ExprPtr>* where) {
  size_t n = type.args.size() - 1;
  auto param = [&](size_t i) { return or_any(eval_type(*type.args[i + 1], env, where)); };
  try {
    switch (head->tag) {
      case TypeTag::abstract_array:
        return refine_array(type, *head, *this);
      case TypeTag::union_: {
        std::vector<TypeRef> members;
        if (!head->params.empty()) {  // an alias of a union of arrays: AbstractVecOrMat{T}
          std::string params = type_expr_str(type).substr(type_expr_str(*type.args[0]).size());
          for (const TypeRef& m : head->params) {
            auto member = std::make_shared<TypeObj>(*refine_array(type, *m, *this));
            member->name = m->name + params;
            members.push_back(std::move(member));
          }
          return make_union(members);
        }
        for (size_t i = 0; i < n; ++i) members.push_back(param(i));
        return make_union(members);
      }
      case TypeTag::val: {
        if (n != 1) user_error("Val takes one parameter, as Val{{2}}");
        std::optional<Value> x = eval_type_value(*type.args[1], env, where);
        return x ? make_val_type(*x) : head;
      }
      case TypeTag::type:
        return type_of_type(type, env, where);
      case TypeTag::tuple:
        return tuple_type(type, *head, env, where);
      case TypeTag::user:
        return struct_type(type, head, env, where);
      default:
        return head;  // parameters of other types (`Dict{Symbol, Int}`) do not constrain
    }
  } catch (const ProgramError&) {
    throw;
  } catch (const UserError& e) {
    fail(type.pos, e.what());
  }
}

// `Complex{Float64}`: a struct instantiated, where its instances get their parameters
// (TypeObj::field_params); otherwise, or with a where variable among them (`Complex{T}
// where T`), the struct itself, which every instantiation is below.
TypeRef Interpreter::struct_type(const Expr& type, const TypeRef& head, const EnvPtr& env,
                                 const std::vector<ExprPtr>* where) {
  size_t n = type.args.size() - 1;
  if (head->field_params.empty() || head->param_count() != n) return head;
  std::vector<TypeRef> params;
  for (size_t i = 0; i < n; ++i) {
    const Expr& p = *type.args[i + 1];
    bool bound = p.kind == Kind::call && p.args.size() == 2 && p.args[0]->name == "<:";
    if (bound || is_free(p, where)) return head;
    params.push_back(or_any(eval_type(p, env, where)));
  }
  return instantiate(head, params);
}

// `Tuple{A, B}`; NTuple{N, T}, and `Tuple{Vararg{T, N}}` the same; without N, any number
// of T.
TypeRef Interpreter::tuple_type(const Expr& type, const TypeObj& head, const EnvPtr& env,
                                const std::vector<ExprPtr>* where) {
  size_t n = type.args.size() - 1;
  auto t = std::make_shared<TypeObj>(*builtin_type(TypeTag::tuple));
  t->name = type_expr_str(type);
  const Expr* item = nullptr;
  const Expr* count_expr = nullptr;
  const Expr* last = n > 0 ? type.args[n].get() : nullptr;
  if (head.name == "NTuple") {
    if (n != 2) user_error("NTuple takes a length and an item type, as NTuple{{2, Int}}");
    item = type.args[2].get(), count_expr = type.args[1].get();
  } else if (last && last->kind == Kind::curly && last->args[0]->kind == Kind::id &&
             last->args[0]->name == "Vararg") {
    if (n != 1 || last->args.size() < 2 || last->args.size() > 3)
      user_error(
          "a Tuple type takes Vararg alone, as Tuple{{Vararg{{Float32}}}}; items "
          "before it are not supported");
    item = last->args[1].get();
    if (last->args.size() == 3) count_expr = last->args[2].get();
  } else {
    t->has_params = true;
    for (size_t i = 0; i < n; ++i) t->params.push_back(eval_type(*type.args[i + 1], env, where));
    set_nesting(*t);
    return t;
  }
  TypeRef item_type = eval_type(*item, env, where);
  std::optional<Value> count;
  if (count_expr) count = eval_type_value(*count_expr, env, where);
  if (!count) {
    t->vararg = true;
    t->params = {item_type};
  } else if (count->kind == VKind::integer && count->i >= 0) {
    t->has_params = true;
    t->params.assign(static_cast<size_t>(count->i), item_type);
  } else {
    user_error("the length of NTuple{{N, T}} must be an integer or a where variable");
  }
  set_nesting(*t);
  return t;
}

// `Type{Float32}`, `Type{<:Real}`; `Type{T}` with T free is any type.
TypeRef Interpreter::type_of_type(const Expr& type, const EnvPtr& env,
                                  const std::vector<ExprPtr>* where) {
  if (type.args.size() != 2) user_error("Type takes one parameter, as Type{{Float32}}");
  const Expr& p = *type.args[1];
  // `Type{T} where T<:Real` takes every type below the bound, as `Type{<:Real}` does.
  bool covariant =
      (p.kind == Kind::call && p.args.size() == 2 && p.args[0]->name == "<:") || is_free(p, where);
  TypeRef of = eval_type(p, env, where);
  if (of == nullptr) return builtin_type(TypeTag::type);
  auto t = std::make_shared<TypeObj>(*builtin_type(TypeTag::type));
  t->params = {of};
  set_nesting(*t);  // before the name, which holds `of`'s
  t->name = fmt::format("Type{{{}{}}}", covariant ? "<:" : "", of->name);
  t->has_params = true;
  t->covariant = covariant;
  return t;
}

// A value parameter (`2` of `Val{2}`, `:relu`, `true`, a global constant); nullopt for a
// free where variable.
std::optional<Value> Interpreter::eval_type_value(const Expr& p, const EnvPtr& env,
                                                  const std::vector<ExprPtr>* where) {
  switch (p.kind) {
    case Kind::int_lit:
      return Value::integer(p.int_value);
    case Kind::bool_lit:
      return Value::boolean(p.int_value != 0);
    case Kind::symbol:
      return Value::symbol(p.name);
    case Kind::curly:
      return Value::type(eval_type(p, env, where));
    default:
      if (is_free(p, where)) return std::nullopt;
      return eval(p, env);
  }
}

void Interpreter::bind_static_params(const Method& m, const Args& args, const EnvPtr& frame) {
  const Function& def = *m.def;
  for (const ExprPtr& w : def.where) {
    const Expr& var = w->kind == Kind::call ? *w->args[1] : *w;
    for (size_t i = 0; i < def.params.size() && i <= args.pos.size(); ++i) {
      std::optional<Value> v = match_param(def.params[i], args, i, var.name);
      if (!v) continue;
      frame->vars[var.name] = std::move(*v);
      break;
    }
  }
}

bool Interpreter::static_params_agree(const Method& m, const Args& args) {
  const Function& def = *m.def;
  for (const ExprPtr& w : def.where) {
    const Expr& var = w->kind == Kind::call ? *w->args[1] : *w;
    std::optional<Value> first;
    for (size_t i = 0; i < def.params.size() && i <= args.pos.size(); ++i) {
      std::optional<Value> v = match_param(def.params[i], args, i, var.name);
      if (!v) continue;
      if (!first) {
        first = std::move(v);
        continue;
      }
      bool types = first->kind == VKind::type && v->kind == VKind::type;
      bool same = types ? subtype(*first->type_ref(), *v->type_ref()) &&
                              subtype(*v->type_ref(), *first->type_ref())
                        : first->kind == v->kind && show(*first) == show(*v);
      if (!same) return false;
    }
  }
  return true;
}

std::optional<Value> Interpreter::match_param(const Param& p, const Args& args, size_t i,
                                              const std::string& name) {
  if (p.splat) {
    if (p.vararg_count == name)
      return Value::integer(static_cast<int64_t>(args.pos.size() - std::min(i, args.pos.size())));
    return std::nullopt;
  }
  if (!p.type || i >= args.pos.size()) return std::nullopt;
  return match_static(*p.type, args.pos[i], name);
}

// What the where variable `name` is for an argument `v` of declared type `type`, if the
// type mentions it where the argument shows it: `T` (v's type), `Val{N}`, `NTuple{N, T}`,
// `Tuple{T, ...}`, `AbstractArray{T, N}` and its aliases.
std::optional<Value> Interpreter::match_static(const Expr& type, const Value& v,
                                               const std::string& name) {
  auto is_name = [&](const Expr& p) { return p.kind == Kind::id && p.name == name; };
  if (is_name(type)) {
    // typeof has no type for a function or a type here; `f::F ... where F` leaves F unbound.
    if (v.kind == VKind::function || v.kind == VKind::type) return std::nullopt;
    return call(*global("typeof"), Args{{v}, {}}, type.pos);
  }
  if (type.kind != Kind::curly || type.args[0]->kind != Kind::id) return std::nullopt;
  if (ExprPtr expanded = expand_alias(type)) return match_static(*expanded, v, name);
  const Value* head = global(type.args[0]->name);
  if (head == nullptr || head->kind != VKind::type) return std::nullopt;
  const TypeObj& h = *head->type_ref();
  size_t n = type.args.size() - 1;
  const Expr* p0 = n > 0 ? type.args[1].get() : nullptr;
  const Expr* p1 = n > 1 ? type.args[2].get() : nullptr;
  if (h.tag == TypeTag::val && v.kind == VKind::object && v.object().type->val && is_name(*p0)) {
    return *v.object().type->val;
  }
  if (h.tag == TypeTag::type && v.kind == VKind::type && is_name(*p0)) return v;
  if (h.tag == TypeTag::user && v.kind == VKind::object && v.object().type->generic) {
    // `z::Complex{T}` binds T to the instance's parameter.
    const TypeObj& t = *v.object().type;
    for (size_t i = 0; i < n && i < t.params.size(); ++i) {
      if (is_name(*type.args[i + 1])) return Value::type(t.params[i]);
    }
    return std::nullopt;
  }
  bool array_union = h.tag == TypeTag::union_ && !h.params.empty();  // AbstractVecOrMat{T}
  if ((h.tag == TypeTag::abstract_array || array_union) && v.is_tensor()) {
    if (p0 != nullptr && is_name(*p0)) return Value::type(dtype_type(v.tensor().type.dtype));
    if (p1 != nullptr && is_name(*p1)) return Value::integer(v.tensor().type.rank());
    return std::nullopt;
  }
  if (h.tag != TypeTag::tuple || v.kind != VKind::tuple) return std::nullopt;
  const std::vector<Value>& items = v.tup().items;
  if (h.name == "NTuple") {
    if (p0 != nullptr && is_name(*p0)) return Value::integer(static_cast<int64_t>(items.size()));
    if (p1 != nullptr && !items.empty()) return match_static(*p1, items[0], name);
    return std::nullopt;
  }
  for (size_t i = 0; i < n && i < items.size(); ++i) {
    if (std::optional<Value> out = match_static(*type.args[i + 1], items[i], name)) return out;
  }
  return std::nullopt;
}

Value Interpreter::construct_val(const TypeRef& t, const Args& args, Pos pos) {
  TypeRef type = t;
  if (!t->val) {
    if (args.pos.size() != 1 || !args.kw.empty()) fail(pos, "Val takes one value, as Val(2)");
    try {
      type = make_val_type(args.pos[0]);
    } catch (const UserError& e) {
      fail(pos, e.what());
    }
  } else if (!args.pos.empty() || !args.kw.empty()) {
    fail(pos, fmt::format("{}() takes no arguments", t->name));
  }
  // A Val is an instance with no fields, of a type that carries the value.
  return Value::instance(std::move(type), {});
}

Value Interpreter::converted(const Expr& decl, const Value& v, const EnvPtr& env) {
  return convert_to(eval_type(*decl.args[1], env, nullptr), v, decl.pos);
}

Value Interpreter::convert_to(const TypeRef& t, Value v, Pos pos) {
  // A weak literal (`x::Float32 = 1.0`) takes the declared type, as Julia converts it.
  if (isa(v, *t) && !(v.kind == VKind::float_ && v.weak)) return v;
  Args conv{{Value::type(t), std::move(v)}, {}};
  return call(*global("convert"), std::move(conv), pos);
}

Value Interpreter::type_assert(const Expr& decl, const EnvPtr& env) {
  Value v = eval(*decl.args[0], env);
  if (signal_ != Signal::none) return Value();
  TypeRef t = eval_type(*decl.args[1], env, nullptr);
  if (!isa(v, *t)) {
    fail(decl.pos, fmt::format("typeassert: expected {}, got {}; convert it first, as {}(x)",
                               t->name, a_type_name(v), t->name));
  }
  return v;
}

}  // namespace ytape::tracer
