// Writing into arrays: `x[i...] = v` (setindex!), `x[i...] .= v`, `x .= v`, `x .op= v`,
// fill!, and the copies (copy, deepcopy) that writes make observable.
//
// Julia writes into the array's memory. Here a write computes the array's new value from
// pure ops, and Interpreter::replace_array puts it in place of the old one, so that every
// name for the array sees the write, as in Julia, while the tape stays SSA and gradients
// flow through it. Over the flattened array the new value is
//   select(written, gather(values, source), old)
// where `written` marks the positions the region covers and `source` says which value
// lands at each: the last one, where an index repeats, as Julia's loop of stores leaves.
// The positions are those of getindex, found by indexing an array of linear positions, so
// every index form reads and writes the same elements.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/nesting.h"

namespace ytape::tracer {

bool is_writable_array(const Value& v) {
  if (!v.is_tensor()) return false;
  const TensorObj& t = v.tensor();
  return !t.number && !t.element && !t.adjoint_vector;
}

namespace {

void check_writable(const Value& x) {
  if (is_writable_array(x)) return;
  if (x.kind == VKind::tuple || x.kind == VKind::named_tuple) {
    user_error("{} cannot be assigned into: tuples are immutable; build a new one", a_type_name(x));
  }
  if (x.is_tensor() && x.tensor().adjoint_vector) {
    user_error("cannot assign into the adjoint x' of a vector; assign into x itself");
  }
  if (is_element(x)) {
    user_error(
        "cannot assign into an element of a broadcast argument inside f.(x); return the "
        "new value from f instead");
  }
  if (x.is_number()) {
    user_error("{} cannot be assigned into (x[i] = v); assign the variable instead",
               a_type_name(x));
  }
  user_error("{} cannot be assigned into (x[i] = v); define setindex! for its type",
             a_type_name(x));
}

std::string dims_text(const Shape& s) {
  if (s.empty()) return "()";
  return s.size() == 1 ? fmt::format("({},)", s[0]) : fmt::format("({})", fmt::join(s, ", "));
}

}  // namespace

Value convert_exact(Interpreter& in, const Value& v, DType d) {
  DType from = dtype_of_value(v);
  if (from == d || is_float(d) || (d == DType::i64 && from == DType::boolean)) {
    return in.as_tensor(v, d);
  }
  bool traced = v.is_tensor() && v.tensor().traced;
  if (traced) {
    user_error(
        "cannot write traced {} values into an array of {}: whether they are exact is "
        "known only when the tape runs; write into an array of floats instead",
        dtype_type(from)->name, dtype_type(d)->name);
  }
  Value t = in.as_tensor(v, from);
  const Tensor& data = t.tensor().data;
  for (int64_t k = 0; k < data.size(); ++k) {
    double e = element_value(data, k);
    bool exact = d == DType::boolean ? (e == 0 || e == 1) : exact_int64(e);
    if (!exact) {
      Value element = is_float(from) ? Value::floating(e, from) : Value::integer(int64_t(e));
      user_error("InexactError: {}({})", dtype_type(d)->name, show(element));
    }
  }
  return in.as_tensor(t, d);
}

namespace {

// The values for a region of shape `region` (empty for one element), flattened.
Value region_values(Interpreter& in, const Value& v, DType d, const Shape& region, bool single,
                    bool broadcast) {
  int64_t m = 1;
  for (int64_t n : region) m *= n;
  if (v.kind != VKind::range && !v.is_tensor() && !v.is_number()) {
    user_error("cannot write {} into an array", a_type_name(v));
  }
  bool array = v.kind == VKind::range || (v.is_tensor() && !v.tensor().number);
  Value t = convert_exact(in, v, d);
  const Shape& s = t.tensor().type.shape;
  if (broadcast) {
    // Julia's broadcast into a destination: each dim of v is the region's or 1.
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t want = k < region.size() ? region[k] : 1;
      if (s[k] != want && s[k] != 1) {
        user_error("DimensionMismatch: an array of size {} cannot be broadcast into {} of size {}",
                   dims_text(s), single ? "one element" : "a region", dims_text(region));
      }
    }
    if (s != region && !single) {
      Shape padded = s;
      padded.resize(region.size(), 1);
      t = in.prim1<Prim::broadcast_to>({reshape_to(in, t, padded)}, {.shape = region});
    }
    return reshape_to(in, t, {m});
  }
  if (single && array) {
    user_error("cannot assign {} to one element; to write several, index a range (x[1:n] = v)",
               a_type_name(v));
  }
  if (!single && !array) {
    user_error(
        "indexed assignment with a single value to possibly many locations is not supported; "
        "perhaps use broadcasting `.=` instead?");
  }
  // As Julia's setindex_shape_check: the shapes agree once dims of size 1 are dropped.
  auto squeezed = [](const Shape& shape) {
    Shape out;
    for (int64_t n : shape) {
      if (n != 1) out.push_back(n);
    }
    return out;
  };
  if (!single && squeezed(s) != squeezed(region)) {
    user_error("DimensionMismatch: tried to assign an array of size {} to a region of size {}",
               dims_text(s), dims_text(region));
  }
  return reshape_to(in, t, {m});
}

Value linear_positions(int64_t n, const Shape& shape) {
  Tensor t = Tensor::uninitialized(Type{DType::i64, shape});
  for (int64_t k = 0; k < n; ++k) t.data<int64_t>()[k] = k + 1;
  return Value::concrete(std::move(t));
}

Value bool_mask(const std::vector<int64_t>& source) {
  Tensor t = Tensor::uninitialized(Type{DType::boolean, {static_cast<int64_t>(source.size())}});
  for (size_t k = 0; k < source.size(); ++k) t.data<bool>()[k] = source[k] != 0;
  return Value::concrete(std::move(t));
}

// The new flat value when the positions are known: `source` holds, per position, the
// 1-based index of the value written there, or 0.
Value merge(Interpreter& in, const Value& old, const Value& values, std::vector<int64_t> source) {
  int64_t n = static_cast<int64_t>(source.size()), m = values.tensor().type.size();
  bool all = std::none_of(source.begin(), source.end(), [](int64_t s) { return s == 0; });
  bool identity = all && m == n;
  for (int64_t k = 0; identity && k < n; ++k) identity = source[k] == k + 1;
  if (identity) return values;
  Value picked = values;  // one value: select broadcasts it
  if (m > 1) {
    Tensor idx = Tensor::uninitialized(Type{DType::i64, {n}});
    for (int64_t k = 0; k < n; ++k) idx.data<int64_t>()[k] = std::max<int64_t>(source[k], 1);
    picked = in.prim1<Prim::gather>({values, Value::concrete(std::move(idx))}, {.dim = 1});
  }
  if (all) return picked;  // m > 1 here: one value fills all only when n is 1, the identity
  return in.prim1(Prim::select, {bool_mask(source), picked, old});
}

}  // namespace

