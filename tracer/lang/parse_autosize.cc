// Flux's `@autosize (sizes...) model`: each layer call in `model` that uses `_` for a size
// becomes a LazyLayer (tracer/prelude/training.jl) that makes the layer when it first sees its
// input, `_` being that input's size along the dim the layer reads (Dense: dim 1; a
// convolution: the channels). The model then runs once on zeros of the sizes, and the
// made layers replace the lazy ones: (call autosize_build sizes model).
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "tracer/lang/parser_impl.h"

namespace ytape::tracer::parse_internal {

namespace {

// The children of the nodes through which `_` counts (calls, keywords, lambdas, blocks),
// as Flux's _underscoredepth walks them.
std::vector<ExprPtr*> children(Expr& e) {
  std::vector<ExprPtr*> out;
  if (e.kind == Kind::lambda) {
    out.push_back(&e.function->body);
  } else if (e.kind == Kind::call || e.kind == Kind::kw || e.kind == Kind::block) {
    for (ExprPtr& a : e.args) out.push_back(&a);
  }
  return out;
}

// Flux's _underscoredepth: 1 for `_` itself and for `_ => n`, one more for each call (or
// keyword, lambda, block) around it; 0 where there is no `_`.
int underscore_depth(Expr& e) {
  if (e.kind == Kind::id) return e.name == "_" ? 1 : 0;
  if (e.kind == Kind::call && e.args.size() == 3 && e.args[0]->kind == Kind::id &&
      e.args[0]->name == "=>" && e.args[1]->kind == Kind::id && e.args[1]->name == "_") {
    return 1;
  }
  int deepest = 0;
  for (ExprPtr* c : children(e)) deepest = std::max(deepest, underscore_depth(**c));
  return deepest == 0 ? 0 : deepest + 1;
}

// The name of the layer a call makes (`Dense`, `Flux.Scale`: "Scale"), for autosize_dim.
std::string callee_name(const Expr& e) {
  if (e.kind != Kind::call) return "";
  const Expr& f = *e.args[0];
  return f.kind == Kind::id || f.kind == Kind::field ? f.name : "";
}

}  // namespace

// (call LazyLayer (-> (x#) (block (= _ (call autosize_dim x# "Name")) layer))).
ExprPtr Parser::lazy_layer(ExprPtr layer) {
  Pos pos = layer->pos;
  ExprPtr dim = make_expr(Kind::call, pos);
  dim->args.push_back(make_expr(Kind::id, pos, "autosize_dim"));
  dim->args.push_back(make_expr(Kind::id, pos, "x#autosize"));
  dim->args.push_back(make_expr(Kind::string_lit, pos, callee_name(*layer)));
  ExprPtr bind = make_expr(Kind::assign, pos);
  bind->args.push_back(make_expr(Kind::id, pos, "_"));
  bind->args.push_back(std::move(dim));
  ExprPtr body = make_expr(Kind::block, pos);
  body->args.push_back(std::move(bind));
  body->args.push_back(std::move(layer));
  ExprPtr make = make_expr(Kind::lambda, pos);
  make->function = std::make_unique<Function>();
  make->function->params.push_back(Param{pos, "x#autosize", {}, nullptr, nullptr, false});
  make->function->body = std::move(body);
  ExprPtr call = make_expr(Kind::call, pos);
  call->args.push_back(make_expr(Kind::id, pos, "LazyLayer"));
  call->args.push_back(std::move(make));
  return call;
}

// Flux's _makelazy: a call two levels above `_` is a layer made lazily; deeper ones are
// walked into.
void Parser::make_lazy(ExprPtr& e) {
  int depth = underscore_depth(*e);
  if (depth == 0) return;
  if (depth == 1) {
    fail(e->pos,
         "@autosize takes `_` as the size argument of a layer, as in "
         "'Dense(_ => 10)' or 'BatchNorm(_)'");
  }
  if (depth == 2) {
    e = lazy_layer(std::move(e));
    return;
  }
  for (ExprPtr* c : children(*e)) make_lazy(*c);
}

ExprPtr Parser::autosize_macro(Pos pos, std::vector<std::pair<ExprPtr, std::string>>& args) {
  if (args.size() != 2 || args[0].first->kind != Kind::tuple) {
    fail(pos,
         "@autosize takes the input's size as a tuple and a model, as in "
         "'@autosize (28, 28, 1, 32) Chain(Conv((3, 3), _ => 8), ...)'");
  }
  make_lazy(args[1].first);
  ExprPtr call = make_expr(Kind::call, pos);
  call->args.push_back(make_expr(Kind::id, pos, "autosize_build"));
  call->args.push_back(std::move(args[0].first));
  call->args.push_back(std::move(args[1].first));
  return call;
}

}  // namespace ytape::tracer::parse_internal
