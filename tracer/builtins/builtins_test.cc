// Test's macros that need more than a rewrite: @test_throws and @test_broken run their
// expression (the parser passes it as a function of no arguments) and look at its error.
#include "tracer/builtins/builtins.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>

#include "tape/error.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// The message of an error without its location: the first line, after "file:line:col: ".
std::string bare_message(const UserError& err, bool located) {
  std::string_view m = err.what();
  m = m.substr(0, m.find('\n'));
  if (located) {
    size_t colon = m.find(": ");
    if (colon != std::string_view::npos) m.remove_prefix(colon + 2);
  }
  return std::string(m);
}

// The Julia exception type an error of the language stands for. Messages that Julia's
// exceptions would print start with the type's name ("DimensionMismatch: ...",
// "AssertionError: "); shapes that do not broadcast are a DimensionMismatch, and a call no
// method takes or a failed conversion (of a typed field) a MethodError, as in Julia; the
// rest are what `error(...)` throws, ErrorException.
std::string exception_type(const std::string& message) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kPhrases = {
      {{"do not broadcast", "DimensionMismatch"},
       {"no method", "MethodError"},
       {"no constructor", "MethodError"},
       {"cannot convert", "MethodError"},
       {"out of bounds", "BoundsError"}}};
  size_t colon = message.find(": ");
  std::string_view head = std::string_view(message).substr(0, colon);
  bool named =
      colon != std::string::npos && !head.empty() && std::isupper(head[0]) &&
      head.find(' ') == std::string_view::npos &&
      (head.ends_with("Error") || head.ends_with("Exception") || head.ends_with("Mismatch"));
  if (named) return std::string(head);
  if (head.starts_with("DomainError with ")) return "DomainError";
  for (auto [phrase, type] : kPhrases)
    if (message.find(phrase) != std::string::npos) return std::string(type);
  return "ErrorException";
}

// Runs the thunk; the message of the error it raised, if any.
std::optional<std::string> error_of(Interpreter& in, const Value& thunk) {
  try {
    in.call(thunk, Args{}, in.here());
  } catch (const ProgramError& err) {
    return bare_message(err, true);
  } catch (const UserError& err) {
    return bare_message(err, false);
  }
  return std::nullopt;
}

// `@test_throws T e`: e must raise an error of type T (Exception: any). The parser passes
// T's text, e as a thunk and e's text; for an exception value (`@test_throws
// DomainError(-1, "msg") e`) also a thunk making it: e must throw an equal one, which
// here is one with the same message.
Value test_throws(Interpreter& in, Args& args) {
  const std::string type = args.pos[0].text(), text = args.pos[2].text();
  std::optional<std::string> err = error_of(in, args.pos[1]);
  if (!err) user_error("Test Failed: {} did not throw; expected {}", text, type);
  if (args.pos.size() == 4) {
    Value expected = in.call(args.pos[3], Args{}, in.here());
    Args a;
    a.pos.push_back(std::move(expected));
    std::string want = in.call(*in.global("exception_text"), std::move(a), in.here()).text();
    if (want != *err) user_error("Test Failed: {} threw {}; expected {}", text, *err, want);
    return Value();
  }
  std::string got = exception_type(*err);
  if (type != "Exception" && type != got) {
    user_error("Test Failed: {} threw {} ({}); expected {}", text, got, *err, type);
  }
  return Value();
}

// `@test_broken e`: a test known to fail; it passes while e is false or throws, and is an
// error once e holds, as Test's "Unexpected Pass".
Value test_broken(Interpreter& in, Args& args) {
  const std::string text = args.pos[1].text();
  Value result;
  try {
    result = in.call(args.pos[0], Args{}, in.here());
  } catch (const UserError&) {
    return Value();
  }
  if (result.kind == VKind::boolean && result.b)
    user_error("Unexpected Pass: {} holds now; change @test_broken to @test", text);
  return Value();
}

}  // namespace

void add_test_builtins(BuiltinTable& t) {
  t.insert(t.end(), {{"@test_throws", test_throws}, {"@test_broken", test_broken}});
}

}  // namespace ytape::tracer
