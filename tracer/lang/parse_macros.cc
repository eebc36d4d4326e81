// Macro calls. There are no macro definitions: each supported macro is rewritten here into
// the syntax it stands for, so the interpreter never sees one.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "tape/error.h"
#include "tape/strings.h"
#include "tracer/lang/parser_impl.h"

namespace ytape::tracer::parse_internal {

namespace {

// Macros whose expansion is their one argument: hints to Julia's compiler.
constexpr std::array<std::string_view, 6> kIdentity = {
    "@inline", "@noinline", "@inbounds", "@fastmath", "@simd", "@propagate_inbounds"};
// Flux's declarations that a struct's fields are its parameters: every field already is.
constexpr std::array<std::string_view, 3> kLayer = {"@functor", "@layer", "@treelike"};
// Every macro parse_macro expands, those two groups included: the one list of them.
const std::vector<std::string>& supported_macros() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"@.",           "@assert",    "@show",
                                  "@view",        "@views",     "@test",
                                  "@testset",     "@info",      "@warn",
                                  "@debug",       "@error",     "@kwdef",
                                  "@with_kw",     "@epochs",    "@showprogress",
                                  "@__FILE__",    "@__DIR__",   "@test_throws",
                                  "@test_broken", "@test_skip", "@test_nowarn",
                                  "@inferred",    "@autosize",  "@ignore_derivatives",
                                  "@ignore",      "@nograd",    "@non_differentiable",
                                  "@adjoint",     "@max_trips", "@scalar_rule",
                                  "@setup",       "@thunk",     "@doc",
                                  "@eval"};
    v.insert(v.end(), kIdentity.begin(), kIdentity.end());
    v.insert(v.end(), kLayer.begin(), kLayer.end());
    return v;
  }();
  return names;
}

bool one_of(std::string_view name, std::span<const std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// `@. e`: every call and operator in `e` broadcast, assignments and updates too (`y = e`
// is `y .= e`, `s += x` is `s .+= x`), as Julia's. Names, literals, indexing and fields
// stay.
void dotify(Expr& e) {
  switch (e.kind) {
    case Kind::call:
      // The adjoint `x'` stays: Julia's @. leaves it.
      if (e.args[0]->kind != Kind::id || e.args[0]->name != "'") e.kind = Kind::broadcast;
      for (size_t i = 1; i < e.args.size(); ++i) dotify(*e.args[i]);
      return;
    case Kind::op_assign:
      if (e.name.front() != '.') e.name = "." + e.name;
      break;
    case Kind::assign:
      e.kind = Kind::dot_assign;
      break;
    case Kind::function:
    case Kind::struct_:
      return;
    case Kind::lambda:
      dotify(*e.function->body);
      return;
    default:
      break;
  }
  for (ExprPtr& a : e.args) dotify(*a);
}

// `name(arg)`, or `name()` without one.
ExprPtr named_call(Pos pos, std::string_view name, ExprPtr arg) {
  ExprPtr call = make_expr(Kind::call, pos);
  call->args.push_back(make_expr(Kind::id, pos, std::string(name)));
  if (arg) call->args.push_back(std::move(arg));
  return call;
}

// `(call @view x[i...])`, which the interpreter evaluates as a view of an array x.
ExprPtr view_call(ExprPtr index) {
  Pos pos = index->pos;
  ExprPtr call = make_expr(Kind::call, pos);
  call->args.push_back(make_expr(Kind::id, pos, "@view"));
  call->args.push_back(std::move(index));
  return call;
}

// `@views e`: every indexing in `e` that is read, in functions defined there too, becomes
// `@view`, as Julia's; an assignment's target `x[i] = v` stays a write into x.
void viewify(ExprPtr& e) {
  switch (e->kind) {
    case Kind::index:
      for (ExprPtr& a : e->args) viewify(a);
      e = view_call(std::move(e));
      return;
    case Kind::assign:
    case Kind::op_assign:
    case Kind::dot_assign:
      if (e->args[0]->kind == Kind::index) {
        for (ExprPtr& a : e->args[0]->args) viewify(a);
      } else {
        viewify(e->args[0]);
      }
      viewify(e->args[1]);
      return;
    case Kind::function:
    case Kind::lambda:
      viewify(e->function->body);
      return;
    case Kind::struct_:
      return;
    default:
      for (ExprPtr& a : e->args) viewify(a);
  }
}

}  // namespace