namespace {

// The array object of a view's parent, as a value.
Value parent_of(const TensorObj& view) {
  Value p;
  p.kind = VKind::tensor;
  p.obj = view.view->parent;
  return p;
}

// Each live view of `x` reads x again, and so on down its own views, after a write. Views
// of views nest as deep as a program makes them: a stack of the arrays whose views are
// being read again, each with the next one to read, rather than recursion.
void refresh_views(Interpreter& in, const Value& x) {
  std::vector<std::pair<Value, size_t>> stack{{x, 0}};
  while (!stack.empty()) {
    auto& [array, next] = stack.back();
    if (next == array.tensor().views.size()) {
      stack.pop_back();
      continue;
    }
    std::shared_ptr<const Object> o = array.tensor().views[next++].lock();
    if (o == nullptr) continue;
    Value view;
    view.kind = VKind::tensor;
    view.obj = o;
    Args args;
    args.pos.push_back(array);
    const auto& index = view.tensor().view->index;
    args.pos.insert(args.pos.end(), index.begin(), index.end());
    in.replace_array(view, in.call(*in.global("getindex"), std::move(args), in.here()));
    stack.emplace_back(std::move(view), 0);
  }
}

// The positions in x's parent of the elements of view x that `idx` (or all) names.
Value positions_in_parent(Interpreter& in, const Value& x, const std::vector<Value>* idx) {
  Value parent = parent_of(x.tensor());
  const Type& type = parent.tensor().type;
  Args args;
  args.pos.push_back(linear_positions(type.size(), type.shape));
  const auto& index = x.tensor().view->index;
  args.pos.insert(args.pos.end(), index.begin(), index.end());
  Value positions = in.call(*in.global("getindex"), std::move(args), in.here());
  if (idx != nullptr) positions = index_tensor(in, positions, *idx);
  return positions;
}

// write_array into an array that is no view.
void write_into(Interpreter& in, const Value& x, const Value& v, const std::vector<Value>* idx,
                bool broadcast) {
  const Type type = x.tensor().type;
  int64_t n = type.size();
  Value all = linear_positions(n, type.shape);
  Value region = idx != nullptr ? index_tensor(in, all, *idx) : all;
  bool single = !region.is_tensor() || region.tensor().number;
  Shape rshape = single ? Shape{} : region.tensor().type.shape;
  Value values = region_values(in, v, type.dtype, rshape, single, broadcast);
  if (values.tensor().type.size() == 0) return;
  Value old = reshape_to(in, x, {n});
  Value out;
  bool traced_region = region.is_tensor() && region.tensor().traced;
  if (traced_region && !single) {
    user_error(
        "assigning through a traced index is supported for one element at a time "
        "(x[k] = v); the positions of several could repeat");
  }
  bool traced = traced_region || x.tensor().traced || values.tensor().traced;
  if (single && traced && in.tracing()) {
    // One position, compared with each: the positions are an iota op, so that writes in
    // a loop do not each put n constants on the tape.
    auto attrs = AttrsOf<Prim::iota>{.dtype = DType::i64, .shape = {n}, .dim = 1}.to_attrs();
    Value positions =
        Value::traced(in.record(Prim::iota, {}, attrs).outs.front(), Type{DType::i64, {n}});
    Value mask = in.prim1(Prim::eq, {positions, in.as_tensor(region, DType::i64)});
    out = in.prim1(Prim::select, {mask, values, old});
  } else {
    std::vector<int64_t> source(static_cast<size_t>(n), 0);
    if (single) {
      source[static_cast<size_t>(region.i - 1)] = 1;
    } else {
      const Tensor& p = region.tensor().data;
      for (int64_t j = 0; j < p.size(); ++j) source[p.data<int64_t>()[j] - 1] = j + 1;
    }
    out = merge(in, old, values, std::move(source));
  }
  in.replace_array(x, reshape_to(in, out, type.shape));
  refresh_views(in, x);
}

}  // namespace

