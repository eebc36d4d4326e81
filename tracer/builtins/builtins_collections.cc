// Higher-order functions and tuple utilities over static structure: they run in the
// interpreter, so a trace holds only the primitives their functions record.
#include <fmt/format.h>

#include <algorithm>

#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

// The items of a collection, as a `for` loop over it sees them (a struct's by its
// `iterate` methods: first(loader) of a DataLoader is its first batch).
std::vector<Value> items_of(Interpreter& in, const Value& v) {
  return in.iterate(v, in.here());
}

namespace {

Value call_with(Interpreter& in, const Value& f, std::vector<Value> args) {
  Args a;
  a.pos = std::move(args);
  return in.call(f, std::move(a), in.here());
}

Value map(Interpreter& in, Args& args) {
  need_args(args, 2, 1 << 30, "map");
  const Value& f = args.pos[0];
  if (args.pos.size() == 2 && args.pos[1].is_tensor()) {
    Args a;
    a.pos = {args.pos[1]};
    return in.broadcast(f, std::move(a), in.here());
  }
  if (args.pos.size() == 2) {  // over a range or a sequence of slices, one scan op
    if (std::optional<Value> r = in.trace_map(f, args.pos[1], in.here())) return *r;
  }
  std::vector<std::vector<Value>> lists;
  size_t n = SIZE_MAX;
  for (size_t i = 1; i < args.pos.size(); ++i) {
    lists.push_back(items_of(in, args.pos[i]));
    n = std::min(n, lists.back().size());
  }
  std::vector<Value> out;
  for (size_t k = 0; k < n; ++k) {
    std::vector<Value> call_args;
    for (auto& l : lists) call_args.push_back(l[k]);
    out.push_back(call_with(in, f, std::move(call_args)));
  }
  // Over named tuples with the same names, a named tuple; over tuples, a tuple; over
  // anything else (vectors, ranges, iterators), a Vector, as Julia's.
  const Value& first = args.pos[1];
  bool named = first.kind == VKind::named_tuple;
  for (size_t i = 2; named && i < args.pos.size(); ++i) {
    named = args.pos[i].kind == VKind::named_tuple && args.pos[i].tup().names == first.tup().names;
  }
  if (named) return Value::named_tuple(first.tup().names, std::move(out));
  bool tuple =
      first.kind == VKind::named_tuple || (first.kind == VKind::tuple && !is_value_vector(first));
  if (tuple) return Value::tuple(std::move(out));
  return vector_of(in, std::move(out));
}

// The fold of `op` over `over` from `init` as one scan op (Interpreter::trace_fold), each
// accumulator kept (`accumulate`) or only the last.
std::optional<Value> traced_fold(Interpreter& in, const Value& op, const Value& over,
                                 const Value& init, bool accumulate) {
  Interpreter::Fold fold;
  fold.init = init;
  fold.stacks = accumulate;
  fold.step = [&in, &op](const EnvPtr& scope, const Value& x) {
    return call_with(in, op, {scope->vars.at(Interpreter::kFoldAcc), x});
  };
  return in.trace_fold(fold, over, in.here());
}

Value foldl(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "foldl");
  const Value* init = keyword(args, "init");
  if (init != nullptr) {
    if (std::optional<Value> r = traced_fold(in, args.pos[0], args.pos[1], *init, false)) return *r;
  }
  std::vector<Value> items = items_of(in, args.pos[1]);
  if (init == nullptr && items.empty()) user_error("reducing an empty collection needs init=");
  Value acc = init != nullptr ? *init : items[0];
  for (size_t i = init != nullptr ? 0 : 1; i < items.size(); ++i) {
    acc = call_with(in, args.pos[0], {acc, items[i]});
  }
  return acc;
}

// accumulate(op, itr; init): each accumulator of foldl's, as a Vector (Julia's).
Value accumulate(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "accumulate");
  const Value* init = keyword(args, "init");
  if (init != nullptr) {
    if (std::optional<Value> r = traced_fold(in, args.pos[0], args.pos[1], *init, true)) return *r;
  }
  std::vector<Value> items = items_of(in, args.pos[1]), out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i == 0 && init == nullptr) {
      out.push_back(items[0]);
      continue;
    }
    out.push_back(call_with(in, args.pos[0], {out.empty() ? *init : out.back(), items[i]}));
  }
  return vector_of(in, std::move(out));
}