std::string Parser::source_text(size_t first, size_t end) const {
  if (end <= first) return "";
  const Token &a = token_at(first), &b = token_at(end - 1);
  const std::string& text = sources_.file(file_).text;
  return text.substr(a.offset, b.offset + b.length - a.offset);
}

std::vector<std::pair<ExprPtr, std::string>> Parser::parse_macro_args() {
  std::vector<std::pair<ExprPtr, std::string>> args;
  if (at(Tok::lparen) && !peek().space_before) {
    // `@m(a, b)`: comma-separated, as the arguments of a call.
    const Token& open = take();
    ContextScope scope(*this, paren_context(ctx_));
    while (!at(Tok::rparen)) {
      size_t first = index();
      ExprPtr arg = parse_assignment();
      args.emplace_back(std::move(arg), source_text(first, index()));
      if (!accept(Tok::comma)) break;
    }
    expect_close(Tok::rparen, open, "','");
    return args;
  }
  // `@m a b`: arguments separated by spaces, as the elements of `[a b]`, to the end of the
  // statement; inside brackets a comma ends them too, at top level it makes a tuple.
  bool nested = ctx_.newlines_ignored || ctx_.space_sensitive;
  Context spaced = ctx_;
  spaced.space_sensitive = true;
  ContextScope scope(*this, spaced);
  while (!at_statement_end()) {
    size_t first = index();
    ExprPtr arg = nested ? parse_assignment() : parse_statement();
    args.emplace_back(std::move(arg), source_text(first, index()));
  }
  return args;
}

