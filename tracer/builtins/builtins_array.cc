// Arrays: literals, indexing and slicing, shapes, concatenation.
#include <fmt/format.h>

#include <algorithm>

#include "tape/error.h"
#include "tape/float16.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

void need_args(const Args& args, size_t lo, size_t hi, std::string_view name) {
  size_t n = args.pos.size();
  if (n >= lo && n <= hi) return;
  if (lo == hi) user_error("{} takes {} argument{}, got {}", name, lo, lo == 1 ? "" : "s", n);
  user_error("{} takes {} to {} arguments, got {}", name, lo, hi, n);
}

Value reshape_to(Interpreter& in, const Value& v, Shape shape) {
  if (v.tensor().type.shape == shape) return v;
  return in.prim1<Prim::reshape>({v}, {.shape = std::move(shape)});
}

std::vector<int64_t> int_list(const Value& v, std::string_view what) {
  if (v.kind == VKind::integer) return {v.i};
  if (v.is_tensor() && !v.tensor().traced && v.tensor().type.dtype == DType::i64 &&
      v.tensor().type.rank() == 1) {
    // A vector of integers, as Julia takes one too (permutedims(x, [2, 1, 3])).
    const int64_t* p = v.tensor().data.data<int64_t>();
    return std::vector<int64_t>(p, p + v.tensor().type.shape[0]);
  }
  if (v.kind == VKind::tuple || v.kind == VKind::range) {
    std::vector<int64_t> out;
    if (v.kind == VKind::range) {
      // Dims and sizes are a few: a range of more is a mistake, and would take long.
      int64_t n = v.rng().length();
      if (n > 1024) user_error("{} must be a few integers, got a range of {}", what, n);
      for (int64_t i = 0; i < n; ++i) out.push_back(v.rng().at(i));
      return out;
    }
    for (const Value& item : v.tup().items) {
      if (item.kind != VKind::integer)
        user_error("{} must be integers, got {}", what, a_type_name(item));
      out.push_back(item.i);
    }
    return out;
  }
  user_error("{} must be an integer or a tuple of integers, got {}", what, a_type_name(v));
}

Value as_number(const Value& rank0) {
  const TensorObj& t = rank0.tensor();
  return t.traced ? Value::traced(t.var, t.type, true, t.level)
                  : to_scalar(Value::concrete(t.data, true));
}

Value to_scalar(const Value& v) {
  if (!v.is_tensor() || v.tensor().traced || v.tensor().type.rank() != 0) return v;
  const Tensor& t = v.tensor().data;
  switch (t.dtype()) {
    case DType::f32:
      return Value::floating(t.data<float>()[0], DType::f32);
    case DType::f64:
      return Value::floating(t.data<double>()[0], DType::f64);
    case DType::f16:
      return Value::floating(f16_to_f32(t.data<uint16_t>()[0]), DType::f16);
    case DType::i64:
      return Value::integer(t.data<int64_t>()[0]);
    case DType::boolean:
      return Value::boolean(t.data<bool>()[0]);
  }
  return v;
}

DType literal_dtype(const std::vector<Value>& items) {
  bool f64 = false, f32 = false, f16 = false, weak = false, all_bool = !items.empty();
  for (const Value& v : items) {
    DType d = v.is_tensor() ? v.tensor().type.dtype : v.dtype;
    bool fl = v.kind == VKind::float_ || (v.is_tensor() && is_float(d));
    if (fl && v.weak) weak = true;
    if (fl && !v.weak) (d == DType::f64 ? f64 : d == DType::f16 ? f16 : f32) = true;
    if (v.kind != VKind::boolean && !(v.is_tensor() && d == DType::boolean)) all_bool = false;
  }
  if (f64) return DType::f64;
  if (f32) return DType::f32;
  if (f16) return DType::f16;
  if (weak) return DType::f64;
  return all_bool ? DType::boolean : DType::i64;
}

