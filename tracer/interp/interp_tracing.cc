// The bridge to tapes: tracing and nested traces, recording primitives or running them
// eagerly on concrete tensors, and what values mean as tensors and conditions.
#include <fmt/format.h>

#include <cstring>

#include "tape/error.h"
#include "tracer/interp/eager.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

void Interpreter::begin_trace(Builder* b, TensorMap examples, bool have_examples) {
  if (!levels_.empty()) internal_error("a trace began inside another");
  droppable_.clear();
  auto level = std::make_unique<TraceLevel>();
  level->serial = ++traces_begun_;
  level->builder = b;
  level->examples.reset(examples);
  level->have_examples = have_examples;
  levels_.push_back(std::move(level));
  enter_level();
}

void Interpreter::end_trace() {
  for (Undo& u : undo_) {
    if (auto* s = dynamic_cast<const StructObj*>(u.object.get())) {
      const_cast<StructObj*>(s)->fields = std::move(u.fields);
    } else if (auto* t = dynamic_cast<const TupleObj*>(u.object.get())) {
      const_cast<TupleObj*>(t)->items = std::move(u.fields);
    } else {
      const_cast<TensorObj&>(static_cast<const TensorObj&>(*u.object)) = std::move(u.array);
    }
  }
  undo_.clear();
  logged_.clear();
  levels_.clear();  // nested traces too, when an error ends the trace inside them
  enter_level();
}

void Interpreter::enter_level() {
  level_ = levels_.empty() ? nullptr : levels_.back().get();
  builder_ = level_ ? level_->builder : nullptr;
  set_trace_level(trace_level());
}

void Interpreter::begin_nested_trace() {
  if (levels_.empty()) internal_error("a nested trace outside of a trace");
  auto level = std::make_unique<TraceLevel>();
  level->serial = ++traces_begun_;
  level->own = std::make_unique<Builder>(Builder::like(builder_->tape()));
  level->builder = level->own.get();
  level->have_examples = level_->have_examples;
  level->tape_files = level_->tape_files;  // the new tape starts with this one's files
  TraceLevel* raw = level.get();
  level->examples.set_resolver(
      [this, raw](const std::string& input) { return example_of(raw->stands_for.at(input)); });
  levels_.push_back(std::move(level));
  enter_level();
}

Value Interpreter::nested_input(std::string name, const Value& outer) {
  Type type = outer.is_tensor() ? outer.tensor().type : Type{dtype_of_value(outer), {}};
  Var v = builder_->capture(name, type);
  level_->stands_for.emplace(std::move(name), outer);
  return Value::traced(v, std::move(type), outer.is_number());
}

Value Interpreter::nested_example(std::string name, const Value& outer) {
  Type type = outer.tensor().type;
  int64_t batch = type.shape.back();
  type.shape.pop_back();
  Var v = builder_->capture(name, type);
  Tensor first(type);  // zeros where the traces below have no examples
  if (level_->have_examples && batch > 0) {
    Tensor whole = example_of(outer);
    std::memcpy(first.raw(), whole.raw(), static_cast<size_t>(first.bytes()));
  }
  level_->stands_for.emplace(std::move(name), Value::concrete(std::move(first)));
  return Value::traced(v, std::move(type));
}

Interpreter::NestedTape Interpreter::end_nested_trace() {
  if (levels_.size() < 2) internal_error("no nested trace to end");
  NestedTape out{std::move(level_->own), std::move(level_->captures)};
  std::unordered_map<uint32_t, uint32_t> files = std::move(level_->tape_files);
  levels_.pop_back();
  enter_level();
  // The nested tape began with this one's files and may have added some: adding them
  // here in its order keeps its ops' locations valid on this tape.
  const std::vector<std::string>& nested_files = out.builder->tape().files;
  for (size_t i = builder_->tape().files.size(); i < nested_files.size(); ++i)
    builder_->intern_file(nested_files[i]);
  // So with its scopes (the layers called inside it).
  const std::vector<Scope>& nested_scopes = out.builder->tape().scopes;
  for (size_t i = builder_->tape().scopes.size(); i < nested_scopes.size(); ++i)
    builder_->intern_scope(nested_scopes[i]);
  level_->tape_files = std::move(files);
  return out;
}

Var Interpreter::capture(const TensorObj& t) {
  Var v = t.var;
  for (size_t k = t.level + 1; k < levels_.size(); ++k) {
    TraceLevel& level = *levels_[k];
    auto [it, added] = level.captured.try_emplace(v.id);
    if (added) {
      std::string name = fmt::format("capture.{}", level.captured.size());
      it->second = level.builder->capture(name, t.type);
      level.captures.emplace_back(it->second, v);
      level.stands_for.emplace(name,
                               Value::traced(v, t.type, t.number, static_cast<uint32_t>(k - 1)));
    }
    v = it->second;
  }
  return v;
}

Tensor Interpreter::example_of(const Value& v) {
  if (!v.is_tensor()) return as_tensor(v, dtype_of_value(v)).tensor().data;
  const TensorObj& t = v.tensor();
  if (!t.traced) return t.data;
  TraceLevel& level = *levels_.at(t.level);
  return level.examples.value(level.builder->tape(), t.var);
}

