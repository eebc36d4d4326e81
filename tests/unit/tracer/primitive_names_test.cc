// The tracer's tables of a new primitive: an elementwise primitive is a function of the
// language and, if unary, of the C++ tracing API, or it is listed here with the name it
// goes by. docs/architecture.md (Adding a primitive) lists every table and its test.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "tape/prim.h"
#include "tracer/cpp_api.h"
#include "tracer/program.h"

using namespace ytape;

namespace {

// Elementwise primitives the language writes otherwise than by the primitive's name.
const std::map<Prim, std::string> kLanguageNames = {
    {Prim::neg, "-"}, {Prim::add, "+"}, {Prim::sub, "-"},        {Prim::mul, "*"}, {Prim::div, "/"},
    {Prim::pow, "^"}, {Prim::eq, "=="}, {Prim::ne, "!="},        {Prim::lt, "<"},  {Prim::le, "<="},
    {Prim::gt, ">"},  {Prim::ge, ">="}, {Prim::select, "ifelse"}};

// Unary elementwise primitives the C++ API records otherwise than by a function of the
// primitive's name.
const std::map<Prim, std::string> kCppForms = {{Prim::neg, "operator-(x)"},
                                               {Prim::convert, "convert(x, dtype)"}};

}  // namespace

TEST_CASE("every elementwise primitive is a function of the language") {
  tracer::Program program;
  for (Prim p : all_prims()) {
    if (!prim_info(p).elementwise()) continue;
    auto other = kLanguageNames.find(p);
    std::string name = other != kLanguageNames.end() ? other->second : std::string(prim_name(p));
    INFO("primitive ", prim_name(p), ": add a built-in named ", name,
         " (tracer/builtins/), or list the name the language gives it in kLanguageNames");
    const tracer::Value* f = program.global(name);
    CHECK((f != nullptr && f->kind == tracer::VKind::function));
  }
}

TEST_CASE("every unary elementwise primitive is a function of the C++ tracing API") {
  auto functions = cpp::unary_functions();
  for (Prim p : all_prims()) {
    if (!prim_info(p).elementwise() || prim_info(p).arity != 1 || kCppForms.count(p)) continue;
    INFO("primitive ", prim_name(p), ": write its row of tape/ops.def as X_UNARY (which ",
         "makes its function), or list its form in kCppForms");
    CHECK(std::any_of(functions.begin(), functions.end(),
                      [&](const auto& entry) { return entry.first == p; }));
  }
}