namespace {

bool is_array(const Value& v) {
  return v.is_tensor() && !v.tensor().number;
}

Value concat(Interpreter& in, const std::vector<Value>& parts, int64_t dim) {
  DType d = literal_dtype(parts);
  std::vector<Value> args;
  for (const Value& p : parts) args.push_back(in.as_tensor(p, d));
  if (args.size() == 1) return copy_array(args[0]);
  return in.prim1<Prim::concat>(args, {.dim = dim});
}

// A vector of numbers: concrete data when all are concrete, else a concat of the traced.
Value vect(Interpreter& in, Args& args) {
  DType d = literal_dtype(args.pos);
  bool traced = false;
  for (const Value& v : args.pos) {
    if (!v.is_number()) user_error("an array literal holds numbers, got {}", a_type_name(v));
    traced = traced || (v.is_tensor() && v.tensor().traced);
  }
  int64_t n = static_cast<int64_t>(args.pos.size());
  if (!traced) {
    Tensor t(Type{d, {n}});
    for (int64_t i = 0; i < n; ++i) {
      Value x = to_scalar(args.pos[i]);
      double v = as_double(x);
      switch (d) {
        case DType::f32:
          t.data<float>()[i] = static_cast<float>(v);
          break;
        case DType::f64:
          t.data<double>()[i] = v;
          break;
        case DType::f16:
          t.data<uint16_t>()[i] = f16_from_double(v);
          break;
        case DType::i64:
          t.data<int64_t>()[i] = x.kind == VKind::integer ? x.i : static_cast<int64_t>(v);
          break;
        case DType::boolean:
          t.data<bool>()[i] = v != 0;
          break;
      }
    }
    return Value::concrete(std::move(t));
  }
  std::vector<Value> parts;
  for (const Value& v : args.pos) parts.push_back(reshape_to(in, in.as_tensor(v, d), {1}));
  return concat(in, parts, 1);
}

// Numbers and vectors as matrices (n×1 columns), for hcat and vcat of matrices.
std::vector<Value> as_matrices(Interpreter& in, const std::vector<Value>& items) {
  std::vector<Value> out;
  DType d = literal_dtype(items);
  for (const Value& v : items) {
    Value t = in.as_tensor(v, d);
    Shape s = t.tensor().type.shape;
    if (s.size() < 2) t = reshape_to(in, t, {s.empty() ? 1 : s[0], 1});
    out.push_back(t);
  }
  return out;
}

Value hcat(Interpreter& in, Args& args) {
  if (args.pos.empty()) return Value::vector({});  // hcat() is Any[], as Julia's
  need_args(args, 1, 1 << 30, "hcat");
  return concat(in, as_matrices(in, args.pos), 2);
}

Value vcat(Interpreter& in, Args& args) {
  if (args.pos.empty()) return Value::vector({});
  need_args(args, 1, 1 << 30, "vcat");
  bool vectors = true;
  for (const Value& v : args.pos)
    vectors = vectors && (!is_array(v) || v.tensor().type.rank() == 1);
  if (vectors) {
    std::vector<Value> parts;
    DType d = literal_dtype(args.pos);
    for (const Value& v : args.pos) {
      Value t = in.as_tensor(v, d);
      parts.push_back(t.tensor().type.rank() == 0 ? reshape_to(in, t, {1}) : t);
    }
    return concat(in, parts, 1);
  }
  return concat(in, as_matrices(in, args.pos), 1);
}

Value cat(Interpreter& in, Args& args) {
  const Value* dims = keyword(args, "dims");
  if (dims == nullptr || dims->kind != VKind::integer) user_error("cat needs dims=<integer>");
  std::vector<Value> parts;
  DType d = literal_dtype(args.pos);
  int64_t rank = dims->i;
  for (const Value& v : args.pos)
    rank = std::max<int64_t>(rank, in.as_tensor(v, d).tensor().type.rank());
  for (const Value& v : args.pos) {
    Value t = in.as_tensor(v, d);
    Shape s = t.tensor().type.shape;
    s.resize(static_cast<size_t>(rank), 1);
    parts.push_back(reshape_to(in, t, s));
  }
  return concat(in, parts, dims->i);
}

// stack(xs): the arrays (or numbers) of xs, all of one type, along a new last dim, as
// Julia 1.9's; stack(f, itr) is stack(map(f, itr)), and over a range while tracing one scan
// op whose body is f(t) (docs/regions.md, "Loops in programs").
Value stack(Interpreter& in, Args& args) {
  need_args(args, 1, 2, "stack");
  if (!args.kw.empty())
    user_error("stack takes no keywords here; permutedims(stack(xs), ...) moves the new dim");
  std::vector<Value> items;
  if (args.pos.size() == 2) {
    if (std::optional<Value> s = in.trace_stack(args.pos[0], args.pos[1], in.here())) return *s;
    Args mapped;
    mapped.pos = args.pos;
    items = items_of(in, in.call(*in.global("map"), std::move(mapped), in.here()));
  } else {
    if (args.pos[0].is_tensor()) return args.pos[0];  // the numbers of an array: itself
    // All the slices of one array along its last dim (a traced map's): that array.
    if (std::optional<Value> whole = in.covered_source(args.pos[0])) return *whole;
    items = items_of(in, args.pos[0]);
  }
  if (items.empty()) user_error("stack of an empty collection: its size is unknown");
  DType d = literal_dtype(items);
  Type first = in.as_tensor(items[0], d).tensor().type;
  std::vector<Value> parts;
  for (const Value& item : items) {
    Value t = in.as_tensor(item, d);
    if (t.tensor().type != first) {
      user_error(
          "stack: every item must have the size and element type of the first, {}; "
          "item {} is {}",
          type_str(first), parts.size() + 1, type_str(t.tensor().type));
    }
    Shape s = first.shape;
    s.push_back(1);
    parts.push_back(reshape_to(in, t, s));
  }
  return concat(in, parts, static_cast<int64_t>(first.shape.size()) + 1);
}

struct Slice {
  int64_t start, stop, step;
  bool keep;  // ranges and colons keep their dim; integers drop it
};

Slice index_slice(const Value& idx, int64_t size, size_t dim) {
  if (idx.kind == VKind::symbol && idx.text() == ":") return {1, size, 1, true};
  if (idx.kind == VKind::integer) {
    if (idx.i < 1 || idx.i > size) {
      user_error("index {} is out of bounds for dimension {} of size {}", idx.i, dim + 1, size);
    }
    return {idx.i, idx.i, 1, false};
  }
  if (idx.kind == VKind::range) {
    const RangeObj& r = idx.rng();
    if (r.length() == 0) return {1, 0, 1, true};
    int64_t last = r.at(r.length() - 1);
    if (r.start < 1 || last > size) {
      user_error("range {}:{} is out of bounds for dimension {} of size {}", r.start, last, dim + 1,
                 size);
    }
    return {r.start, last, r.step, true};
  }
  user_error("an index must be an integer, a range, ':' or an array of integers, got {}",
             a_type_name(idx));
}

// An index array for one dim: integers as they are (checked now when concrete, by the
// gather kernel at run time when traced), Bools as the positions of their trues.
Value index_array(const Value& idx, int64_t size, size_t dim) {
  const TensorObj& t = idx.tensor();
  if (t.type.dtype == DType::boolean) {
    if (t.traced) {
      user_error(
          "indexing with a traced Bool mask gives an array whose size depends on the "
          "data; use ifelse.(mask, x, 0) to keep the shape");
    }
    if (t.type.size() != size) {
      user_error("a Bool mask of {} elements indexes dimension {} of size {}", t.type.size(),
                 dim + 1, size);
    }
    std::vector<int64_t> hits;
    for (int64_t i = 0; i < size; ++i) {
      if (t.data.data<bool>()[i]) hits.push_back(i + 1);
    }
    Tensor out(Type{DType::i64, {static_cast<int64_t>(hits.size())}});
    std::copy(hits.begin(), hits.end(), out.data<int64_t>());
    return Value::concrete(std::move(out));
  }
  if (t.type.dtype != DType::i64) {
    user_error("an index array must hold integers or Bools, got {}", a_type_name(idx));
  }
  if (!t.traced) {
    for (int64_t i = 0; i < t.type.size(); ++i) {
      int64_t k = t.data.data<int64_t>()[i];
      if (k < 1 || k > size) {
        user_error("index {} is out of bounds for dimension {} of size {}", k, dim + 1, size);
      }
    }
  }
  return idx;
}

// Each index array picks along its dim with a gather; its own shape replaces the dim.
Value gather_indices(Interpreter& in, Value v, const std::vector<Value>& arrays) {
  size_t n = arrays.size();
  for (size_t d = 0; d < n; ++d) {
    if (arrays[d].kind != VKind::tensor) continue;
    Shape along(n, 1);
    along[d] = arrays[d].tensor().type.size();
    Value idx = reshape_to(in, arrays[d], along);
    v = in.prim1<Prim::gather>({v, idx}, {.dim = static_cast<int64_t>(d + 1)});
  }
  return v;
}

}  // namespace