// slices_along(x, d): the slices of array x along dim d, each x[..., i, ...] (eachslice's,
// eachcol's, eachrow's), which a traced fold or map reads in place (Interpreter::slices).
Value slices_along(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "slices_along");
  const Value& x = args.pos[0];
  if (!x.is_tensor() || args.pos[1].kind != VKind::integer)
    user_error("slices_along(x, d) takes an array and a dim");
  const Shape& s = x.tensor().type.shape;
  const int64_t d = args.pos[1].i;
  if (d < 1 || d > static_cast<int64_t>(s.size()))
    user_error("dims={} is not a dim of an array of {} dims", d, s.size());
  return vector_of(in, in.slices(x, static_cast<int>(d), s[static_cast<size_t>(d - 1)]));
}

Value ntuple(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "ntuple");
  if (args.pos[1].kind != VKind::integer) user_error("ntuple(f, n) needs an integer n");
  int64_t n = args.pos[1].i;
  in.charge_steps(n, in.here(), fmt::format("ntuple's {} values", n));
  std::vector<Value> out;
  for (int64_t i = 1; i <= args.pos[1].i; ++i)
    out.push_back(call_with(in, args.pos[0], {Value::integer(i)}));
  return Value::tuple(std::move(out));
}

// merge(a, b...) of named tuples, as Julia's: a's names in order, then the new names of
// each later one; a name's value is the last one given.
Value merge(Interpreter&, Args& args) {
  need_args(args, 1, 1 << 30, "merge");
  std::vector<std::string> names;
  std::vector<Value> items;
  for (const Value& v : args.pos) {
    if (v.kind != VKind::named_tuple && !(v.kind == VKind::tuple && v.tup().items.empty())) {
      user_error("merge takes named tuples, got {}", a_type_name(v));
    }
    for (size_t i = 0; i < v.tup().items.size(); ++i) {
      auto at = std::find(names.begin(), names.end(), v.tup().names[i]);
      if (at != names.end()) {
        items[static_cast<size_t>(at - names.begin())] = v.tup().items[i];
      } else {
        names.push_back(v.tup().names[i]);
        items.push_back(v.tup().items[i]);
      }
    }
  }
  return Value::named_tuple(std::move(names), std::move(items));
}

Value zip(Interpreter& in, Args& args) {
  std::vector<std::vector<Value>> lists;
  size_t n = SIZE_MAX;
  for (const Value& v : args.pos) {
    lists.push_back(items_of(in, v));
    n = std::min(n, lists.back().size());
  }
  if (lists.empty()) n = 0;
  std::vector<Value> out;
  for (size_t k = 0; k < n; ++k) {
    std::vector<Value> row;
    for (auto& l : lists) row.push_back(l[k]);
    out.push_back(Value::tuple(std::move(row)));
  }
  return Value::tuple(std::move(out));
}

Value enumerate(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "enumerate");
  std::vector<Value> out;
  int64_t i = 1;
  for (Value& v : items_of(in, args.pos[0]))
    out.push_back(Value::tuple({Value::integer(i++), std::move(v)}));
  return Value::tuple(std::move(out));
}

// first, last and isempty of a range, and `x in r` of an integer x, read its bounds: its
// values, up to 2^64 of them, are never made.
template <bool Last>
Value end_item(Interpreter& in, Args& args) {
  need_args(args, 1, 1, Last ? "last" : "first");
  const Value& x = args.pos[0];
  if (x.kind == VKind::range) {
    int64_t n = in.range_length(x.rng(), in.here());
    if (n == 0) user_error("{} of an empty collection", Last ? "last" : "first");
    return Value::integer(x.rng().at(Last ? n - 1 : 0));
  }
  std::vector<Value> items = items_of(in, x);
  if (items.empty()) user_error("{} of an empty collection", Last ? "last" : "first");
  return Last ? items.back() : items.front();
}

bool in_range(Interpreter& in, int64_t x, const RangeObj& r) {
  int64_t n = in.range_length(r, in.here());
  if (n == 0) return false;
  int64_t lo = r.step > 0 ? r.start : r.at(n - 1), hi = r.step > 0 ? r.at(n - 1) : r.start;
  if (x < lo || x > hi) return false;
  uint64_t magnitude =
      r.step > 0 ? static_cast<uint64_t>(r.step) : 0 - static_cast<uint64_t>(r.step);
  return (static_cast<uint64_t>(x) - static_cast<uint64_t>(lo)) % magnitude == 0;
}

