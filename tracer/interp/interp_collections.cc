// Collections: tuples, named tuples, ranges, array literals, comprehensions, indexing.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tape/error.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

bool all_numbers(const std::vector<Value>& items) {
  for (const Value& v : items) {
    if (!v.is_number()) return false;
  }
  return true;
}

// The decimal scale 10^m (m <= 15) at which x is an integer, or 0.
double decimal_scale(double x) {
  double scale = 1;
  for (int m = 0; m <= 15; ++m, scale *= 10) {
    double scaled = x * scale;
    if (std::abs(scaled) < 0x1p52 && std::nearbyint(scaled) / scale == x) return scale;
  }
  return 0;
}

}  // namespace

Value Interpreter::float_range(const std::vector<Value>& parts, Pos pos) {
  double start = as_double(parts[0]), stop = as_double(parts.back());
  double step = parts.size() == 3 ? as_double(parts[1]) : 1;
  if (step == 0) fail(pos, "a range's step cannot be zero");
  if (!std::isfinite(start) || !std::isfinite(step) || !std::isfinite(stop)) {
    fail(pos, "a range's bounds and step must be finite");
  }
  // As Julia does for decimal literals: when start, step and stop are n/10^m, the length
  // and the elements come from those integers, so 0:0.1:0.3 ends at 0.3, not at
  // 0.30000000000000004; other ranges step in doubles.
  double s1 = decimal_scale(start), s2 = decimal_scale(step), s3 = decimal_scale(stop);
  bool exact = s1 != 0 && s2 != 0 && s3 != 0;
  double scale = std::max({s1, s2, s3});
  double a = std::nearbyint(start * scale), s = std::nearbyint(step * scale),
         b = std::nearbyint(stop * scale);
  double count =
      exact ? std::floor((b - a) / s) + 1 : std::floor((stop - start) / step + 1e-10) + 1;
  if (count > (1 << 24)) fail(pos, fmt::format("a float range of {} elements is too long", count));
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
  Tensor t(Type{DType::f64, {n}});
  for (int64_t k = 0; k < n; ++k) {
    t.data<double>()[k] =
        exact ? (a + static_cast<double>(k) * s) / scale : start + static_cast<double>(k) * step;
  }
  return Value::concrete(std::move(t));
}

Value Interpreter::eval_collection(const Expr& e, const EnvPtr& env) {
  switch (e.kind) {
    case Kind::tuple: {
      Args args;
      eval_args(e, 0, env, args);
      return Value::tuple(std::move(args.pos));
    }
    case Kind::named_tuple: {
      Args args;
      eval_args(e, 0, env, args);
      std::vector<std::string> names;
      std::vector<Value> items;
      for (auto& [name, v] : args.kw) {
        names.push_back(name);
        items.push_back(std::move(v));
      }
      return Value::named_tuple(std::move(names), std::move(items));
    }
    case Kind::range: {
      std::vector<Value> values;
      bool floats = false;
      for (const ExprPtr& a : e.args) {
        values.push_back(eval(*a, env));
        const Value& v = values.back();
        if (v.kind != VKind::integer && v.kind != VKind::float_) {
          fail(a->pos, fmt::format("range bounds must be numbers, got {}", a_type_name(v)));
        }
        floats = floats || v.kind == VKind::float_;
      }
      if (floats) return float_range(values, e.pos);
      std::vector<int64_t> parts;
      for (const Value& v : values) parts.push_back(v.i);
      if (parts.size() == 2) return Value::range(parts[0], 1, parts[1]);
      if (parts[1] == 0) fail(e.pos, "a range's step cannot be zero");
      return Value::range(parts[0], parts[1], parts[2]);
    }
    case Kind::comprehension:
    case Kind::generator: {
      std::vector<Value> out;
      auto scope = std::make_shared<Env>();
      scope->parent = env;
      std::optional<Value> over;
      if (e.kind == Kind::comprehension) {
        if (std::optional<Value> r = traced_comprehension(e, scope, over)) return *r;
      }
      std::vector<int64_t> dims;
      comprehend(e, 1, scope, out, &dims, over ? &*over : nullptr);
      // A generator over a matrix (or a product of ranges) keeps its shape too, so that
      // `collect(x^2 for x in m)` is a matrix, as Julia's; others are tuples of values.
      bool shaped = e.args.size() == 2 && dims.size() > 1;
      if ((e.kind == Kind::comprehension || shaped) && all_numbers(out) && !out.empty()) {
        Args args;
        args.pos = std::move(out);
        Value v = call(*global("vect"), std::move(args), e.pos);
        // `[f(i, j) for i in a, j in b]` is a length(a) x length(b) array; a filter or a
        // second `for` makes it a vector, as in Julia.
        if (shaped) {
          Args shape;
          shape.pos.push_back(std::move(v));
          for (int64_t d : dims) shape.pos.push_back(Value::integer(d));
          v = call(*global("reshape"), std::move(shape), e.pos);
        }
        return v;
      }
      if (e.kind == Kind::comprehension) return Value::vector(std::move(out));
      return Value::tuple(std::move(out));
    }
    default:
      return eval_array(e, env);
  }
}