void not_defined_for(std::string_view what, const Value& v) {
  if (v.kind == VKind::tuple) {
    bool numbers = !v.tup().items.empty();
    for (const Value& item : v.tup().items) numbers = numbers && item.is_number();
    if (numbers) {
      user_error(
          "{} is not defined for {}: it takes numbers or arrays; collect(t) makes an array "
          "of its numbers",
          what, a_type_name(v));
    }
    user_error("{} is not defined for {}: it takes numbers or arrays{}", what, a_type_name(v),
               complex_note(v));
  }
  user_error("{} is not defined for {}{}", what, a_type_name(v), complex_note(v));
}

Value index_tensor(Interpreter& in, const Value& x, const std::vector<Value>& idx) {
  const Shape& shape = x.tensor().type.shape;
  size_t n = idx.size();
  // Fewer indices than dims index the trailing dims merged, as Julia's linear indexing.
  Shape view;
  for (size_t d = 0; d < n; ++d) {
    if (d < shape.size() && d + 1 < n) {
      view.push_back(shape[d]);
    } else if (d + 1 == n) {
      int64_t rest = 1;
      for (size_t k = d; k < shape.size(); ++k) rest *= shape[k];
      view.push_back(rest);
    } else {
      view.push_back(1);
    }
  }
  // `xs[:, t]` in a loop traced as a scan: the slice t of an xs of the scan, indexed
  // further by the other indices.
  if (n > 0) {
    if (std::optional<Value> xt = in.scan_slice(x, view, to_scalar(idx[n - 1]))) {
      if (n == 1) {
        const TensorObj& o = xt->tensor();
        return Value::traced(o.var, o.type, true, o.level);
      }
      return index_tensor(in, *xt, std::vector<Value>(idx.begin(), idx.end() - 1));
    }
  }
  std::vector<int64_t> start, stop, step;
  std::vector<Value> arrays(n);  // index arrays (gathered after the slice), by dim
  Shape kept;
  for (size_t d = 0; d < n; ++d) {
    Value i = to_scalar(idx[d]);
    // `end:-1:1`: the positions it picks, as an index array (a gather).
    if (i.kind == VKind::range && i.rng().step < 0 && i.rng().length() > 0) {
      i = range_array(i.rng());
    }
    if (i.is_tensor() && (!i.tensor().number || i.tensor().traced)) {
      arrays[d] = index_array(i, view[d], d);
      const Shape& s = arrays[d].tensor().type.shape;
      kept.insert(kept.end(), s.begin(), s.end());
      start.push_back(1);
      stop.push_back(view[d]);
      step.push_back(1);
      continue;
    }
    Slice s = index_slice(i, view[d], d);
    start.push_back(s.start);
    stop.push_back(s.stop);
    step.push_back(s.step);
    if (s.keep) kept.push_back(s.stop < s.start ? 0 : (s.stop - s.start) / s.step + 1);
  }
  Value v = reshape_to(in, x, view);
  bool whole = true;
  for (size_t d = 0; d < n; ++d)
    whole = whole && start[d] == 1 && stop[d] == view[d] && step[d] == 1;
  if (!whole) v = in.prim1<Prim::slice>({v}, {.start = start, .stop = stop, .step = step});
  v = gather_indices(in, v, arrays);
  Value out = reshape_to(in, v, kept);
  if (kept.empty()) {
    const TensorObj& o = out.tensor();
    Value number =
        o.traced ? Value::traced(o.var, o.type, true, o.level) : Value::concrete(o.data, true);
    return to_scalar(number);
  }
  // `x[:]` is a new array, as in Julia: a write into it leaves x as it was.
  return out.obj == x.obj ? copy_array(out) : out;
}

