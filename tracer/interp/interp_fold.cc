// Folds and maps over a sequence traced as scans (docs/regions.md, "Loops in programs"):
// `foldl(op, over; init)`, `accumulate(op, over; init)`, `map(f, over)`, `f.(over)` and the
// comprehension `[body for x in over]`, where `over` is a range or all the slices of one
// traced array along one dim (eachslice, eachcol, eachrow, or what a traced map gave). Their
// function runs once, on a trace nested in the current one, as a `for` loop's body does
// (tracer/interp/interp_scan.cc); whatever a scan cannot hold leaves them to run as before.
// The slices themselves are made eagerly, as the program may index them; those nothing
// reads in the end are dropped from the tape (drop_unread), so that a sequence read only by
// scans costs no op per step.
#include <fmt/format.h>

#include "tape/error.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/scan_trace.h"

namespace ytape::tracer {

namespace {

// All the slices of one traced array along one dim, in order: the array and the dim.
std::optional<std::pair<Value, int>> slices_source(const Value& v) {
  if (!is_value_vector(v) || v.tup().items.empty()) return std::nullopt;
  const std::vector<Value>& items = v.tup().items;
  if (!items[0].is_tensor() || items[0].tensor().slice_of == nullptr) return std::nullopt;
  const TensorObj::SliceOf& first = *items[0].tensor().slice_of;
  for (size_t k = 0; k < items.size(); ++k) {
    if (!items[k].is_tensor() || items[k].tensor().slice_of == nullptr) return std::nullopt;
    const TensorObj::SliceOf& s = *items[k].tensor().slice_of;
    if (s.parent.obj != first.parent.obj || s.dim != first.dim ||
        s.index != static_cast<int64_t>(k) + 1)
      return std::nullopt;
  }
  const TensorObj& parent = first.parent.tensor();
  if (!parent.traced) return std::nullopt;  // concrete work runs as it is
  return std::pair{first.parent, first.dim};
}

}  // namespace

std::optional<Value> Interpreter::covered_source(const Value& v) {
  auto source = slices_source(v);
  if (!source) return std::nullopt;
  const Shape& s = source->first.tensor().type.shape;
  const auto dim = static_cast<size_t>(source->second);
  if (dim != s.size() || s.back() != static_cast<int64_t>(v.tup().items.size()))
    return std::nullopt;
  return source->first;
}

void Interpreter::droppable_since(size_t first) {
  const auto& ops = builder_->tape().ops;
  for (size_t i = first; i < ops.size(); ++i) {
    for (Var o : ops[i].outs) droppable_.push_back(o);
  }
}

std::vector<Value> Interpreter::slices(const Value& x, int dim, int64_t n) {
  const Value* select = global("selectdim");
  // Only the outermost trace's tape drops what nothing reads (tracer/trace.cc).
  const bool mark = tracing() && trace_level() == 0 && x.tensor().traced;
  std::vector<Value> out;
  for (int64_t k = 1; k <= n; ++k) {
    size_t before = mark ? builder_->tape().ops.size() : 0;
    Args args;
    args.pos = {x, Value::integer(dim), Value::integer(k)};
    Value v = call(*select, std::move(args), here());
    if (mark) {
      droppable_since(before);
      v = with_slice_of(std::move(v), x, dim, k);
    }
    out.push_back(std::move(v));
  }
  return out;
}

// One fold being traced: its steps (a range, or 1..n over slices), where a scan reads them
// (`array`, the slices' dim last, seen as `view`), its scope and its accumulator.
struct Interpreter::FoldRun {
  const Fold& fold;
  const Value& over;
  Pos pos;
  std::optional<std::pair<Value, int>> source = slices_source(over);
  Value steps = source ? Value::range(1, 1, static_cast<int64_t>(over.tup().items.size())) : over;
  Value array;
  Shape view;
  EnvPtr env = std::make_shared<Env>();
  std::optional<Value> acc = fold.init;