void Interpreter::check_op_limit() {
  if (static_cast<int64_t>(builder_->tape().ops.size()) >= limits_.max_ops) {
    fail(here_, fmt::format("the trace recorded more than {} ops; raise the limit with "
                            "--max-ops if this program is meant to be this large",
                            limits_.max_ops));
  }
}

Var Interpreter::var_of(const Value& v) {
  const TensorObj& t = v.tensor();
  if (t.traced) {
    if (t.level == trace_level()) [[likely]]
      return t.var;
    if (t.level < trace_level()) return capture(t);
    // A value of a trace that has ended, kept in a variable or an object that outlives it.
    throw UserError(
        "a value computed inside the function given to gradient is used outside of it "
        "(stored in a global or a mutable object?); return it from the function instead");
  }
  // A concrete tensor meeting traced ones becomes a constant, once per tensor. Each use
  // of a number (`x * 2.0`) gets a constant of its own, as with the C++ tracing API; the
  // tensors of numbers are shared (see as_tensor), so they are not keys here.
  bool cache = !t.number;
  if (cache) {
    auto it = level_->constants.find(t.data.raw());
    if (it != level_->constants.end() && it->second.first.type() == t.type)
      return it->second.second;
  }
  check_op_limit();
  const auto* data = static_cast<const uint8_t*>(t.data.raw());
  Var var = builder_->constant(t.type, std::vector<uint8_t>(data, data + t.data.bytes()));
  if (cache) level_->constants[t.data.raw()] = {t.data, var};
  return var;
}

Var Interpreter::tape_var(const Value& v) {
  if (v.is_tensor()) return var_of(v);
  if (!v.is_number()) user_error("{} is not a tensor or a number", a_type_name(v));
  DType d = v.kind == VKind::float_    ? v.dtype
            : v.kind == VKind::boolean ? DType::boolean
                                       : DType::i64;
  return var_of(as_tensor(v, d));
}

const Method* Interpreter::find_method(const FunctionObj& f, const Args& args) {
  return select(f.methods, args, nullptr, Pos{}, f.name);
}

// Ops recorded by prelude code (a layer, a loss) carry the line of the program that
// called into the prelude, the line a reader of the tape knows.
Pos Interpreter::op_pos() const {
  return program_pos(here_);
}

Pos Interpreter::program_pos(Pos pos) const {
  if (!in_prelude(pos.file)) return pos;
  for (size_t i = frames_.size(); i-- > 0;) {
    if (frames_[i].call.known() && !in_prelude(frames_[i].call.file)) return frames_[i].call;
  }
  return pos;
}

Interpreter::LayerScope::LayerScope(Interpreter& in, const Value& layer, Pos call) : in_(in) {
  if (!in.tracing() || layer.kind != VKind::object || !layer.object().type->layer) return;
  in.layer_calls_.push_back({layer.obj, in.layer_text(layer), in.program_pos(call), 0, 0});
  pushed_ = true;
}

Interpreter::LayerScope::~LayerScope() {
  if (pushed_) in_.layer_calls_.pop_back();
}

// Flux's one-line form where the layer's type has a show method of its own (Dense(4 => 8,
// relu)), else the type's name: the default show writes every field, weights and all.
std::string Interpreter::layer_text(const Value& layer) {
  const StructObj& s = layer.object();
  if (auto it = layer_texts_.find(s.serial); it != layer_texts_.end()) return it->second;
  std::string text = s.type->name;
  try {
    text = shown_by_method(layer).value_or(text);
  } catch (const UserError&) {
    // A program's show that fails names no layer; the trace goes on without it.
  }
  layer_texts_.emplace(s.serial, text);
  return text;
}

// The scope of layer call i on the current tape (interned once per call and trace level).
uint32_t Interpreter::scope_of_call(size_t i) {
  LayerCall& c = layer_calls_[i];
  if (c.scope != 0 && c.level == level_->serial) return c.scope;
  uint32_t parent = i > 0 ? scope_of_call(i - 1) : 0;
  const StructObj& obj = static_cast<const StructObj&>(*c.layer);
  Scope s{.path = obj.path,
          .layer = c.text,
          .made = obj.made.known() ? loc_of(obj.made) : Loc{},
          .call = c.call.known() ? loc_of(c.call) : Loc{},
          .parent = parent};
  c.scope = builder_->intern_scope(s);
  c.level = level_->serial;
  return c.scope;
}

namespace {

// Whether any argument is traced, and whether all stand for numbers (then so do the
// results).
std::pair<bool, bool> traced_number(std::span<const Value> args) {
  bool traced = false;
  bool number = !args.empty();
  for (const Value& a : args) {
    traced = traced || a.tensor().traced;
    number = number && a.tensor().number;
  }
  return {traced, number};
}

}  // namespace

