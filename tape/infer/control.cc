// Inference rules of the control family: ops that hold tapes (docs/regions.md). Their
// result types follow from their regions, whose parameters must be exactly what the op
// passes them.
#include <fmt/format.h>

#include "tape/infer.h"
#include "tape/infer/common.h"
#include "tape/print.h"

namespace ytape {

namespace {

// What any region must be, whichever op holds it: a tape whose locations name the files of
// the outer tape, and whose ops the executor can run once per trip as they are.
void check_contents(const Tape& r) {
  if (!r.files.empty() || !r.scopes.empty() || !r.meta.empty()) {
    user_error(
        "its region {} has files, scopes or meta of its own; its locations name the outer "
        "tape's files and scopes",
        r.name);
  }
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const Op& op = r.ops[i];
    if (op.kind != OpKind::call || static_cast<int>(op.prim) >= kNumPrims) continue;
    const PrimInfo& info = prim_info(op.prim);
    if (info.effectful() || info.random()) {
      user_error(
          "op {} of its region {} is {}: effects and random draws are not run inside "
          "regions yet",
          i + 1, r.name, info.name);
    }
  }
}

std::string types_str(std::span<const Type> types) {
  std::string out = "(";
  for (size_t i = 0; i < types.size(); ++i) out += (i > 0 ? ", " : "") + type_str(types[i]);
  return out + ")";
}

// A scan's `running` names a bool[] carry and its `mask` a bool[length] xs.
void check_steps_taken(std::span<const Type> a, const AttrsOf<Prim::scan>& at) {
  const auto xs = static_cast<int64_t>(a.size()) - at.consts - at.carries;
  if (at.running < 0 || at.running > at.carries)
    user_error("running={} names none of its {} carries", at.running, at.carries);
  const Type flag{DType::boolean, {}}, flags{DType::boolean, {at.length}};
  if (at.running > 0 && a[at.consts + at.running - 1] != flag) {
    user_error("running={} names carry {}, a {}; it says whether the scan runs, a bool[]",
               at.running, at.running, type_str(a[at.consts + at.running - 1]));
  }
  if (at.mask < 0 || at.mask > xs) user_error("mask={} names none of its {} xs", at.mask, xs);
  if (at.mask > 0 && a[at.consts + at.carries + at.mask - 1] != flags) {
    user_error("mask={} names xs {}, a {}; it says which steps run, a {}", at.mask, at.mask,
               type_str(a[at.consts + at.carries + at.mask - 1]), type_str(flags));
  }
}

// scan(consts; carries; xs; consts, carries, length, reverse, running, mask) with body
// (consts, carries, x_t) -> (carries', y_t): the final carries, then each y stacked on a new
// last dim of `length`.
std::vector<Type> scan(Prim, std::span<const Type> a, const Attrs& attrs,
                       std::span<const Tape> regions) {
  const auto at = attrs_of<Prim::scan>(attrs);
  if (regions.size() != 1 || regions[0].name != "body")
    user_error("scan holds one region, its body; got {}", regions.size());
  check_contents(regions[0]);
  if (at.consts < 0 || at.carries < 0 || at.length < 0)
    user_error("consts, carries and length are counts, never negative");
  // Bounded as a dim is, so that the body's trips, like a tensor's elements, stay countable.
  if (std::string problem = shape_problem({at.length}); !problem.empty())
    user_error("length={}: {}", at.length, problem);
  const auto given = static_cast<int64_t>(a.size());
  if (at.consts > given || at.carries > given - at.consts) {  // the sum may not overflow
    user_error("consts={} and carries={} name more operands than the {} given", at.consts,
               at.carries, a.size());
  }
  check_steps_taken(a, at);
  std::vector<Type> want(a.begin(), a.begin() + at.consts + at.carries);
  for (size_t i = at.consts + at.carries; i < a.size(); ++i) {
    const Shape& s = a[i].shape;
    if (s.empty() || s.back() != at.length) {
      user_error("xs operand {} is {}; each xs is stacked on its last dim, of length={}", i + 1,
                 type_str(a[i]), at.length);
    }
    want.push_back({a[i].dtype, Shape(s.begin(), s.end() - 1)});
  }
  std::vector<Type> params = regions[0].input_types(), yields = regions[0].output_types();
  if (params != want) {
    user_error(
        "the body takes {}, but the operands give it {} (consts, carries, then a slice "
        "of each xs)",
        types_str(params), types_str(want));
  }
  auto carries = std::span<const Type>(a).subspan(at.consts, at.carries);
  if (yields.size() < carries.size() ||
      !std::equal(carries.begin(), carries.end(), yields.begin())) {
    user_error("the body yields {}, which must begin with the carries' types {}", types_str(yields),
               types_str(carries));
  }
  std::vector<Type> out(carries.begin(), carries.end());
  for (size_t i = carries.size(); i < yields.size(); ++i) {
    Type y = yields[i];
    y.shape.push_back(at.length);
    std::string problem = shape_problem(y.shape);
    if (!problem.empty()) user_error("its stacked result {}: {}", type_str(y), problem);
    out.push_back(std::move(y));
  }
  return out;
}

// The region names of a cond on a selector of `dtype` with `n` branches.
std::string branch_name(DType selector, size_t k) {
  if (selector == DType::boolean) return k == 0 ? "then" : "else";
  return fmt::format("case{}", k + 1);
}

// cond(selector, operands...): each branch takes the operands and yields the results.
std::vector<Type> cond(Prim, std::span<const Type> a, const Attrs&, std::span<const Tape> regions) {
  if (a.empty() || !a[0].shape.empty() ||
      (a[0].dtype != DType::boolean && a[0].dtype != DType::i64)) {
    user_error("its selector (the first operand) is {}; a cond chooses by a bool[] or an i64[]",
               a.empty() ? "missing" : type_str(a[0]));
  }
  const bool flag = a[0].dtype == DType::boolean;
  if (flag ? regions.size() != 2 : regions.empty()) {
    user_error("a cond on {} holds {}; got {} regions", type_str(a[0]),
               flag ? "two regions, then and else" : "one region or more, case1..caseN",
               regions.size());
  }
  std::vector<Type> operands(a.begin() + 1, a.end());
  std::vector<Type> out = regions[0].output_types();
  for (size_t k = 0; k < regions.size(); ++k) {
    const Tape& r = regions[k];
    std::string want = branch_name(a[0].dtype, k);
    if (r.name != want) user_error("its region {} is named {}; it must be {}", k + 1, r.name, want);
    check_contents(r);
    if (r.input_types() != operands) {
      user_error("its region {} takes {}, but the operands after the selector are {}", r.name,
                 types_str(r.input_types()), types_str(operands));
    }
    if (r.output_types() != out) {
      user_error("its region {} yields {}, but {} yields {}; every branch yields the same types",
                 r.name, types_str(r.output_types()), regions[0].name, types_str(out));
    }
  }
  return out;
}

// while_loop(consts; carries; consts, max_trips): cond (consts, carries) -> bool[], body
// (consts, carries) -> carries; the results are the final carries.
std::vector<Type> while_loop(Prim, std::span<const Type> a, const Attrs& attrs,
                             std::span<const Tape> regions) {
  const auto at = attrs_of<Prim::while_loop>(attrs);
  if (regions.size() != 2 || regions[0].name != "cond" || regions[1].name != "body") {
    std::string names;
    for (const Tape& r : regions) names += (names.empty() ? "" : ", ") + r.name;
    user_error("a while_loop holds two regions, cond then body; got ({})", names);
  }
  if (at.consts < 0 || at.consts > static_cast<int64_t>(a.size()))
    user_error("consts={} names more operands than the {} given, or is negative", at.consts,
               a.size());
  if (at.max_trips < 0) user_error("max_trips={} is negative; 0 means unbounded", at.max_trips);
  std::vector<Type> params(a.begin(), a.end());
  std::vector<Type> carries(a.begin() + at.consts, a.end());
  for (const Tape& r : regions) {
    check_contents(r);
    if (r.input_types() != params) {
      user_error("its region {} takes {}, but the operands give it {} (consts, then carries)",
                 r.name, types_str(r.input_types()), types_str(params));
    }
  }
  if (regions[0].output_types() != std::vector<Type>{Type{DType::boolean, {}}})
    user_error("its region cond yields {}; it must yield one bool[]",
               types_str(regions[0].output_types()));
  if (regions[1].output_types() != carries) {
    user_error("its region body yields {}, but the carries are {}",
               types_str(regions[1].output_types()), types_str(carries));
  }
  return carries;
}

// The float ones of `types`.
std::vector<Type> floats(const std::vector<Type>& types) {
  std::vector<Type> out;
  for (const Type& t : types) {
    if (is_float(t.dtype)) out.push_back(t);
  }
  return out;
}

// Region `r` of a custom_rule takes `given` (`given_what` says what it is) and yields
// `yields` (`yields_what`), and holds what a region may.
void check_signature(const Tape& r, const std::vector<Type>& given, const std::vector<Type>& yields,
                     std::string_view given_what, std::string_view yields_what) {
  check_contents(r);
  if (r.input_types() != given) {
    user_error("its region {} takes {}, but it is given {} ({})", r.name,
               types_str(r.input_types()), types_str(given), given_what);
  }
  if (r.output_types() != yields) {
    user_error("its region {} yields {}; it must yield {}, {}", r.name, types_str(r.output_types()),
               yields_what, types_str(yields));
  }
}

// custom_rule(operands; name, rule): body (operands) -> results; [pushforward (operands,
// a tangent per float operand) -> a tangent per float result;] pullback (operands,
// results, a cotangent per float result) -> a cotangent per float operand.
std::vector<Type> custom_rule(Prim, std::span<const Type> a, const Attrs& attrs,
                              std::span<const Tape> regions) {
  const auto at = attrs_of<Prim::custom_rule>(attrs);
  if (at.name.empty()) user_error("its name is empty; it names the function the rule is for");
  if (regions.size() < 2 || regions.size() > 3 || regions[0].name != "body" ||
      regions[1].name != "pullback" || (regions.size() == 3 && regions[2].name != "pushforward")) {
    std::string names;
    for (const Tape& r : regions) names += (names.empty() ? "" : ", ") + r.name;
    user_error("a custom_rule holds body, then pullback, and optionally pushforward; got ({})",
               names);
  }
  const Tape& body = regions[0];
  check_contents(body);
  std::vector<Type> operands(a.begin(), a.end());
  if (body.input_types() != operands) {
    user_error("its region body takes {}, but the operands are {}", types_str(body.input_types()),
               types_str(operands));
  }
  std::vector<Type> results = body.output_types();
  if (results.empty())
    user_error("its region body yields nothing; a rule is for a function's results");
  std::vector<Type> params = operands, grads = floats(operands), tangents = floats(results);
  params.insert(params.end(), results.begin(), results.end());
  params.insert(params.end(), tangents.begin(), tangents.end());
  check_signature(regions[1], params, grads,
                  "the operands, the results, then a cotangent per float result",
                  "a cotangent per float operand");
  if (regions.size() == 3) {
    std::vector<Type> given = operands;
    given.insert(given.end(), grads.begin(), grads.end());
    check_signature(regions[2], given, tangents, "the operands, then a tangent per float operand",
                    "a tangent per float result");
  }
  return results;
}

}  // namespace

std::string cond_branch_name(DType selector, size_t k) {
  return branch_name(selector, k);
}

void register_control_infer(InferTable& t) {
  t.set(Prim::scan, scan);
  t.set(Prim::cond, cond);
  t.set(Prim::while_loop, while_loop);
  t.set(Prim::custom_rule, custom_rule);
}

}  // namespace ytape
