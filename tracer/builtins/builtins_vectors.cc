// Vectors that grow and shrink in place: push!, pushfirst!, append!, pop!, popfirst!,
// insert!, deleteat!, empty!. On an array (of rank 1) the new value is a concat or slice
// of the old one, which replaces it in place as writes do (builtins_assign.cc); on a
// vector of values (TupleObj::vector) the items change. Every name for the vector sees
// the change, as in Julia.
#include <fmt/format.h>

#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// Throws unless `v` is a vector that `name` can change.
void check_vector(const Value& v, std::string_view name) {
  if (is_value_vector(v)) return;
  if (is_writable_array(v) && v.tensor().type.rank() == 1) return;
  if (v.kind == VKind::tuple) {
    user_error("{}: a Tuple is immutable; make a vector ([] or [a, b]) to change it", name);
  }
  user_error("{} changes a vector, got {}", name, a_type_name(v));
}

int64_t length_of(const Value& v) {
  return is_value_vector(v) ? static_cast<int64_t>(v.tup().items.size()) : v.tensor().type.shape[0];
}

// The numbers `items` as an array of x's dtype (Julia converts what is pushed).
Value as_array_of(Interpreter& in, const Value& x, const std::vector<Value>& items) {
  DType d = x.tensor().type.dtype;
  std::vector<Value> parts;
  for (const Value& v : items) {
    if (!v.is_number()) {
      user_error("cannot put {} into an array of {}; a vector of values ([]) holds any value",
                 a_type_name(v), dtype_type(d)->name);
    }
    parts.push_back(reshape_to(in, convert_exact(in, v, d), {1}));
  }
  if (parts.empty()) return in.prim1<Prim::slice>({x}, {.start = {1}, .stop = {0}, .step = {1}});
  return parts.size() == 1 ? parts[0] : in.prim1<Prim::concat>(parts, {.dim = 1});
}

// Elements from..to (1-based, inclusive; empty when to < from) of array x.
Value part(Interpreter& in, const Value& x, int64_t from, int64_t to) {
  return index_tensor(in, x, {Value::range(from, 1, std::max(to, from - 1))});
}

// Replaces elements from..to of vector v (length n) by `items`: the one edit that every
// function here makes.
void splice(Interpreter& in, const Value& v, int64_t from, int64_t to,
            const std::vector<Value>& items) {
  int64_t n = length_of(v);
  if (is_value_vector(v)) {
    const std::vector<Value>& old = v.tup().items;
    std::vector<Value> out(old.begin(), old.begin() + (from - 1));
    out.insert(out.end(), items.begin(), items.end());
    out.insert(out.end(), old.begin() + to, old.end());
    in.replace_items(v, std::move(out));
    return;
  }
  std::vector<Value> parts;
  if (from > 1) parts.push_back(part(in, v, 1, from - 1));
  if (!items.empty()) parts.push_back(as_array_of(in, v, items));
  if (to < n) parts.push_back(part(in, v, to + 1, n));
  if (parts.empty()) parts.push_back(as_array_of(in, v, {}));
  in.replace_array(v, parts.size() == 1 ? parts[0] : in.prim1<Prim::concat>(parts, {.dim = 1}));
}

// Element i of vector v, as a value.
Value element(Interpreter& in, const Value& v, int64_t i) {
  if (is_value_vector(v)) return v.tup().items[static_cast<size_t>(i - 1)];
  return index_tensor(in, v, {Value::integer(i)});
}

Value push(Interpreter& in, Args& args) {
  need_args(args, 1, 1 << 30, "push!");
  check_vector(args.pos[0], "push!");
  int64_t n = length_of(args.pos[0]);
  splice(in, args.pos[0], n + 1, n, {args.pos.begin() + 1, args.pos.end()});
  return args.pos[0];
}

