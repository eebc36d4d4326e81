// The interpreter's lifecycle: construction with its built-ins and prelude, running files
// and text, globals, program output, and located errors with their call stacks.
#include "tracer/interp/interp.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "runtime/random.h"
#include "tape/error.h"
#include "tape/strings.h"
#include "tracer/lang/parser.h"

namespace ytape::tracer {

namespace {

// The prelude parsed once per process. Syntax trees are never changed once parsed, so
// every interpreter evaluates the same ones: its construction costs the prelude's
// evaluation alone (a test suite makes hundreds of interpreters).
struct ParsedPrelude {
  Sources sources;
  std::vector<ExprPtr> files;
};

const ParsedPrelude& parsed_prelude() {
  static const ParsedPrelude prelude = [] {
    ParsedPrelude p;
    for (size_t i = 0; i < kNumPreludeFiles; ++i) {
      p.files.push_back(parse_text(p.sources, kPreludeFiles[i].name, kPreludeFiles[i].text));
    }
    return p;
  }();
  return prelude;
}

}  // namespace

Interpreter::Interpreter(const Builtins& builtins, Limits limits, bool prelude)
    : limits_(limits),
      write_array_(builtins.write_array),
      stop_gradient_(builtins.stop_gradient),
      globals_(std::make_shared<Env>()) {
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
    auto start = std::chrono::steady_clock::now();
    const ParsedPrelude& parsed = parsed_prelude();
    parse_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (size_t i = 0; i < parsed.files.size(); ++i) {
      // Positions in the trees name files by index: the prelude's are the first here too.
      if (sources_.share(parsed.sources, static_cast<uint32_t>(i)) != i) {
        internal_error("the prelude's files out of place");
      }
      eval_block(*parsed.files[i], globals_);
      signal_ = Signal::none;
      flush_output();
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
  std::optional<std::string> shown = shown_by_method(v);
  return shown ? std::move(*shown) : print_text(v);
}

std::optional<std::string> Interpreter::shown_by_method(const Value& v) {
  const Value* show = global("show");
  const Value* io_type = global("IOBuffer");
  if (v.kind != VKind::object || show == nullptr || io_type == nullptr ||
      show->kind != VKind::function) {
    return std::nullopt;
  }
  Value io = call(*io_type, Args{}, here_);
  // The prelude's show(io::IO, x) for any x writes repr(x): only a method of x's type counts.
  const Method* m = find_method(show->fn(), Args{{io, v}, {}});
  if (m == nullptr || m->types.size() < 2 || m->types[1] == nullptr) return std::nullopt;
  call(*show, Args{{io, v}, {}}, here_);
  return io.object().fields.at(0).text();
}

uint64_t Interpreter::next_seed() {
  return random_bits(seed_, draws_++);
}

void Interpreter::note_once(const std::string& key, Pos pos, std::string_view text) {
  if (noted_.insert(key).second)
    write_output(fmt::format("ytape: note: {}: {}\n", sources_.where(pos), text));
}

void Interpreter::emit(std::string_view text) {
  // Unrolled, the loop would print once per iteration.
  if (scan_ != nullptr) not_a_scan("it prints while tracing");
  write_output(text);
}

void Interpreter::write_output(std::string_view text) {
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

std::string Interpreter::undefined_hint(const std::string& name, const Env* env) const {
  std::vector<std::string> names;  // sorted: the hint must not depend on hash order
  for (const Env* scope = env; scope != nullptr; scope = scope->parent.get()) {
    for (const auto& [n, v] : scope->vars) names.push_back(n);
  }
  for (const auto& [n, v] : globals_->vars) names.push_back(n);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return did_you_mean(name, names);
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

}  // namespace ytape::tracer