ExprPtr Parser::parse_macro() {
  const Token& m = take();
  std::string name = m.text;
  const std::vector<std::string>& known = supported_macros();
  bool supported = std::find(known.begin(), known.end(), name) != known.end();
  if (name == "@kwdef" || name == "@with_kw") {
    // `@kwdef struct T ... end` (Parameters.jl's @with_kw the same): the struct, its
    // fields' defaults kept for a keyword constructor, as Base's.
    if (!at_kw("struct") && !at_kw("mutable"))
      fail(m.pos, fmt::format("{} takes a struct definition", name));
    statement_start_ = index();
    kwdef_ = true;
    return parse_statement();
  }
  if (name == "@__FILE__" || name == "@__DIR__") {
    // The path of the file being read, or its folder, as Julia's (relative paths stay
    // relative: messages and include() name files as they were given).
    std::string path = sources_.file(file_).path;
    if (name == "@__DIR__") {
      size_t slash = path.rfind('/');
      path = slash == std::string::npos ? "." : path.substr(0, slash);
    }
    return make_expr(Kind::string_lit, m.pos, path);
  }
  if (name == "@non_differentiable") return non_differentiable_macro(m.pos);
  if (name == "@scalar_rule") return scalar_rule_macro(m.pos);
  if (name == "@eval") return eval_macro(m.pos);
  std::vector<std::pair<ExprPtr, std::string>> args = parse_macro_args();
  if (!supported) return unsupported_macro(m.pos, name);
  auto need = [&](size_t lo, size_t hi, std::string_view usage) {
    if (args.size() < lo || args.size() > hi) {
      fail(m.pos, fmt::format("{} takes {}, as in '{}'", name,
                              lo == hi ? "one argument" : fmt::format("{} to {} arguments", lo, hi),
                              usage));
    }
  };
  if (one_of(name, kIdentity)) {
    need(1, 1, name + " for i in 1:n ... end");
    return std::move(args[0].first);
  }
  if (name == "@ignore_derivatives" || name == "@ignore") {
    // ChainRulesCore's and Zygote's: e's value, which the gradient does not flow through.
    need(1, 1, name + " y = f(x)");
    return named_call(m.pos, "dropgrad", std::move(args[0].first));
  }
  if (name == "@adjoint") {
    need(1, 1, "@adjoint f(x) = f(x), Δ -> (Δ,)");
    return adjoint_macro(m.pos, std::move(args[0].first));
  }
  if (name == "@doc") {
    // A docstring (`@doc raw"""...""" f`, or on the line before the definition): the
    // definition it documents, or nothing.
    need(1, 2, "@doc \"text\" f(x) = x");
    if (args.size() == 2) return std::move(args[1].first);
    return make_expr(Kind::nothing, m.pos);
  }
  if (name == "@thunk") {
    // ChainRulesCore's lazy tangent: computed at once (the gradient's DCE drops the unused).
    need(1, 1, "@thunk(Δ * x)");
    return std::move(args[0].first);
  }
  if (name == "@setup") {
    // @scalar_rule's shared values: its assignments, run before the partials.
    ExprPtr block = make_expr(Kind::block, m.pos);
    for (auto& a : args) block->args.push_back(std::move(a.first));
    return block;
  }
  if (name == "@nograd") {
    // Zygote's `@nograd f, g`: every call of them stops the gradient.
    ExprPtr call = named_call(m.pos, "_non_differentiable", nullptr);
    for (auto& a : args) {
      if (a.first->kind == Kind::tuple) {
        for (ExprPtr& f : a.first->args) call->args.push_back(std::move(f));
      } else {
        call->args.push_back(std::move(a.first));
      }
    }
    return call;
  }
  if (name == "@view") {
    // (call @view x[...]): the interpreter calls view(x, i...) with the indexing's indices.
    need(1, 1, "@view x[:, 1]");
    if (args[0].first->kind != Kind::index)
      fail(m.pos, "@view takes an indexing, as in '@view x[:, 1]'");
    return view_call(std::move(args[0].first));
  }
  if (name == "@views") {
    need(1, 1, "@views y = x[:, 1]");
    viewify(args[0].first);
    return std::move(args[0].first);
  }
  if (name == "@.") {
    need(1, 1, "@. y = a * x + b");
    dotify(*args[0].first);
    return std::move(args[0].first);
  }
  if (name == "@test") {
    // Test's @test: checked as @assert is, failing with Test's words.
    need(1, 8, "@test f(2) == 4");
    return test_call(m.pos, args);
  }
  if (name == "@info" || name == "@warn" || name == "@debug" || name == "@error") {
    // Logging: @info and @warn print their message (as Julia's logger does, with its
    // prefix), @debug is off by default; the key=value pairs after it are not shown.
    need(1, 64, name + " \"message\" key=value");
    if (name == "@debug") return make_expr(Kind::nothing, m.pos);
    ExprPtr call = make_expr(Kind::call, m.pos);
    call->args.push_back(make_expr(Kind::id, m.pos, "println"));
    std::string prefix = name == "@info"   ? "[ Info: "
                         : name == "@warn" ? "┌ Warning: "
                                           : "┌ Error: ";
    call->args.push_back(make_expr(Kind::string_lit, m.pos, prefix));
    call->args.push_back(std::move(args[0].first));
    return call;
  }
  if (name == "@epochs") {
    // Flux's `@epochs n e`: `for i in 1:n; @info "Epoch $i"; e; end`.
    need(2, 2, "@epochs 10 Flux.train!(loss, ps, data, opt)");
    return epochs_loop(m.pos, std::move(args[0].first), std::move(args[1].first));
  }
  if (name == "@autosize") return autosize_macro(m.pos, args);
  if (name == "@max_trips") {
    // ytape's own: `@max_trips N while ... end` bounds a while loop traced on a traced
    // condition (docs/regions.md); the bound is the loop's int_value.
    need(2, 2, "@max_trips 50 while err > tol ... end");
    const Expr& n = *args[0].first;
    if (n.kind != Kind::int_lit || n.int_value < 1 || args[1].first->kind != Kind::while_)
      fail(m.pos,
           "@max_trips takes a positive integer and a while loop, as in "
           "'@max_trips 50 while err > tol ... end'");
    args[1].first->int_value = n.int_value;
    return std::move(args[1].first);
  }
  if (name == "@showprogress") {
    need(1, 1, "@showprogress for x in xs ... end");
    return std::move(args[0].first);
  }
  if (name == "@test_throws" || name == "@test_broken" || name == "@test_skip" ||
      name == "@test_nowarn" || name == "@inferred") {
    return test_macro(m.pos, name, args);
  }
  if (name == "@testset") {
    // Test's @testset ["name"] begin ... end (or a for loop): its body, run in place.
    need(1, 2, "@testset \"name\" begin ... end");
    return std::move(args.back().first);
  }
  if (name == "@assert") {
    // (call @assert condition "condition's text" [message]), run by the built-in `@assert`.
    need(1, 2, "@assert n > 0 \"n must be positive\"");
    ExprPtr call = make_expr(Kind::call, m.pos);
    call->args.push_back(make_expr(Kind::id, m.pos, name));
    call->args.push_back(std::move(args[0].first));
    call->args.push_back(make_expr(Kind::string_lit, m.pos, args[0].second));
    if (args.size() == 2) call->args.push_back(std::move(args[1].first));
    return call;
  }
  if (name == "@show") {
    // A block of (call @show "text" value) for each argument: its value is the last one's.
    need(1, 64, "@show x y");
    ExprPtr block = make_expr(Kind::block, m.pos);
    for (auto& [arg, text] : args) {
      ExprPtr call = make_expr(Kind::call, m.pos);
      call->args.push_back(make_expr(Kind::id, m.pos, name));
      call->args.push_back(make_expr(Kind::string_lit, m.pos, text));
      call->args.push_back(std::move(arg));
      block->args.push_back(std::move(call));
    }
    return block;
  }
  if (one_of(name, kLayer)) {
    need(1, 8, name + " MyLayer");
    if (args[0].first->kind != Kind::id && args[0].first->kind != Kind::field) {
      fail(m.pos, fmt::format("{} takes the name of a struct, as in '{} MyLayer'", name, name));
    }
    return make_expr(Kind::nothing, m.pos);
  }
  internal_error("the macro {} is listed as supported but has no expansion", name);
}