Value pushfirst(Interpreter& in, Args& args) {
  need_args(args, 1, 1 << 30, "pushfirst!");
  check_vector(args.pos[0], "pushfirst!");
  splice(in, args.pos[0], 1, 0, {args.pos.begin() + 1, args.pos.end()});
  return args.pos[0];
}

Value append(Interpreter& in, Args& args) {
  need_args(args, 1, 1 << 30, "append!");
  const Value& v = args.pos[0];
  check_vector(v, "append!");
  std::vector<Value> items, parts{v};  // for a vector of values, for an array
  for (size_t k = 1; k < args.pos.size(); ++k) {
    const Value& c = args.pos[k];
    bool array = c.is_tensor() && !c.tensor().number;
    if (array && !is_value_vector(v)) {
      Value flat = reshape_to(in, c, {c.tensor().type.size()});
      parts.push_back(convert_exact(in, flat, v.tensor().type.dtype));
      continue;
    }
    std::vector<Value> more =
        array ? items_of(in, reshape_to(in, c, {c.tensor().type.size()})) : items_of(in, c);
    if (is_value_vector(v)) {
      items.insert(items.end(), more.begin(), more.end());
    } else {
      parts.push_back(as_array_of(in, v, more));
    }
  }
  if (is_value_vector(v)) {
    int64_t n = length_of(v);
    splice(in, v, n + 1, n, items);
  } else if (parts.size() > 1) {
    in.replace_array(v, in.prim1<Prim::concat>(parts, {.dim = 1}));
  }
  return v;
}

// pop!/popfirst!: the element at the end (start), which leaves the vector.
template <bool First>
Value pop(Interpreter& in, Args& args) {
  const char* name = First ? "popfirst!" : "pop!";
  need_args(args, 1, 1, name);
  check_vector(args.pos[0], name);
  int64_t n = length_of(args.pos[0]);
  if (n == 0) user_error("{}: the vector must be non-empty", name);
  int64_t i = First ? 1 : n;
  Value out = element(in, args.pos[0], i);
  splice(in, args.pos[0], i, i, {});
  return out;
}

int64_t position(const Value& i, int64_t hi, std::string_view name) {
  if (i.kind != VKind::integer || i.i < 1 || i.i > hi) {
    user_error("{}: the index must be an integer from 1 to {}, got {}", name, hi, show(i));
  }
  return i.i;
}

// insert!(v, i, x): x becomes element i.
Value insert(Interpreter& in, Args& args) {
  need_args(args, 3, 3, "insert!");
  check_vector(args.pos[0], "insert!");
  int64_t i = position(args.pos[1], length_of(args.pos[0]) + 1, "insert!");
  splice(in, args.pos[0], i, i - 1, {args.pos[2]});
  return args.pos[0];
}

// deleteat!(v, i) and deleteat!(v, a:b): those elements leave.
Value deleteat(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "deleteat!");
  check_vector(args.pos[0], "deleteat!");
  int64_t n = length_of(args.pos[0]);
  const Value& at = args.pos[1];
  if (at.kind == VKind::range && at.rng().step == 1) {
    const RangeObj& r = at.rng();
    if (r.length() == 0) return args.pos[0];
    position(Value::integer(r.start), n, "deleteat!");
    position(Value::integer(r.stop), n, "deleteat!");
    splice(in, args.pos[0], r.start, r.stop, {});
    return args.pos[0];
  }
  int64_t i = position(at, n, "deleteat!");
  splice(in, args.pos[0], i, i, {});
  return args.pos[0];
}

Value empty(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "empty!");
  check_vector(args.pos[0], "empty!");
  splice(in, args.pos[0], 1, length_of(args.pos[0]), {});
  return args.pos[0];
}

}  // namespace

void add_vector_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"push!", push},
                        {"pushfirst!", pushfirst},
                        {"append!", append},
                        {"pop!", pop<false>},
                        {"popfirst!", pop<true>},
                        {"insert!", insert},
                        {"deleteat!", deleteat},
                        {"empty!", empty},
                    });
}

}  // namespace ytape::tracer
