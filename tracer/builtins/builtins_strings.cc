// Base's tests on strings: occursin, startswith, endswith (what programs ask of the text
// that sprint and string make; tests of printed layers).
#include <string>
#include <string_view>

#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// The two strings of f(a, b), or a UserError naming f.
std::pair<std::string_view, std::string_view> two_strings(const Args& args, std::string_view f) {
  need_args(args, 2, 2, f);
  for (const Value& v : args.pos) {
    if (v.kind != VKind::string) user_error("{} takes two strings, got {}", f, a_type_name(v));
  }
  return {args.pos[0].text(), args.pos[1].text()};
}

// occursin(needle, haystack)
Value occursin(Interpreter&, Args& args) {
  auto [needle, haystack] = two_strings(args, "occursin");
  return Value::boolean(haystack.find(needle) != std::string_view::npos);
}

Value startswith(Interpreter&, Args& args) {
  auto [s, prefix] = two_strings(args, "startswith");
  return Value::boolean(s.starts_with(prefix));
}

Value endswith(Interpreter&, Args& args) {
  auto [s, suffix] = two_strings(args, "endswith");
  return Value::boolean(s.ends_with(suffix));
}

}  // namespace

void add_string_builtins(BuiltinTable& t) {
  t.insert(t.end(), {{"occursin", occursin}, {"startswith", startswith}, {"endswith", endswith}});
}

}  // namespace ytape::tracer