std::vector<Value> Interpreter::prim(Prim p, std::span<const Value> args, const Attrs& attrs) {
  auto [traced, number] = traced_number(args);
  std::vector<Value> out;
  if (!traced) {
    std::vector<Tensor> tensors;
    tensors.reserve(args.size());
    for (const Value& a : args) tensors.push_back(a.tensor().data);
    for (Tensor& t : run_eager(p, tensors, attrs, [this](std::string_view l) { print_(l); })) {
      out.push_back(Value::concrete(std::move(t), number));
    }
    return out;
  }
  const Op& op = record(p, args, attrs);
  out.reserve(op.outs.size());
  for (Var v : op.outs) out.push_back(Value::traced(v, builder_->type(v), number));
  return out;
}

Value Interpreter::prim1(Prim p, std::span<const Value> args, const Attrs& attrs) {
  auto [traced, number] = traced_number(args);
  if (!traced) return prim(p, args, attrs).at(0);
  // The common case of tracing, spared the vector of results.
  Var v = record(p, args, attrs).outs.front();
  return Value::traced(v, builder_->type(v), number);
}

Loc Interpreter::loc_of(Pos at) {
  auto [it, added] = level_->tape_files.try_emplace(at.file, 0);
  if (added) it->second = builder_->intern_file(sources_.file(at.file).path);
  return Loc{it->second, at.line};
}

const Op& Interpreter::record(Prim p, std::span<const Value> args, const Attrs& attrs) {
  if (builder_ == nullptr) internal_error("a traced value outside of a trace");
  Loc loc = loc_of(op_pos());
  if (!layer_calls_.empty()) loc.scope = scope_of_call(layer_calls_.size() - 1);
  std::vector<Var> vars;
  vars.reserve(args.size());
  builder_->set_loc(loc);  // constants of concrete arguments take the op's line too
  for (const Value& a : args) vars.push_back(var_of(a));
  check_op_limit();
  try {
    return builder_->record(p, std::move(vars), attrs);
  } catch (const UserError& e) {
    // The builder names the location as file:line; the interpreter's message has it too.
    std::string message = e.what();
    std::string prefix = builder_->tape().loc_str(loc) + ": ";
    if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
    throw UserError(message);
  }
}

Value Interpreter::as_tensor(const Value& v, DType dtype) {
  if (v.kind == VKind::range) return as_tensor(range_array(v.rng()), dtype);  // [1:n; m]
  if (v.is_tensor()) {
    if (v.tensor().type.dtype == dtype) return v;
    return prim1<Prim::convert>({v}, {.dtype = dtype});
  }
  if (!v.is_number()) {
    throw UserError(
        fmt::format("expected a number or an array, got {}{}", a_type_name(v), complex_note(v)));
  }
  std::array<uint8_t, 8> element = dtype == DType::i64 && v.kind == VKind::integer
                                       ? scalar_bytes(v.i)
                                       : scalar_bytes(dtype, as_double(v));
  uint64_t bits;
  std::memcpy(&bits, element.data(), 8);
  NumberSlot& slot = numbers_[(bits * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(dtype)) >> 58];
  static_assert(kNumberSlots == 64, "the slot is the top 6 bits of the hash");
  bool hit = slot.value.kind == VKind::tensor && slot.dtype == dtype && slot.bits == bits;
  if (hit) return slot.value;
  Tensor t = Tensor::uninitialized(Type{dtype, {}});
  std::memcpy(t.raw(), element.data(), static_cast<size_t>(dtype_size(dtype)));
  slot = {dtype, bits, Value::concrete(std::move(t), true)};
  return slot.value;
}

bool Interpreter::truth(const Value& cond, Pos pos) {
  if (cond.kind == VKind::boolean) return cond.b;
  if (!cond.is_tensor() || cond.tensor().type != Type{DType::boolean, {}}) {
    bool array = cond.is_tensor() && !cond.tensor().number;
    fail(pos, fmt::format("a condition must be a Bool, got {}{}", a_type_name(cond),
                          array ? "; to choose elementwise, use ifelse.(condition, a, b)" : ""));
  }
  const TensorObj& t = cond.tensor();
  if (!t.traced) return t.data.data<bool>()[0];
  if (scan_ != nullptr) not_a_scan(located(pos, "it branches on a traced value"));
  if (!level_->have_examples) {
    fail(pos,
         "this condition depends on a traced input, and the trace has no example values "
         "to choose a branch; give example values (a global of the program as the "
         "argument) or compute both sides and choose with ifelse(c, a, b)");
  }
  // Only the condition's cone runs, and values stay cached across conditions: rerunning
  // the whole tape at each branch would make a trace with many branches quadratic.
  Var var = var_of(cond);  // a condition of a trace below is captured, as any value is
  bool value = level_->examples.value(builder_->tape(), var).data<bool>()[0];
  here_ = pos;
  Value guarded =
      value ? cond : prim1(Prim::eq, {cond, as_tensor(Value::boolean(false), DType::boolean)});
  // The message shows the program line and the calls that led there, as errors at trace
  // time do: a run failing far from the program must still say which branch it was.
  std::string message =
      located(pos, fmt::format("this condition was {} when the program was traced and is {} now; "
                               "trace again with these inputs",
                               value ? "true" : "false", value ? "false" : "true"));
  prim<Prim::guard>({guarded}, {.message = message});
  return value;
}

}  // namespace ytape::tracer
