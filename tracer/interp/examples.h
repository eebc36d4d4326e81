// The example values of a trace: the values the tape being recorded takes on the example
// inputs, computed on demand for data-dependent branches.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/tensor.h"
#include "tape/tape.h"

namespace ytape::tracer {

/// Computes values of the vars of a growing tape from the example values of its inputs.
/// Asking for a var runs just the ops it depends on (its cone), and every computed value
/// is kept, so over a whole trace each op runs at most once however many conditions are
/// asked for: a trace with k branches costs O(ops), not O(k · ops).
///
/// The tape may grow between calls (ops are only ever appended: vars already computed
/// keep their values). Effects are never run: `print` and `guard` have no outputs, so they
/// are in no cone; random ops recompute their values from their seed attribute.
class ExampleValues {
 public:
  /// Starts over with the example value of every input, by input name.
  void reset(const TensorMap& inputs);
  /// Forgets everything (the end of a trace).
  void clear();
  /// Gives the example value of an input that reset() did not name, on first need (a
  /// nested trace's inputs stand for values of the trace below, computed there lazily).
  void set_resolver(std::function<Tensor(const std::string& input)> resolve) {
    resolve_ = std::move(resolve);
  }
  /// The value of `v`, a var of `tape`. Throws UserError when an input has no example
  /// value or a kernel fails on the example data (an index out of range).
  const Tensor& value(const Tape& tape, Var v);
  /// Ops run so far (for tests: each op runs at most once).
  int64_t ops_run() const { return ops_run_; }

 private:
  void index_new_ops(const Tape& tape);
  void run_op(const Tape& tape, const Op& op);

  std::unordered_map<std::string, Tensor> inputs_;
  std::function<Tensor(const std::string&)> resolve_;
  std::vector<uint32_t> def_;   // var id -> index of the op defining it
  std::vector<Tensor> values_;  // var id -> value, once computed
  std::vector<bool> known_;     // var id -> whether values_ holds it
  size_t indexed_ = 0;          // ops of the tape already in def_
  int64_t ops_run_ = 0;
};

}  // namespace ytape::tracer
