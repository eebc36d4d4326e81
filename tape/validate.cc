#include "tape/validate.h"

#include <fmt/format.h>

#include <unordered_set>

#include "tape/error.h"
#include "tape/infer.h"
#include "tape/print.h"

namespace ytape {

namespace {

class Validator {
 public:
  // `root` is the outermost tape, whose files a region's locations name; `depth` counts
  // the regions `t` is inside.
  Validator(const Tape& t, const Tape& root, int depth) : t_(t), root_(root), depth_(depth) {}

  void run() {
    if (depth_ == 0) check_scopes();
    for (size_t i = 0; i < t_.ops.size(); ++i) {
      index_ = i;
      check_op(t_.ops[i]);
    }
    if (next_ != t_.types.size()) {
      user_error("tape {}: %{} has a type but no op defines it; vars must be numbered densely",
                 t_.name, next_ + 1);
    }
    std::unordered_set<std::string_view> names;
    for (const Output& o : t_.outputs) {
      if (o.var.id >= next_) {
        user_error("tape {}: output '{}' is {}, which no op defines", t_.name, o.name,
                   var_str(o.var));
      }
      // A region's outputs are what it yields, by position.
      if (depth_ > 0) continue;
      if (!names.insert(o.name).second) {
        user_error("tape {}: two outputs are named '{}'; give each output its own name", t_.name,
                   o.name);
      }
    }
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    const Op& op = t_.ops[index_];
    std::string loc = root_.loc_str(op.loc);
    user_error("tape {}: op {} ({}){}: {}", t_.name, index_ + 1, print_op(t_, op),
               loc.empty() ? "" : " at " + loc, fmt::format(format, std::forward<Args>(args)...));
  }

  // A scope's parent comes before it (so the chain of callers ends), and its locations
  // name files of the tape.
  void check_scopes() const {
    for (size_t i = 0; i < t_.scopes.size(); ++i) {
      const Scope& s = t_.scopes[i];
      if (s.parent > i) {
        user_error(
            "tape {}: scope {} ({}) names scope {} as its caller; a caller must come "
            "before the scopes called in it",
            t_.name, i + 1, s.title(), s.parent);
      }
      for (Loc loc : {s.made, s.call}) {
        if (loc.file > t_.files.size()) {
          user_error("tape {}: scope {} ({}) names file {}, which the tape does not list", t_.name,
                     i + 1, s.title(), loc.file);
        }
      }
    }
  }

  void check_op(const Op& op) {
    if (op.loc.file > root_.files.size())
      fail("its location names file {}, which the tape does not list", op.loc.file);
    if (op.loc.scope > root_.scopes.size())
      fail("its location names scope {}, which the tape does not list", op.loc.scope);
    bool region_op = op.kind == OpKind::call && static_cast<int>(op.prim) < kNumPrims &&
                     prim_info(op.prim).holds_regions();
    if (!op.regions.empty() && !region_op)
      fail("only region ops (scan, cond, while_loop) hold regions");
    switch (op.kind) {
      case OpKind::input:
        check_input(op);
        break;
      case OpKind::constant:
        check_constant(op);
        break;
      case OpKind::call:
        check_call(op);
        break;
    }
  }

  void check_input(const Op& op) {
    if (seen_call_) fail("inputs must come before every other op; move it to the top");
    if (op.outs.size() != 1 || !op.args.empty()) fail("an input has one output and no arguments");
    if (op.name.empty()) fail("an input needs a name");
    if (!input_names_.insert(op.name).second)
      fail("another input is named '{}'; rename one", op.name);
    define_outs(op);
    check_shape(op.outs[0]);
  }

  void check_constant(const Op& op) {
    seen_call_ = true;
    if (op.outs.size() != 1 || !op.args.empty()) fail("a constant has one output and no arguments");
    define_outs(op);
    check_shape(op.outs[0]);
    const Type& type = t_.type(op.outs[0]);
    int64_t want = type.size() * dtype_size(type.dtype);
    if (static_cast<int64_t>(op.value.size()) != want) {
      fail("its value has {} bytes, but {} needs {}", op.value.size(), type_str(type), want);
    }
    if (type.dtype == DType::boolean) {
      for (uint8_t b : op.value) {
        if (b > 1) fail("a bool constant holds the byte {}; bools are stored as 0 or 1", b);
      }
    }
  }

  void check_call(const Op& op) {
    seen_call_ = true;
    if (static_cast<int>(op.prim) >= kNumPrims) fail("unknown primitive");
    const PrimInfo& info = prim_info(op.prim);
    if (info.arity != kVariadic && static_cast<int>(op.args.size()) != info.arity) {
      fail("{} takes {} arguments, not {}", info.name, info.arity, op.args.size());
    }
    if (info.outputs != kVariadic && static_cast<int>(op.outs.size()) != info.outputs) {
      fail("{} has {} outputs, not {}", info.name, info.outputs, op.outs.size());
    }
    for (Var a : op.args) {
      if (a.id >= t_.types.size()) fail("{} is never defined", var_str(a));
      if (a.id >= next_)
        fail("{} is used before it is defined; move its definition up", var_str(a));
    }
    std::string problem = attrs_problem(op.prim, op.attrs);
    if (!problem.empty()) fail("{}", problem);
    for (const Tape& r : op.regions) check_region(r);
    define_outs(op);
    check_types(op);
  }

  void check_region(const Tape& r) {
    if (depth_ + 1 > kMaxRegionDepth) fail("regions nest deeper than {}", kMaxRegionDepth);
    try {
      Validator(r, root_, depth_ + 1).run();
    } catch (const UserError& e) {
      fail("in its region {}: {}", r.name, e.what());
    }
  }

  void check_types(const Op& op) {
    std::vector<Type> arg_types;
    for (Var a : op.args) arg_types.push_back(t_.type(a));
    std::vector<Type> want;
    try {
      want = infer_types(op.prim, arg_types, op.attrs, op.regions);
    } catch (const UserError& e) {
      fail("{}", e.what());
    }
    if (want.size() != op.outs.size())
      fail("it has {} outputs, but its arguments and regions give {}", op.outs.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const Type& got = t_.type(op.outs[i]);
      if (got != want[i]) {
        fail("{} is recorded as {}, but its arguments give {}", var_str(op.outs[i]), type_str(got),
             type_str(want[i]));
      }
    }
  }

  void define_outs(const Op& op) {
    for (Var v : op.outs) {
      if (v.id < next_)
        fail("{} is already defined by an earlier op; each var is defined once", var_str(v));
      if (v.id != next_) {
        fail("it defines {} where {} comes next; vars are numbered densely in definition order",
             var_str(v), var_str(Var{next_}));
      }
      if (v.id >= t_.types.size()) fail("{} has no type", var_str(v));
      ++next_;
    }
  }

  void check_shape(Var v) {
    std::string problem = shape_problem(t_.type(v).shape);
    if (!problem.empty()) fail("{}", problem);
  }

  const Tape& t_;
  const Tape& root_;
  int depth_;
  size_t index_ = 0;
  uint32_t next_ = 0;  // the id the next defined var must have
  bool seen_call_ = false;
  std::unordered_set<std::string_view> input_names_;
};

}  // namespace

void validate(const Tape& t) {
  Validator(t, t, 0).run();
}

void check_made(const Tape& t, std::string_view stage) {
  if constexpr (!kCheckTapes) return;
  try {
    validate(t);
  } catch (const UserError& e) {
    internal_error("{} made an invalid tape: {}", stage, e.what());
  }
}

}  // namespace ytape