std::optional<Value> Interpreter::traced_comprehension(const Expr& e, const EnvPtr& scope,
                                                       std::optional<Value>& over) {
  const Expr& c = *e.args[1];
  if (!tracing() || e.args.size() != 2 || c.kind == Kind::filter || c.args.size() != 1 ||
      c.args[0]->args[0]->kind != Kind::id)
    return std::nullopt;
  over = eval(*c.args[0]->args[1], scope);
  Fold fold;
  fold.index = c.args[0]->args[0]->name;
  fold.env = scope;
  fold.stacks = true;
  fold.step = [this, &e](const EnvPtr& inner, const Value&) { return eval(*e.args[0], inner); };
  return trace_fold(fold, *over, e.pos);
}

void Interpreter::comprehend(const Expr& e, size_t clause, const EnvPtr& env,
                             std::vector<Value>& out, std::vector<int64_t>* dims,
                             const Value* given) {
  if (clause == e.args.size()) {
    out.push_back(eval(*e.args[0], env));
    return;
  }
  const Expr& c = *e.args[clause];
  if (c.kind == Kind::filter) {
    if (truth(eval(*c.args[0], env), c.pos)) comprehend(e, clause + 1, env, out);
    return;
  }
  // An iteration clause `i in a, j in b` runs over the product in column-major order, the
  // first iterator fastest, as Julia's does; its ranges are evaluated once, outside it.
  std::vector<std::vector<Value>> ranges;
  bool empty = false;
  for (const ExprPtr& in : c.args) {
    Value over = given != nullptr ? *given : eval(*in->args[1], env);
    ranges.push_back(iterate(over, in->args[1]->pos));
    // An array iterator gives its shape, as Julia's: [2v for v in m] is a matrix.
    bool array = over.is_tensor() && !over.tensor().number;
    if (dims && array) {
      const Shape& s = over.tensor().type.shape;
      dims->insert(dims->end(), s.begin(), s.end());
    } else if (dims) {
      dims->push_back(static_cast<int64_t>(ranges.back().size()));
    }
    empty = empty || ranges.back().empty();
  }
  if (empty) return;
  std::vector<size_t> at(ranges.size(), 0);
  while (true) {
    auto inner = std::make_shared<Env>();
    inner->parent = env;
    for (size_t k = 0; k < ranges.size(); ++k) {
      bind_local(*c.args[k]->args[0], ranges[k][at[k]], inner);
    }
    comprehend(e, clause + 1, inner, out);
    size_t k = 0;
    while (k < at.size() && ++at[k] == ranges[k].size()) at[k++] = 0;
    if (k == at.size()) return;
  }
}