// Test's other macros. `@test_throws T e` and `@test_broken e` run `e` as a function of
// no arguments, so that the built-in can catch its error: (call @test_throws "T" thunk
// "e"). `@test_skip e` does not run e, as Test's; `@test_nowarn e` and `@inferred e` are e.
ExprPtr Parser::test_macro(Pos pos, const std::string& name,
                           std::vector<std::pair<ExprPtr, std::string>>& args) {
  size_t want = name == "@test_throws" ? 2 : 1;
  if (args.size() != want) {
    fail(pos, fmt::format("{} takes {}, as in '{}'", name,
                          want == 2 ? "an exception type and an expression" : "one expression",
                          want == 2 ? "@test_throws DimensionMismatch f(x)" : name + " f(x)"));
  }
  if (name == "@test_skip") return make_expr(Kind::nothing, pos);
  if (name == "@test_nowarn" || name == "@inferred") return std::move(args[0].first);
  auto thunk_of = [](ExprPtr e) {
    ExprPtr thunk = make_expr(Kind::lambda, e->pos);
    thunk->function = std::make_unique<Function>();
    thunk->function->body = std::move(e);
    return thunk;
  };
  auto& [e, text] = args.back();
  ExprPtr call = make_expr(Kind::call, pos);
  call->args.push_back(make_expr(Kind::id, pos, name));
  if (want == 2) call->args.push_back(make_expr(Kind::string_lit, pos, args[0].second));
  call->args.push_back(thunk_of(std::move(e)));
  call->args.push_back(make_expr(Kind::string_lit, pos, text));
  // `@test_throws DomainError(-1, "msg") e`: the exception value too, to compare with.
  if (want == 2 && args[0].first->kind == Kind::call)
    call->args.push_back(thunk_of(std::move(args[0].first)));
  return call;
}