void write_array(Interpreter& in, const Value& x, const Value& v, const std::vector<Value>* idx,
                 bool broadcast) {
  check_writable(x);
  // A write into a view is a write into its parent, at the parent's positions of the
  // region; up a chain of views of views, as long as a program makes it, in a loop.
  Value target = x;
  std::vector<Value> at;
  while (target.tensor().view != nullptr) {
    Value positions = positions_in_parent(in, target, idx);
    at = {std::move(positions)};
    idx = &at;
    target = parent_of(target.tensor());
    check_writable(target);
  }
  write_into(in, target, v, idx, broadcast);
}

namespace {

// setindex!(x, v, i...) on arrays; methods for other types (Ref's) are in the prelude.
Value setindex(Interpreter& in, Args& args) {
  need_args(args, 2, 1 << 30, "setindex!");
  if (is_value_vector(args.pos[0])) {
    std::vector<Value> items = args.pos[0].tup().items;
    Value i = args.pos.size() == 3 ? args.pos[2] : Value();
    if (i.kind != VKind::integer || i.i < 1 || i.i > static_cast<int64_t>(items.size())) {
      user_error("a vector of {} values is written at one index from 1 to {}", items.size(),
                 items.size());
    }
    // Into a vector of complex numbers (a Vector{ComplexF64}), converted, as Julia's.
    TypeRef eltype = value_vector_eltype(args.pos[0].tup());
    items[static_cast<size_t>(i.i - 1)] =
        eltype->tag == TypeTag::user
            ? in.call(*in.global("convert"), Args{{Value::type(eltype), args.pos[1]}, {}},
                      in.here())
            : args.pos[1];
    in.replace_items(args.pos[0], std::move(items));
    return args.pos[0];
  }
  std::vector<Value> idx(args.pos.begin() + 2, args.pos.end());
  write_array(in, args.pos[0], args.pos[1], &idx, false);
  return args.pos[0];
}

// view(x, i...) and `@view x[i...]` (the interpreter passes x and the indices): the
// elements x[i...], linked to x both ways as Julia's views are (TensorObj::view). An
// integer index for every dim gives the element itself, as a 0-dim view would read.
Value view(Interpreter& in, Args& args) {
  need_args(args, 1, 1 << 30, "view");
  const Value& x = args.pos[0];
  Value v = in.call(*in.global("getindex"), args, in.here());
  if (!x.is_tensor() || x.tensor().number || !v.is_tensor() || v.tensor().number) return v;
  auto t = std::make_shared<TensorObj>(v.tensor());
  t->views.clear();
  t->view = std::make_shared<const TensorObj::ViewOf>(
      TensorObj::ViewOf{x.obj, std::vector<Value>(args.pos.begin() + 1, args.pos.end())});
  // Views that died are dropped here, so that a loop taking views keeps the list short.
  auto& views = const_cast<TensorObj&>(x.tensor()).views;
  std::erase_if(views, [](const std::weak_ptr<const Object>& w) { return w.expired(); });
  views.push_back(t);
  v.obj = std::move(t);
  return v;
}

// fill!(x, v): every element of x becomes v.
Value fill_(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "fill!");
  if (!args.pos[1].is_number())
    user_error("fill! takes a number, got {}", a_type_name(args.pos[1]));
  write_array(in, args.pos[0], args.pos[1], nullptr, true);
  return args.pos[0];
}