Value Interpreter::eval_array(const Expr& e, const EnvPtr& env) {
  if (e.kind == Kind::vect) {
    Args args;
    eval_args(e, 0, env, args);
    bool structs = std::any_of(args.pos.begin(), args.pos.end(), is_number_struct) &&
                   std::all_of(args.pos.begin(), args.pos.end(),
                               [](const Value& v) { return v.is_number() || is_number_struct(v); });
    // `[1, 2im]`: a vector of values of complex numbers of one type, as Julia promotes.
    if (structs) return call(*global("promote_vector"), std::move(args), e.pos);
    if (args.pos.empty() || !all_numbers(args.pos)) {
      // `[]` and vectors of non-numbers (layers, tuples, arrays) are vectors of values.
      return Value::vector(std::move(args.pos));
    }
    return call(*global("vect"), std::move(args), e.pos);
  }
  if (e.kind == Kind::typed_array) {
    Value type = eval(*e.args[0], env);
    Value array = eval(*e.args[1], env);
    Args args;
    args.pos = {type, array};
    return call(*global("convert"), std::move(args), e.pos);
  }
  // A matrix literal: each row concatenated horizontally, the rows vertically.
  Args rows;
  for (const ExprPtr& row : e.args) {
    Args items;
    eval_args(*row, 0, env, items);
    if (items.pos.size() == 1) {
      rows.pos.push_back(std::move(items.pos[0]));
    } else {
      rows.pos.push_back(call(*global("hcat"), std::move(items), row->pos));
    }
  }
  return call(*global("vcat"), std::move(rows), e.pos);
}

Value Interpreter::eval_index(const Expr& e, const EnvPtr& env, bool as_view) {
  Value object = eval(*e.args[0], env);
  if (object.kind == VKind::type) {
    // `Float32[1, 2]`: a typed vector literal.
    Args items;
    eval_args(e, 1, env, items);
    // `Any[layer, :a]`, `Any[]`: a vector of values.
    if (object.type_ref()->tag == TypeTag::any) return Value::vector(std::move(items.pos));
    // `ComplexF64[1, 2]`: a vector of values, each item converted.
    if (object.type_ref()->tag == TypeTag::user) {
      items.pos.insert(items.pos.begin(), object);
      return call(*global("typed_vector"), std::move(items), e.pos);
    }
    Value v = call(*global("vect"), std::move(items), e.pos);
    Args args;
    args.pos = {object, v};
    return call(*global("convert"), std::move(args), e.pos);
  }
  // A view of an array only, as Julia's `maybeview` (what @views calls): a tuple, string or
  // dict is indexed as usual.
  bool view = as_view && object.is_tensor() && !object.tensor().number;
  Args args = index_args(e, std::move(object), env);
  return call(*global(view ? "view" : "getindex"), std::move(args), e.pos);
}

int64_t Interpreter::object_end(const Value& object) {
  // Julia's lastindex, which defaults to length: a Chain's c[end] is its last layer.
  for (const char* name : {"lastindex", "length"}) {
    const Value* f = global(name);
    Args args;
    args.pos = {object};
    if (f == nullptr || f->kind != VKind::function || find_method(f->fn(), args) == nullptr) {
      continue;
    }
    Value n = call(*f, std::move(args), here_);
    if (n.kind == VKind::integer) return n.i;
  }
  return kUnknownEnd;
}

Args Interpreter::index_args(const Expr& e, Value object, const EnvPtr& env) {
  Args args;
  args.pos.push_back(object);
  size_t n = e.args.size() - 1;
  for (size_t k = 0; k < n; ++k) {
    int64_t end = 0;
    if (object.kind == VKind::tuple || object.kind == VKind::named_tuple) {
      end = static_cast<int64_t>(object.tup().items.size());
    } else if (object.kind == VKind::range) {
      end = object.rng().length();
    } else if (object.kind == VKind::object) {
      end = object_end(object);
    } else if (object.is_tensor()) {
      const Shape& s = object.tensor().type.shape;
      end = 1;
      if (n == 1) {
        end = object.tensor().type.size();
      } else if (k < s.size()) {
        end = k + 1 == n ? 1 : s[k];
        if (k + 1 == n) {
          for (size_t d = k; d < s.size(); ++d) end *= s[d];
        }
      }
    }
    // `x[idx...]`: the items of idx are indices, as Julia's (an `end` in idx has no dim).
    const Expr& index = *e.args[k + 1];
    bool splat = index.kind == Kind::splat;
    ends_.push_back(splat ? kUnknownEnd : end);
    Value v;
    try {
      v = eval(splat ? *index.args[0] : index, env);
    } catch (...) {
      ends_.pop_back();
      throw;
    }
    ends_.pop_back();
    if (!splat) {
      args.pos.push_back(std::move(v));
      continue;
    }
    for (Value& item : iterate(v, index.pos)) args.pos.push_back(std::move(item));
  }
  return args;
}

}  // namespace ytape::tracer
