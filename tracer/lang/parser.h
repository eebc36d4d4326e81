// The parser of the model language (docs/language.md): a whole source file to a syntax
// tree (ast.h), with Julia's operator precedences and whitespace rules.
#pragma once

#include <cstdint>
#include <string>

#include "tracer/lang/ast.h"
#include "tracer/lang/source.h"

namespace ytape::tracer {

/// How deeply expressions and blocks may nest. Deeper programs get a syntax error rather
/// than a stack overflow, here and in everything that walks the tree recursively.
inline constexpr int kMaxNesting = 500;

/// Parses file `file` of `sources` into a block node holding its top-level statements.
/// Throws UserError on the first syntax error, formatted by Sources::format:
///
///     model.jl:3:9: expected 'end' to close 'function' at line 1
///     <the source line>
///             ^
ExprPtr parse_file(const Sources& sources, uint32_t file);

/// Adds `text` to `sources` as a file named `path` and parses it (for tests and tools).
ExprPtr parse_text(Sources& sources, std::string path, std::string text);

}  // namespace ytape::tracer