  // Step k's item (0-based) as a step run apart sees it.
  Value item(int64_t k) const {
    return source ? over.tup().items[static_cast<size_t>(k)] : Value::integer(steps.rng().at(k));
  }
};

Value Interpreter::dim_last(const Value& x, int dim) {
  const int rank = static_cast<int>(x.tensor().type.rank());
  if (dim == rank) return x;
  std::vector<int64_t> perm;
  for (int k = 1; k <= rank; ++k) {
    if (k != dim) perm.push_back(k);
  }
  perm.push_back(dim);
  size_t before = builder_->tape().ops.size();
  Value y = prim1(Prim::permutedims, {x}, AttrsOf<Prim::permutedims>{.perm = perm}.to_attrs());
  if (trace_level() == 0) droppable_since(before);  // unread where no scan came of it
  return y;
}

Value Interpreter::fold_apart(FoldRun& r, int64_t k) {
  auto scope = std::make_shared<Env>();
  scope->parent = r.env;
  scope->vars[r.fold.index] = r.item(k);
  if (r.acc) scope->vars[kFoldAcc] = *r.acc;
  Value y = r.fold.step(scope, r.item(k));
  if (r.acc) r.acc = y;
  return y;
}

std::optional<std::vector<Value>> Interpreter::fold_scan(FoldRun& r, const RangeObj& range,
                                                         bool* settles) {
  std::vector<ScanCarry> carries;
  if (r.acc) {
    r.env->vars[kFoldAcc] = *r.acc;
    carries.push_back({kFoldAcc, nullptr, 0, *r.acc});
  }
  auto body = [this, &r](const EnvPtr& scope) {
    Value x = scope->vars.at(r.fold.index);
    if (r.source) {  // slice t of the array, read in place
      std::optional<Value> slice = scan_slice(r.array, r.view, x);
      if (!slice) throw NotAScan{"its slices are not read in place"};
      x = *slice;
      scope->vars[r.fold.index] = x;
    }
    Value y = r.fold.step(scope, x);
    if (r.acc) scope->vars[kFoldAcc] = y;
    return r.fold.stacks ? std::optional<Value>(y) : std::nullopt;
  };
  ScanLoop loop{r.pos, r.fold.index, range, r.env, body, false};
  std::optional<std::vector<Value>> ys = run_scan(loop, std::move(carries), settles);
  if (ys && r.acc) r.acc = r.env->vars.at(kFoldAcc);
  return ys;
}

Value Interpreter::fold_result(const FoldRun& r, Value stacked, const std::optional<Value>& first) {
  if (!r.fold.stacks) return *r.acc;
  if (first) {  // the first step's value, then the scan's
    Shape s = stacked.tensor().type.shape;
    s.back() = 1;
    Value one = prim1(Prim::reshape, {as_tensor(*first, stacked.tensor().type.dtype)},
                      AttrsOf<Prim::reshape>{.shape = s}.to_attrs());
    const auto last = static_cast<int64_t>(s.size());
    stacked = prim1(Prim::concat, {one, stacked}, AttrsOf<Prim::concat>{.dim = last}.to_attrs());
  }
  const TensorObj& t = stacked.tensor();
  if (t.type.rank() == 1) return stacked;  // numbers: a vector
  return vector_of(*this, slices(stacked, static_cast<int>(t.type.rank()), t.type.shape.back()));
}

std::optional<Value> Interpreter::trace_fold(const Fold& fold, const Value& over, Pos pos) {
  if (!tracing()) return std::nullopt;
  FoldRun r{fold, over, pos};
  if (!may_scan(r.steps, pos)) return std::nullopt;
  if (r.source) {
    r.array = dim_last(r.source->first, r.source->second);
    r.view = r.array.tensor().type.shape;
  }
  r.env->parent = fold.env != nullptr ? fold.env : globals_;
  bool settles = false;
  std::optional<std::vector<Value>> ys = fold_scan(r, r.steps.rng(), &settles);
  if (ys) return fold_result(r, ys->empty() ? Value() : ys->at(0), std::nullopt);
  const int64_t n = r.steps.rng().length();
  if (!settles || n < 2 || peeled_) return std::nullopt;
  // The first step gave a carry its type: it runs apart, the others as the scan.
  Value first = fold_apart(r, 0);
  Value rest = Value::range(r.steps.rng().at(1), r.steps.rng().step, r.steps.rng().stop);
  peeled_ = true;
  try {
    ys = fold_scan(r, rest.rng(), nullptr);
  } catch (...) {
    peeled_ = false;
    throw;
  }
  peeled_ = false;
  if (ys) return fold_result(r, ys->empty() ? Value() : ys->at(0), first);
  std::vector<Value> out{first};  // the others run apart too
  for (int64_t k = 1; k < n; ++k) out.push_back(fold_apart(r, k));
  return fold.stacks ? vector_of(*this, std::move(out)) : *r.acc;
}

std::optional<Value> Interpreter::trace_map(const Value& f, const Value& over, Pos pos) {
  Fold fold;
  fold.stacks = true;
  fold.step = [this, &f, pos](const EnvPtr&, const Value& x) {
    Args a;
    a.pos = {x};
    return call(f, std::move(a), pos);
  };
  return trace_fold(fold, over, pos);
}

Tape drop_unread(Tape t, const std::vector<Var>& droppable) {
  if (droppable.empty()) return t;
  std::vector<bool> may(t.types.size(), false), read(t.types.size(), false);
  for (Var v : droppable) may[v.id] = true;
  for (const Output& o : t.outputs) read[o.var.id] = true;
  std::vector<bool> drop(t.ops.size(), false);
  bool any = false;
  for (size_t i = t.ops.size(); i-- > 0;) {
    const Op& op = t.ops[i];
    bool droppable_op = op.kind != OpKind::input && !op.outs.empty();
    for (Var o : op.outs) droppable_op = droppable_op && may[o.id] && !read[o.id];
    if (droppable_op) {
      drop[i] = any = true;
      continue;
    }
    for (Var a : op.args) read[a.id] = true;
  }
  if (!any) return t;
  Builder b = Builder::like(t);
  VarMap map(t);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    if (!drop[i]) copy_op(b, t, t.ops[i], map);
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

}  // namespace ytape::tracer