namespace {

Value getindex(Interpreter& in, Args& args) {
  need_args(args, 1, 1 << 30, "getindex");
  const Value& x = args.pos[0];
  std::vector<Value> idx(args.pos.begin() + 1, args.pos.end());
  if (x.kind == VKind::tuple || x.kind == VKind::named_tuple) {
    const TupleObj& t = x.tup();
    if (idx.size() != 1) user_error("a tuple takes one index");
    if (idx[0].kind == VKind::symbol) {
      for (size_t i = 0; i < t.names.size(); ++i) {
        if (t.names[i] == idx[0].text()) return t.items[i];
      }
      user_error("the named tuple has no field '{}'", idx[0].text());
    }
    if (idx[0].kind == VKind::range) {
      std::vector<Value> out;
      Slice s = index_slice(idx[0], static_cast<int64_t>(t.items.size()), 0);
      for (int64_t i = s.start; i <= s.stop; i += s.step) out.push_back(t.items[i - 1]);
      return t.vector ? Value::vector(std::move(out)) : Value::tuple(std::move(out));
    }
    if (idx[0].is_tensor() && !idx[0].tensor().traced && !idx[0].tensor().number) {
      // t[[3, 1]]: the picked items, as a tuple (of a vector of values, a vector).
      Value picks = index_array(idx[0], static_cast<int64_t>(t.items.size()), 0);
      std::vector<Value> out;
      for (int64_t i = 0; i < picks.tensor().type.size(); ++i) {
        out.push_back(t.items[picks.tensor().data.data<int64_t>()[i] - 1]);
      }
      return t.vector ? Value::vector(std::move(out)) : Value::tuple(std::move(out));
    }
    Slice s = index_slice(idx[0], static_cast<int64_t>(t.items.size()), 0);
    return t.items[s.start - 1];
  }
  if (x.kind == VKind::range && idx.size() == 1 && idx[0].kind == VKind::integer) {
    Slice s = index_slice(idx[0], x.rng().length(), 0);
    return Value::integer(x.rng().at(s.start - 1));
  }
  if (x.is_tensor()) return index_tensor(in, x, idx);
  if (x.is_number() &&
      (idx.empty() || (idx.size() == 1 && idx[0].kind == VKind::integer && idx[0].i == 1))) {
    return x;
  }
  user_error("{} cannot be indexed", a_type_name(x));
}

Value size(Interpreter&, Args& args) {
  need_args(args, 1, 2, "size");
  const Value& x = args.pos[0];
  Shape s;  // an element of a broadcast function's argument is a number: size ()
  if (x.is_tensor() && !is_element(x)) {
    s = x.tensor().type.shape;
  } else if (x.kind == VKind::tuple || x.kind == VKind::range) {
    s = {x.kind == VKind::range ? x.rng().length() : static_cast<int64_t>(x.tup().items.size())};
  } else if (!x.is_number() && !is_element(x)) {
    not_defined_for("size", x);
  }
  if (args.pos.size() == 2) {
    const Value& d = args.pos[1];
    if (d.kind != VKind::integer || d.i < 1) user_error("size(x, d) needs a dimension d ≥ 1");
    return Value::integer(d.i <= static_cast<int64_t>(s.size()) ? s[d.i - 1] : 1);
  }
  std::vector<Value> out;
  for (int64_t n : s) out.push_back(Value::integer(n));
  return Value::tuple(std::move(out));
}

Value length(Interpreter&, Args& args) {
  need_args(args, 1, 1, "length");
  const Value& x = args.pos[0];
  switch (x.kind) {
    case VKind::tuple:
    case VKind::named_tuple:
      return Value::integer(static_cast<int64_t>(x.tup().items.size()));
    case VKind::range:
      return Value::integer(x.rng().length());
    case VKind::string:
      return Value::integer(static_cast<int64_t>(x.text().size()));
    case VKind::tensor:
      return Value::integer(is_element(x) ? 1 : x.tensor().type.size());
    default:
      if (x.is_number()) return Value::integer(1);
      user_error("length of {} is not defined", a_type_name(x));
  }
}

Value ndims(Interpreter&, Args& args) {
  need_args(args, 1, 1, "ndims");
  const Value& x = args.pos[0];
  if (x.is_tensor() && !is_element(x)) return Value::integer(x.tensor().type.rank());
  if (x.is_number() || is_element(x)) return Value::integer(0);
  if (x.kind == VKind::range || is_value_vector(x)) return Value::integer(1);  // vectors
  user_error("ndims of {} is not defined", a_type_name(x));
}

Value reshape(Interpreter& in, Args& args) {
  need_args(args, 2, 1 << 30, "reshape");
  if (args.pos[0].kind == VKind::range) {
    // reshape(1:6, 2, 3): the range's values, as Julia's (a ReshapedArray of the range).
    Args values;
    values.pos.push_back(args.pos[0]);
    args.pos[0] = in.call(*in.global("collect"), std::move(values), in.here());
  }
  const Value& x = args.pos[0];
  if (!x.is_tensor()) not_defined_for("reshape", x);
  std::vector<Value> dims(args.pos.begin() + 1, args.pos.end());
  if (dims.size() == 1 && dims[0].kind == VKind::tuple) dims = dims[0].tup().items;
  Shape shape;
  int colon = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].kind == VKind::symbol && dims[i].text() == ":") {
      if (colon >= 0) user_error("reshape takes at most one ':'");
      colon = static_cast<int>(i);
      shape.push_back(0);
    } else if (dims[i].kind == VKind::integer && dims[i].i >= 0) {
      shape.push_back(dims[i].i);
      known *= dims[i].i;
    } else {
      user_error("reshape dimensions must be integers ≥ 0 or ':'");
    }
  }
  int64_t total = x.tensor().type.size();
  if (colon >= 0) {
    if (known == 0 || total % known != 0) {
      user_error("cannot reshape an array of {} elements to {} with ':'", total, shape_str(shape));
    }
    shape[colon] = total / known;
  }
  return reshape_to(in, x, shape);
}