// `@test e` is (call @assert e "e" "Test Failed: e"). Test's keywords after e:
// `broken=true` makes it @test_broken, `skip=true` @test_skip, and any other is passed to
// the tested call, as `@test a ≈ b atol=1e-5` is `isapprox(a, b; atol=1e-5)`.
ExprPtr Parser::test_call(Pos pos, std::vector<std::pair<ExprPtr, std::string>>& args) {
  ExprPtr& test = args[0].first;
  std::string mode = "@test";
  for (size_t i = 1; i < args.size(); ++i) {
    Expr& kw = *args[i].first;
    if (kw.kind != Kind::assign || kw.args[0]->kind != Kind::id)
      fail(kw.pos, "@test takes keywords after its expression, as in '@test a ≈ b atol=1e-5'");
    const std::string& key = kw.args[0]->name;
    if (key == "broken" || key == "skip") {
      if (kw.args[1]->kind != Kind::bool_lit)
        fail(kw.pos, fmt::format("@test's {}= takes true or false", key));
      if (kw.args[1]->int_value) mode = "@test_" + key;
      continue;
    }
    if (test->kind == Kind::comparison && test->args.size() == 3) {
      ExprPtr call = make_expr(Kind::call, test->pos);
      call->args.push_back(std::move(test->args[1]));
      call->args.push_back(std::move(test->args[0]));
      call->args.push_back(std::move(test->args[2]));
      test = std::move(call);
    }
    if (test->kind != Kind::call)
      fail(kw.pos, fmt::format("@test passes {}= to a call, as in '@test a ≈ b atol=1e-5'", key));
    ExprPtr arg = make_expr(Kind::kw, kw.pos, key);
    arg->args.push_back(std::move(kw.args[1]));
    test->args.push_back(std::move(arg));
  }
  args.resize(1);
  if (mode != "@test") return test_macro(pos, mode, args);
  ExprPtr call = make_expr(Kind::call, pos);
  call->args.push_back(make_expr(Kind::id, pos, "@assert"));
  call->args.push_back(std::move(test));
  call->args.push_back(make_expr(Kind::string_lit, pos, args[0].second));
  call->args.push_back(make_expr(Kind::string_lit, pos, "Test Failed: " + args[0].second));
  return call;
}

ExprPtr Parser::epochs_loop(Pos pos, ExprPtr n, ExprPtr body) {
  ExprPtr one = make_expr(Kind::int_lit, pos);
  one->int_value = 1;
  ExprPtr range = make_expr(Kind::range, pos);
  range->args.push_back(std::move(one));
  range->args.push_back(std::move(n));
  ExprPtr in = make_expr(Kind::in, pos);
  in->args.push_back(make_expr(Kind::id, pos, "epoch#"));
  in->args.push_back(std::move(range));
  ExprPtr iteration = make_expr(Kind::iteration, pos);
  iteration->args.push_back(std::move(in));
  ExprPtr info = make_expr(Kind::call, pos);
  info->args.push_back(make_expr(Kind::id, pos, "println"));
  info->args.push_back(make_expr(Kind::string_lit, pos, "[ Info: Epoch "));
  info->args.push_back(make_expr(Kind::id, pos, "epoch#"));
  ExprPtr block = make_expr(Kind::block, pos);
  block->args.push_back(std::move(info));
  block->args.push_back(std::move(body));
  ExprPtr loop = make_expr(Kind::for_, pos);
  loop->args.push_back(std::move(iteration));
  loop->args.push_back(std::move(block));
  return loop;
}

// `@non_differentiable f(::T, ...)` (ChainRulesCore's): the signature is read as a
// method's parameters and not kept; every method of f stops the gradient.
ExprPtr Parser::non_differentiable_macro(Pos pos) {
  if (!at(Tok::ident))
    fail_expected(peek(), "a function's signature, as in '@non_differentiable f(::Any)'");
  std::string name = parse_function_name();
  if (!at(Tok::lparen)) fail_expected(peek(), "'(' and the signature's parameters");
  Function signature;
  parse_params(signature);
  // `Base.foo` is foo: module names resolve to the same functions.
  ExprPtr f = make_expr(Kind::id, pos, name.substr(name.rfind('.', name.size() - 2) + 1));
  return named_call(pos, "_non_differentiable", std::move(f));
}

