// Shared helpers of the tracer's unit tests.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "tape/error.h"
#include "tracer/lang/ast.h"
#include "tracer/lang/parser.h"

namespace ytape::tracer::testing {

/// The S-expression of a file whose text is `text`: "(block ...)".
inline std::string parse_sexpr(const std::string& text) {
  Sources sources;
  return to_sexpr(*parse_text(sources, "t.jl", text));
}

/// The S-expression of the one statement in `text`.
inline std::string sexpr(const std::string& text) {
  Sources sources;
  ExprPtr file = parse_text(sources, "t.jl", text);
  REQUIRE(file->args.size() == 1);
  return to_sexpr(*file->args[0]);
}

/// The message of the UserError that parsing `text` throws, or "no error".
inline std::string parse_error(const std::string& text) {
  Sources sources;
  try {
    parse_text(sources, "t.jl", text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace ytape::tracer::testing