// copy(x): a new array; immutable values are their own copies.
Value copy(Interpreter&, Args& args) {
  need_args(args, 1, 1, "copy");
  const Value& x = args.pos[0];
  if (x.kind == VKind::object && x.object().type->is_mutable) {
    user_error("copy of a mutable struct {} is not defined; use deepcopy", x.object().type->name);
  }
  if (is_value_vector(x)) return Value::vector(x.tup().items);
  return x.is_tensor() && !x.tensor().number ? copy_array(x) : x;
}

// deepcopy: arrays and mutable instances anew, all the way down; a value reached twice
// is copied once, so the copy shares what the original shares. A container's copy is
// known before its items are copied, so that one inside itself (a vector that holds
// itself) has a copy inside itself, as Julia's deepcopy makes.
struct DeepCopy {
  Interpreter& in;
  std::unordered_map<const Object*, Value> done;
  Nesting nesting;

  Value copy(const Value& x) {
    if (x.kind != VKind::tensor && x.kind != VKind::tuple && x.kind != VKind::named_tuple &&
        x.kind != VKind::object) {
      return x;
    }
    if (auto it = done.find(x.obj.get()); it != done.end()) return it->second;
    Value out = x;
    if (x.is_tensor()) {
      out = x.tensor().number ? x : copy_array(x);
      done[x.obj.get()] = out;
      return out;
    }
    NestingScope scope(nesting, x.obj.get(), "deepcopy");
    std::vector<Value>* items = nullptr;
    bool is_mutable = false;
    if (x.kind == VKind::object) {
      auto s = std::make_shared<StructObj>(x.object());
      items = &s->fields;
      is_mutable = s->type->is_mutable;
      out.obj = std::move(s);
    } else {
      auto t = std::make_shared<TupleObj>(x.tup());
      items = &t->items;
      is_mutable = t->vector;
      out.obj = std::move(t);
    }
    done[x.obj.get()] = out;
    for (Value& item : *items) item = copy(item);
    if (is_mutable && std::any_of(items->begin(), items->end(), is_container)) {
      in.note_cycle_candidate(out);
    }
    return out;
  }
};

Value deepcopy(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "deepcopy");
  return DeepCopy{in, {}, {}}.copy(args.pos[0]);
}

}  // namespace

void add_assign_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"setindex!", setindex},
                        {"view", view},
                        {"fill!", fill_},
                        {"copy", copy},
                        {"deepcopy", deepcopy},
                    });
}

}  // namespace ytape::tracer
