// Helpers of the interpreter's unit tests: run small programs, read values, trace.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "check/gradcheck.h"
#include "runtime/executor.h"
#include "tape/error.h"
#include "tape/print.h"
#include "tape/validate.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape::tracer::testing {

/// Runs `program` at top level, then evaluates `expr` and shows its value.
inline std::string eval_show(const std::string& program, const std::string& expr) {
  Program in;
  in.run_text("t.jl", program);
  return show(in.eval_text(expr));
}

/// The message of the UserError that running `program` throws, or "no error".
inline std::string run_error(const std::string& program) {
  Program in;
  try {
    in.run_text("t.jl", program);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

/// The printed tape of `entry` traced on `args` after running `program`.
inline std::string trace_text(const std::string& program, const std::string& entry,
                              const std::vector<std::string>& args) {
  Program in;
  in.run_text("t.jl", program);
  Tape t = trace(in, entry, args).tape;
  validate(t);
  return print_tape(t);
}

/// The message of the UserError that tracing throws, or "no error".
inline std::string trace_error(const std::string& program, const std::string& entry,
                               const std::vector<std::string>& args, Limits limits = {}) {
  Program in(limits);
  try {
    in.run_text("t.jl", program);
    trace(in, entry, args);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

/// Traces `entry` on the globals `args`, runs the tape on their values and checks that
/// each output is close to what the interpreter computes by calling `entry` directly.
inline void check_trace_matches(const std::string& program, const std::string& entry,
                                const std::vector<std::string>& args) {
  Program in;
  in.run_text("t.jl", program);
  std::string call = entry + "(";
  for (size_t i = 0; i < args.size(); ++i) call += (i > 0 ? ", " : "") + args[i];
  Value direct = in.eval_text(call + ")");
  Traced t = trace(in, entry, args);
  validate(t.tape);
  Executor executor(t.tape);
  std::vector<Tensor> outs = executor.run(t.inputs);
  std::vector<Value> expected;
  if (direct.kind == VKind::tuple) {
    expected = direct.tup().items;
  } else {
    expected = {direct};
  }
  REQUIRE(outs.size() == expected.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    Value e = in.as_tensor(expected[i], outs[i].dtype());
    const Tensor& want = e.tensor().data;
    REQUIRE(want.shape() == outs[i].shape());
    for (int64_t k = 0; k < want.size(); ++k) {
      double a = element_value(want, k), b = element_value(outs[i], k);
      CHECK(b == doctest::Approx(a).epsilon(1e-5));
    }
  }
}

/// Traces f of `program` on its global x and checks the gradient against finite
/// differences.
inline void check_gradient(const std::string& program) {
  Program in;
  in.run_text("t.jl", program);
  Traced t = trace(in, "f", {"x"});
  check::GradcheckResult r = check::gradcheck(t.tape, t.inputs, {});
  CHECK_MESSAGE(r.ok, check::gradcheck_table(r));
}

}  // namespace ytape::tracer::testing