Value collect(Interpreter& in, Args& args) {
  need_args(args, 1, 2, "collect");
  if (args.pos.size() == 2) {  // collect(T, itr): the items converted to T, as T.(itr)
    if (args.pos[0].kind != VKind::type) user_error("collect(T, itr) takes a type first");
    const Value& itr = args.pos[1];
    Args a;  // broadcasting over an array makes the new array itself
    a.pos.push_back(itr.is_tensor() ? itr : vector_of(in, items_of(in, itr)));
    return in.broadcast(args.pos[0], std::move(a), in.here());
  }
  const Value& v = args.pos[0];
  if (v.is_tensor()) return copy_array(v);  // a new array, as Julia's
  return vector_of(in, items_of(in, v));
}

// reverse(x; dims): an array reversed along dims (all of them by default), as Julia's;
// a tuple's or a vector of values' items in reverse order.
Value reverse(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "reverse");
  const Value& x = args.pos[0];
  if (x.is_tensor() && !x.tensor().number) {
    const Shape& shape = x.tensor().type.shape;
    const Value* dims = keyword(args, "dims");
    std::vector<int64_t> along;
    for (int64_t d = 1; d <= static_cast<int64_t>(shape.size()); ++d) along.push_back(d);
    if (dims != nullptr) along = int_list(*dims, "dims");
    std::vector<bool> reversed(shape.size(), false);
    for (int64_t d : along) {
      if (d < 1 || d > static_cast<int64_t>(shape.size())) {
        user_error("reverse: dims {} is not a dimension of an array of rank {}", d, shape.size());
      }
      reversed[static_cast<size_t>(d - 1)] = true;
    }
    // Adjacent dims reverse as one: (3, 3, C, K) along dims 1 and 2 is (9, C, K) along
    // dim 1, one gather (and one scatter in its gradient) instead of two. Flux's Conv flips
    // its weights so on every call.
    Shape merged;
    std::vector<Value> idx;
    for (size_t d = 0; d < shape.size();) {
      size_t e = d + 1;
      int64_t n = shape[d];
      while (reversed[d] && e < shape.size() && reversed[e]) n *= shape[e++];
      merged.push_back(n);
      idx.push_back(reversed[d] ? Value::range(n, -1, 1) : Value::symbol(":"));
      d = e;
    }
    if (merged.size() == shape.size()) return index_tensor(in, x, idx);
    return reshape_to(in, index_tensor(in, reshape_to(in, x, merged), idx), shape);
  }
  if (keyword(args, "dims") != nullptr) user_error("reverse with dims takes an array");
  if (x.kind == VKind::range && x.rng().length() > 0) {
    const RangeObj& r = x.rng();
    return Value::range(r.at(r.length() - 1), -r.step, r.start);
  }
  std::vector<Value> items = items_of(in, x);
  std::vector<Value> out(items.rbegin(), items.rend());
  return is_value_vector(x) ? Value::vector(std::move(out)) : Value::tuple(std::move(out));
}

Value isempty(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "isempty");
  if (args.pos[0].is_tensor()) return Value::boolean(args.pos[0].tensor().type.size() == 0);
  if (args.pos[0].kind == VKind::range)
    return Value::boolean(in.range_length(args.pos[0].rng(), in.here()) == 0);
  return Value::boolean(items_of(in, args.pos[0]).empty());
}

// `x in xs` over static collections: true when some item == x.
Value in_(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "in");
  if (args.pos[1].is_tensor()) user_error("'in' over an array is not supported; use a tuple");
  if (args.pos[1].kind == VKind::range && args.pos[0].kind == VKind::integer)
    return Value::boolean(in_range(in, args.pos[0].i, args.pos[1].rng()));
  for (const Value& v : items_of(in, args.pos[1])) {
    Value eq = call_with(in, *in.global("=="), {args.pos[0], v});
    if (eq.kind == VKind::boolean && eq.b) return Value::boolean(true);
  }
  return Value::boolean(false);
}

Value foreach (Interpreter& in, Args & args) {
  map(in, args);
  return Value();
}

}  // namespace

void add_collection_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"map", map},
                        {"foldl", foldl},
                        {"accumulate", accumulate},
                        {"slices_along", slices_along},
                        {"reduce", foldl},
                        {"ntuple", ntuple},
                        {"merge", merge},
                        {"zip", zip},
                        {"enumerate", enumerate},
                        {"first", end_item<false>},
                        {"last", end_item<true>},
                        {"collect", collect},
                        {"reverse", reverse},
                        {"foreach", foreach},
                        {"isempty", isempty},
                        {"in", in_},
                    });
}

}  // namespace ytape::tracer
