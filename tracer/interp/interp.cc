#include "tracer/interp/interp.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "runtime/random.h"
#include "tape/error.h"
#include "tracer/interp/eager.h"
#include "tracer/interp/nesting.h"
#include "tracer/lang/parser.h"

namespace ytape::tracer {

Interpreter::Interpreter(const Builtins& builtins, Limits limits, bool prelude)
    : limits_(limits), builtins_(builtins), globals_(std::make_shared<Env>()) {
  globals_->global = true;
  globals_->function_scope = true;
  print_ = [this](std::string_view line) {
    output_ += line;
    output_ += '\n';
  };
  for (auto& [name, type] : builtin_type_names()) globals_->vars[name] = Value::type(type);
  register_builtins(builtins);
  if (prelude) {
    if (sources_.size() != 0) internal_error("the prelude must be the first source read");
    // The limit is the program's: the prelude's loading is the same for every program.
    limits_.max_steps = 0;
    for (size_t i = 0; i < kNumPreludeFiles; ++i) {
      run_text_as_is(kPreludeFiles[i].name, kPreludeFiles[i].text);
    }
    prelude_files_ = static_cast<uint32_t>(sources_.size());
    limits_.max_steps = limits.max_steps;
  }
  steps_ = 0;
}

Env::~Env() {
  for (auto& [name, v] : vars) release_value(v);
  release_later(std::move(parent));
}

Interpreter::~Interpreter() {
  for (const std::weak_ptr<Env>& weak : captured_) {
    if (EnvPtr env = weak.lock()) {
      env->vars.clear();
      env->parent.reset();
    }
  }
  globals_->vars.clear();
  cycles_.free_cycles();
}

void Interpreter::register_builtins(const Builtins& builtins) {
  BuiltinTable table;
  for (auto add_family : builtins.families) add_family(table);
  for (auto& [name, fn] : table) {
    auto f = std::make_shared<FunctionObj>();
    f->name = name;
    f->builtin = fn;
    Value v;
    v.kind = VKind::function;
    v.obj = std::move(f);
    globals_->vars[name] = std::move(v);
  }
  globals_->vars["pi"] = Value::floating(3.141592653589793, DType::f64, true);
  globals_->vars["π"] = globals_->vars["pi"];
  globals_->vars["Inf"] = Value::floating(INFINITY, DType::f64, true);
  globals_->vars["NaN"] = Value::floating(NAN, DType::f64, true);
  globals_->vars["Inf32"] = Value::floating(INFINITY, DType::f32);
  globals_->vars["NaN32"] = Value::floating(NAN, DType::f32);
}

std::string Interpreter::printed(const Value& v) {
  const Value* show = global("show");
  const Value* io_type = global("IOBuffer");
  if (v.kind != VKind::object || show == nullptr || io_type == nullptr ||
      show->kind != VKind::function) {
    return print_text(v);
  }
  Value io = call(*io_type, Args{}, here_);
  // The prelude's show(io::IO, x) for any x writes repr(x): only a method of x's type counts.
  const Method* m = find_method(show->fn(), Args{{io, v}, {}});
  if (m == nullptr || m->types.size() < 2 || m->types[1] == nullptr) return print_text(v);
  call(*show, Args{{io, v}, {}}, here_);
  return io.object().fields.at(0).text();
}

uint64_t Interpreter::next_seed() {
  return random_bits(seed_, draws_++);
}

void Interpreter::note_once(const std::string& key, Pos pos, std::string_view text) {
  if (noted_.insert(key).second)
    emit(fmt::format("ytape: note: {}: {}\n", sources_.where(pos), text));
}

void Interpreter::emit(std::string_view text) {
  // `print` without a newline is kept until the line ends.
  for (char c : text) {
    if (c == '\n') {
      print_(pending_);
      pending_.clear();
    } else {
      pending_ += c;
    }
  }
}

void Interpreter::flush_output() {
  if (!pending_.empty()) print_(pending_);
  pending_.clear();
}

void Interpreter::run_file(const std::string& path) {
  sandbox_.set_entry(path);
  auto start = std::chrono::steady_clock::now();
  uint32_t file = sources_.load(path);
  run_source(file, start);
}

void Interpreter::run_source(uint32_t file, std::chrono::steady_clock::time_point start) {
  const std::string path = sources_.file(file).path;
  files_.push_back(parse_file(sources_, file));
  parse_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  // The main program is Julia's PROGRAM_FILE; included files are not.
  if (running_files_.empty() && !globals_->vars.count("PROGRAM_FILE"))
    define_global("PROGRAM_FILE", Value::string(path));
  running_files_.emplace_back(std::filesystem::weakly_canonical(path, ec).string(), path);
  try {
    eval_block(*files_.back(), globals_);
  } catch (...) {
    running_files_.pop_back();
    throw;
  }
  running_files_.pop_back();
  signal_ = Signal::none;
  flush_output();
}

void Interpreter::run_text(std::string path, std::string text) {
  sandbox_.set_entry(path);
  run_text_as_is(std::move(path), std::move(text));
}

void Interpreter::run_text_as_is(std::string path, std::string text) {
  auto start = std::chrono::steady_clock::now();
  files_.push_back(parse_text(sources_, std::move(path), std::move(text)));
  parse_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  eval_block(*files_.back(), globals_);
  signal_ = Signal::none;
  flush_output();
}

Value Interpreter::eval_text(const std::string& text) {
  files_.push_back(parse_text(sources_, "<eval>", text));
  Value v = eval_block(*files_.back(), globals_);
  signal_ = Signal::none;
  return v;
}

const Value* Interpreter::global(const std::string& name) const {
  auto it = globals_->vars.find(name);
  return it == globals_->vars.end() ? nullptr : &it->second;
}

const Value* Interpreter::global_at(const std::string& name, Pos pos) const {
  if (!shadowed_.empty() && in_prelude(pos.file)) {
    auto it = shadowed_.find(name);
    if (it != shadowed_.end()) return &it->second;
  }
  return global(name);
}

void Interpreter::note_imports(const Expr& e) {
  // `import A: f, g` and `using A: f, g` name functions after the colon; `import A.B.f`
  // names its last part (a module path alone names no function the program defines).
  const std::string& text = e.name;
  size_t colon = text.find(':');
  if (colon == std::string::npos) {
    size_t dot = text.rfind('.');
    if (e.kind == Kind::import_ && dot != std::string::npos) imported_.insert(text.substr(dot + 1));
    return;
  }
  for (size_t start = colon + 1; start < text.size();) {
    size_t end = std::min(text.find(',', start), text.size());
    std::string name = text.substr(start, end - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) imported_.insert(name);
    start = end + 1;
  }
}

std::vector<std::string> Interpreter::global_names() const {
  std::vector<std::string> names;
  for (const auto& [name, v] : globals_->vars) names.push_back(name);
  return names;
}

void Interpreter::define_global(const std::string& name, Value v) {
  globals_->vars[name] = std::move(v);
}

void Interpreter::step_limit_reached(Pos pos) const {
  auto longest = std::max_element(loops_.rbegin(), loops_.rend(), [](const auto& a, const auto& b) {
    return a.iterations < b.iterations;
  });
  std::string loop;
  if (longest != loops_.rend()) {
    Pos at = longest->pos;
    loop = at.file == pos.file
               ? fmt::format(" (in the loop at line {})", at.line)
               : fmt::format(" (in the loop at {}:{})", sources_.file(at.file).path, at.line);
  }
  fail(pos, fmt::format("the program ran more than {} steps{}; raise the limit with --max-steps "
                        "if it is meant to run this long",
                        limits_.max_steps, loop));
}

void Interpreter::fail(Pos pos, std::string_view message) const {
  throw ProgramError(located(pos, message));
}

void Interpreter::fail_call(Pos pos, std::string_view message) {
  Frame callee = frames_.back();
  frames_.pop_back();
  std::string text = located(pos, message);
  frames_.push_back(std::move(callee));  // the caller's cleanup pops it
  throw ProgramError(text);
}

std::string Interpreter::located(Pos pos, std::string_view message) const {
  // An error inside the prelude points at the program's call that reached it, and names
  // the prelude's line after: the program's line is the one to change.
  size_t shown = frames_.size();
  std::string inside;
  if (in_prelude(pos.file)) {
    size_t i = shown;
    while (i > 0 && in_prelude(frames_[i - 1].call.file)) --i;
    if (i > 0 && frames_[i - 1].call.known()) {
      inside = fmt::format("\n  in the prelude's {} at {}", frames_[shown - 1].name,
                           sources_.where(pos));
      pos = frames_[i - 1].call;
      shown = i - 1;
    }
  }
  std::string text = sources_.format(pos, message) + inside;
  // Deep stacks (runaway recursion) show their innermost and outermost frames only.
  constexpr size_t kShown = 10;
  for (size_t i = shown; i-- > 0;) {
    if (shown > 2 * kShown && i + kShown < shown && i >= kShown) {
      text += fmt::format("\n  ... {} more frames", shown - 2 * kShown);
      i = kShown - 1;
    }
    const Frame& f = frames_[i];
    text += f.call.known() ? fmt::format("\n  in {} called at {}", f.name, sources_.where(f.call))
                           : fmt::format("\n  in {}", f.name);
  }
  return text;
}

Value Interpreter::eval_block(const Expr& e, const EnvPtr& env) {
  Value last;
  for (const ExprPtr& s : e.args) {
    last = eval(*s, env);
    if (signal_ != Signal::none) break;
  }
  return last;
}

namespace {

// Inline, since every variable lookup asks it of every scope it passes, and nearly all
// scopes declare nothing global.
inline bool declares_global(const Env& scope, const std::string& name) {
  if (scope.globals.empty()) [[likely]]
    return false;
  return std::find(scope.globals.begin(), scope.globals.end(), name) != scope.globals.end();
}

// Whether `v` holds a traced tensor, which must not outlive its trace in a global.
bool holds_traced(const Value& v) {
  switch (v.kind) {
    case VKind::tensor:
      return v.tensor().traced;
    case VKind::tuple:
    case VKind::named_tuple:
      return std::any_of(v.tup().items.begin(), v.tup().items.end(), holds_traced);
    case VKind::object:
      return std::any_of(v.object().fields.begin(), v.object().fields.end(), holds_traced);
    default:
      return false;
  }
}

}  // namespace

Value Interpreter::eval_id(const Expr& e, const EnvPtr& env) {
  for (Env* scope = env.get(); scope != nullptr; scope = scope->parent.get()) {
    if (declares_global(*scope, e.name)) scope = globals_.get();
    if (scope == globals_.get()) {
      if (const Value* g = global_at(e.name, e.pos)) return *g;
      break;
    }
    auto it = scope->vars.find(e.name);
    if (it != scope->vars.end()) return it->second;
  }
  fail(e.pos, fmt::format("undefined variable '{}'", e.name));
}

Env* Interpreter::set_var(const std::string& name, Value v, const EnvPtr& env, Pos pos) {
  // Julia's rule: an assignment updates the variable of the nearest enclosing local scope
  // that has it; globals are updated from top-level code, or from a scope that declares
  // the name `global` (a function nested in that scope makes a local of its own).
  bool crossed_function = false;
  for (Env* scope = env.get(); scope != nullptr; scope = scope->parent.get()) {
    if (scope->global && crossed_function) break;
    if (declares_global(*scope, name)) {
      if (crossed_function) break;
      if (tracing() && holds_traced(v)) {
        fail(pos, fmt::format("cannot assign a traced value to the global '{}': traced values "
                              "exist only while the entry runs; return it instead",
                              name));
      }
      globals_->vars[name] = converted_to(*globals_, name, std::move(v), pos);
      return globals_.get();
    }
    auto it = scope->vars.find(name);
    if (it != scope->vars.end()) {
      it->second = converted_to(*scope, name, std::move(v), pos);
      return scope;
    }
    if (scope->function_scope) crossed_function = true;
  }
  env->vars[name] = std::move(v);
  return env.get();
}

// `global x` or `global x = v` in a local scope: from here on, `x` in this scope (and the
// scopes inside it) is the global.
void Interpreter::declare_global(const Expr& decl, const EnvPtr& env) {
  bool assigns = decl.kind == Kind::assign || decl.kind == Kind::op_assign;
  const Expr* target = assigns ? decl.args[0].get() : &decl;
  if (target->kind == Kind::decl) target = target->args[0].get();
  if (target->kind != Kind::id)
    fail(decl.pos, "'global' declares names: write 'global x' or 'global x = v'");
  if (!env->global && !declares_global(*env, target->name)) env->globals.push_back(target->name);
  if (assigns) eval(decl, env);
}

Value Interpreter::eval_literal(const Expr& e, const EnvPtr& env) {
  switch (e.kind) {
    case Kind::int_lit:
      return Value::integer(e.int_value);
    case Kind::float_lit:
      return e.float32 ? Value::floating(e.float_value, DType::f32)
                       : Value::floating(e.float_value, DType::f64, true);
    case Kind::bool_lit:
      return Value::boolean(e.int_value != 0);
    case Kind::string_lit:
      return Value::string(e.name);
    case Kind::symbol:
      return Value::symbol(e.name);
    case Kind::interp: {
      std::string text;
      for (const ExprPtr& piece : e.args) {
        Value v = eval(*piece, env);
        text += printed(v);
      }
      return Value::string(std::move(text));
    }
    default:
      return Value();
  }
}

Value Interpreter::eval(const Expr& e, const EnvPtr& env) {
  if (++steps_ > limits_.max_steps && limits_.max_steps > 0) [[unlikely]] {
    step_limit_reached(e.pos);
  }
  switch (e.kind) {
    case Kind::int_lit:
    case Kind::float_lit:
    case Kind::bool_lit:
    case Kind::string_lit:
    case Kind::symbol:
    case Kind::nothing:
    case Kind::interp:
      return eval_literal(e, env);
    case Kind::id:
      return eval_id(e, env);
    case Kind::end:
      if (ends_.empty()) fail(e.pos, "'end' as an index outside of indexing");
      if (ends_.back() == kUnknownEnd) {
        fail(e.pos,
             "'end' of this value is not known: define lastindex(x) (or length(x)) for "
             "its type");
      }
      return Value::integer(ends_.back());
    case Kind::colon:
      return Value::symbol(":");
    case Kind::call:
      return eval_call(e, env);
    case Kind::broadcast:
      return eval_broadcast(e, env);
    case Kind::field:
      return eval_field(e, env);
    case Kind::index:
      return eval_index(e, env);
    case Kind::tuple:
    case Kind::named_tuple:
    case Kind::vect:
    case Kind::matrix:
    case Kind::range:
    case Kind::comprehension:
    case Kind::generator:
    case Kind::typed_array:
      return eval_collection(e, env);
    case Kind::and_:
    case Kind::or_: {
      Value lhs = eval(*e.args[0], env);
      if (signal_ != Signal::none) return Value();
      if (lhs.is_tensor() && lhs.tensor().element) {
        // Inside a function broadcast over elements (all(v -> a || b, x)), each element
        // takes its own side: both are computed, and combined elementwise.
        Value rhs = eval(*e.args[1], env);
        if (signal_ != Signal::none) return Value();
        return element_logic(e.kind == Kind::or_, lhs, rhs, e.pos);
      }
      bool l = truth(lhs, e.args[0]->pos);
      if (l == (e.kind == Kind::or_)) return Value::boolean(l);
      return eval(*e.args[1], env);
    }
    case Kind::comparison:
      return eval_comparison(e, env);
    case Kind::if_:
      return eval_if(e, env);
    case Kind::for_:
      return eval_for(e, env);
    case Kind::while_:
      return eval_while(e, env);
    case Kind::let:
      return eval_let(e, env);
    case Kind::block:
      return eval_block(e, env);
    case Kind::assign:
      return eval_assign(e, env);
    case Kind::op_assign:
      return eval_op_assign(e, env);
    case Kind::dot_assign:
      return eval_dot_assign(e, env);
    case Kind::break_:
      signal_ = Signal::break_;
      return Value();
    case Kind::continue_:
      signal_ = Signal::continue_;
      return Value();
    case Kind::return_: {
      Value v = e.args.empty() ? Value() : eval(*e.args[0], env);
      if (signal_ != Signal::none) return Value();
      return_value_ = std::move(v);
      signal_ = Signal::return_;
      return Value();
    }
    case Kind::function:
    case Kind::lambda:
      return eval_function(e, env);
    case Kind::struct_:
    case Kind::abstract_type:
      return eval_struct(e, env);
    case Kind::const_:
      return eval(*e.args[0], env);
    case Kind::curly:  // `Vector{Float32}`, `Dict{Symbol, Int}` as values
      return Value::type(eval_type(e, env, nullptr));
    case Kind::global:
      for (const ExprPtr& a : e.args) declare_global(*a, env);
      return Value();
    case Kind::local: {
      // `local x = v` makes a new variable here even when an outer scope has an `x`.
      for (const ExprPtr& a : e.args) {
        const Expr* target = a->kind == Kind::assign ? a->args[0].get() : a.get();
        if (target->kind == Kind::decl) target = target->args[0].get();
        Value v = a->kind == Kind::assign ? eval(*a->args[1], env) : Value();
        if (signal_ != Signal::none) return Value();
        if (target->kind != Kind::id) continue;
        const Expr& written = a->kind == Kind::assign ? *a->args[0] : *a;
        if (written.kind == Kind::decl) {
          TypeRef t = eval_type(*written.args[1], env, nullptr);
          if (a->kind == Kind::assign) v = convert_to(t, std::move(v), written.pos);
          env->types[target->name] = std::move(t);
        }
        env->vars[target->name] = std::move(v);
      }
      return Value();
    }
    case Kind::decl:
      return type_assert(e, env);
    case Kind::using_:
    case Kind::import_:
      note_imports(e);
      return Value();
    default:
      fail(e.pos, fmt::format("'{}' is not supported here", kind_name(e.kind)));
  }
}

// ---- tensors and tracing ------------------------------------------------------------------

void Interpreter::begin_trace(Builder* b, TensorMap examples, bool have_examples) {
  if (!levels_.empty()) internal_error("a trace began inside another");
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
  if (!in_prelude(here_.file)) return here_;
  for (size_t i = frames_.size(); i-- > 0;) {
    if (frames_[i].call.known() && !in_prelude(frames_[i].call.file)) return frames_[i].call;
  }
  return here_;
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

const Op& Interpreter::record(Prim p, std::span<const Value> args, const Attrs& attrs) {
  if (builder_ == nullptr) internal_error("a traced value outside of a trace");
  Pos at = op_pos();
  auto [it, added] = level_->tape_files.try_emplace(at.file, 0);
  if (added) it->second = builder_->intern_file(sources_.file(at.file).path);
  Loc loc{it->second, at.line};
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