Value permutedims(Interpreter& in, Args& args) {
  need_args(args, 1, 2, "permutedims");
  const Value& x = args.pos[0];
  if (!x.is_tensor()) not_defined_for("permutedims", x);
  int rank = x.tensor().type.rank();
  std::vector<int64_t> perm;
  if (args.pos.size() == 2) {
    perm = int_list(args.pos[1], "a permutation");
  } else if (rank == 2) {
    perm = {2, 1};
  } else if (rank == 1) {
    return reshape_to(in, x, {1, x.tensor().type.shape[0]});
  } else {
    user_error("permutedims(x) needs a permutation for an array of rank {}", rank);
  }
  return in.prim1<Prim::permutedims>({x}, {.perm = perm});
}

Value transpose(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "transpose");
  const Value& x = args.pos[0];
  if (x.is_number()) return x;
  if (!x.is_tensor() || x.tensor().type.rank() > 2) {
    user_error("transpose needs a vector or a matrix, got {}", a_type_name(x));
  }
  const TensorObj& t = x.tensor();
  if (t.adjoint_vector) return reshape_to(in, x, {t.type.shape[1]});
  Value r = permutedims(in, args);
  if (t.type.rank() == 1) {
    auto row = std::make_shared<TensorObj>(r.tensor());
    row->adjoint_vector = true;
    r.obj = std::move(row);
  }
  return r;
}

}  // namespace

void add_array_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"vect", vect},
                        {"hcat", hcat},
                        {"vcat", vcat},
                        {"cat", cat},
                        {"stack", stack},
                        {"getindex", getindex},
                        {"size", size},
                        {"length", length},
                        {"ndims", ndims},
                        {"reshape", reshape},
                        {"permutedims", permutedims},
                        {"transpose", transpose},
                        {"adjoint", transpose},
                        {"'", transpose},
                    });
}

}  // namespace ytape::tracer