namespace {

// The parameter `::typeof(f)` of a rule's method, for the function named `name`.
Param typeof_param(Pos pos, const std::string& name) {
  Param p;
  p.pos = pos;
  ExprPtr call = make_expr(Kind::call, pos);
  call->args.push_back(make_expr(Kind::id, pos, "typeof"));
  call->args.push_back(make_expr(Kind::id, pos, name.substr(name.rfind('.', name.size() - 2) + 1)));
  p.type = std::move(call);
  return p;
}

}  // namespace

// ChainRulesCore's `@scalar_rule f(x, y) @setup(u = ...) (∂f/∂x, ∂f/∂y)`: a method of the
// hidden function `#scalar_rule(::typeof(f), Ω, x, y)` whose value is the partials (Ω is
// f's result), which the tracer turns into f's pullback (tracer/interp/interp_rules.cc).
ExprPtr Parser::scalar_rule_macro(Pos pos) {
  if (!at(Tok::ident)) fail_expected(peek(), "a call, as in '@scalar_rule f(x, y) (∂x, ∂y)'");
  auto f = std::make_unique<Function>();
  std::string name = parse_function_name();
  if (!at(Tok::lparen)) fail_expected(peek(), "'(' and the function's parameters");
  parse_params(*f);
  f->params.insert(f->params.begin(), typeof_param(pos, name));
  Param omega;
  omega.pos = pos;
  omega.name = "Ω";
  f->params.insert(f->params.begin() + 1, std::move(omega));
  f->name = "#scalar_rule";
  LocalScope local(*this);
  std::vector<std::pair<ExprPtr, std::string>> args = parse_macro_args();
  if (args.empty())
    fail(pos, "@scalar_rule takes the partials, as in '@scalar_rule f(x, y) (∂x, ∂y)'");
  f->body = make_expr(Kind::block, pos);
  for (auto& a : args) f->body->args.push_back(std::move(a.first));
  ExprPtr node = make_expr(Kind::function, pos);
  node->function = std::move(f);
  return node;
}

// `@eval e` (or `@eval Module e`): e, whose `$x` and `$(...)` parts the interpreter
// evaluates first, run at top level (Kind::eval_), as Julia's loops over names of
// functions define their methods.
ExprPtr Parser::eval_macro(Pos pos) {
  ++eval_depth_;
  std::vector<std::pair<ExprPtr, std::string>> args;
  try {
    args = parse_macro_args();
  } catch (...) {
    --eval_depth_;
    throw;
  }
  --eval_depth_;
  if (args.empty() || args.size() > 2)
    fail(pos, "@eval takes an expression, as in '@eval $f(x) = x' (and a module before it)");
  ExprPtr node = make_expr(Kind::eval_, pos);
  node->args.push_back(std::move(args.back().first));
  return node;
}

// Zygote's `@adjoint f(x) = (y, Δ -> (∂x,))`: a method of the hidden function
// `#adjoint(::typeof(f), x)`, its value (y, pullback) as the definition's; the pullback
// gives one tangent per argument (`nothing` for none).
ExprPtr Parser::adjoint_macro(Pos pos, ExprPtr definition) {
  if (definition->kind != Kind::function || !definition->function ||
      definition->function->name.empty()) {
    fail(pos, "@adjoint takes a method definition, as in '@adjoint f(x) = f(x), Δ -> (Δ,)'");
  }
  Function& f = *definition->function;
  f.params.insert(f.params.begin(), typeof_param(pos, f.name));
  f.name = "#adjoint";
  return definition;
}

// Any other macro is an error where it runs, not where it is read: a program whose unused
// functions save checkpoints with BSON.@save or log with TensorBoardLogger still traces.
ExprPtr Parser::unsupported_macro(Pos pos, const std::string& name) {
  const std::vector<std::string>& known = supported_macros();
  ExprPtr call = make_expr(Kind::call, pos);
  call->args.push_back(make_expr(Kind::id, pos, "error"));
  call->args.push_back(
      make_expr(Kind::string_lit, pos,
                fmt::format("the macro {} is not supported; the supported ones are {}{}", name,
                            fmt::join(known, ", "), did_you_mean(name, known))));
  return call;
}

}  // namespace ytape::tracer::parse_internal
