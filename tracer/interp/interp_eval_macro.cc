// `@eval e` (Kind::eval_): a copy of e whose `$x` and `$(...)` parts are replaced by their
// values as syntax (a Symbol a name, a number a literal), run at top level. Julia's
// packages define families of methods this way, looping over function names.
#include <fmt/format.h>

#include "tape/error.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

ExprPtr value_syntax(const Value& v, Pos pos) {
  switch (v.kind) {
    case VKind::symbol:
      return make_expr(Kind::id, pos, v.text());
    case VKind::function:
      return make_expr(Kind::id, pos, v.fn().name);
    case VKind::type:
      return make_expr(Kind::id, pos, v.type_ref()->name);
    case VKind::integer: {
      ExprPtr e = make_expr(Kind::int_lit, pos);
      e->int_value = v.i;
      return e;
    }
    case VKind::float_: {
      ExprPtr e = make_expr(Kind::float_lit, pos);
      e->float_value = v.f;
      e->float32 = v.dtype == DType::f32;
      return e;
    }
    case VKind::boolean: {
      ExprPtr e = make_expr(Kind::bool_lit, pos);
      e->int_value = v.b ? 1 : 0;
      return e;
    }
    case VKind::string:
      return make_expr(Kind::string_lit, pos, v.text());
    case VKind::nothing:
      return make_expr(Kind::nothing, pos);
    case VKind::tuple: {
      ExprPtr e = make_expr(Kind::tuple, pos);
      for (const Value& item : v.tup().items) e->args.push_back(value_syntax(item, pos));
      return e;
    }
    default:
      user_error("@eval cannot write {} into code: interpolate names, numbers and strings",
                 a_type_name(v));
  }
}

}  // namespace

Value Interpreter::eval_macro(const Expr& e, const EnvPtr& env) {
  eval_trees_.push_back(interpolated(*e.args[0], env));
  return eval(*eval_trees_.back(), globals_);
}

Param Interpreter::interpolated(const Param& p, const EnvPtr& env) {
  Param out;
  out.pos = p.pos;
  out.name = p.name;
  out.unpack = p.unpack;
  if (p.type) out.type = interpolated(*p.type, env);
  if (p.default_value) out.default_value = interpolated(*p.default_value, env);
  out.splat = p.splat;
  out.vararg_count = p.vararg_count;
  return out;
}

std::unique_ptr<Function> Interpreter::interpolated(const Function& f, const EnvPtr& env) {
  auto out = std::make_unique<Function>();
  out->name = f.name;
  if (f.name_expr) {
    Value name = eval(*f.name_expr->args[0], env);
    if (name.kind != VKind::symbol && name.kind != VKind::function)
      fail(f.name_expr->pos, fmt::format("@eval names a method by a Symbol or a function, not {}",
                                         a_type_name(name)));
    out->name = name.kind == VKind::symbol ? name.text() : name.fn().name;
  }
  if (f.receiver) out->receiver = interpolated(*f.receiver, env);
  for (const Param& p : f.params) out->params.push_back(interpolated(p, env));
  for (const Param& p : f.kwparams) out->kwparams.push_back(interpolated(p, env));
  for (const ExprPtr& w : f.where) out->where.push_back(interpolated(*w, env));
  if (f.body) out->body = interpolated(*f.body, env);
  return out;
}

ExprPtr Interpreter::interpolated(const Expr& e, const EnvPtr& env) {
  if (e.kind == Kind::interpolate) {
    Value v = eval(*e.args[0], env);
    try {
      return value_syntax(v, e.pos);
    } catch (const ProgramError&) {
      throw;
    } catch (const UserError& u) {
      fail(e.pos, u.what());
    }
  }
  ExprPtr out = make_expr(e.kind, e.pos, e.name);
  out->int_value = e.int_value;
  out->float_value = e.float_value;
  out->float32 = e.float32;
  // An @eval inside @eval keeps its own `$`s for when it runs.
  if (e.kind == Kind::eval_) {
    out->args.push_back(interpolated(*e.args[0], env));
    return out;
  }
  for (const ExprPtr& a : e.args) out->args.push_back(interpolated(*a, env));
  if (e.function) out->function = interpolated(*e.function, env);
  if (e.struct_def) {
    const StructDef& s = *e.struct_def;
    auto d = std::make_unique<StructDef>();
    d->name = s.name;
    d->is_mutable = s.is_mutable;
    for (const ExprPtr& p : s.type_params) d->type_params.push_back(interpolated(*p, env));
    if (s.supertype) d->supertype = interpolated(*s.supertype, env);
    for (const Field& f : s.fields) {
      d->fields.push_back({f.pos, f.name, f.type ? interpolated(*f.type, env) : nullptr,
                           f.default_value ? interpolated(*f.default_value, env) : nullptr});
    }
    d->kwdef = s.kwdef;
    for (const ExprPtr& c : s.constructors) d->constructors.push_back(interpolated(*c, env));
    out->struct_def = std::move(d);
  }
  return out;
}

}  // namespace ytape::tracer
