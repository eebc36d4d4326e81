#include "tracer/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "tape/builder.h"
#include "tape/error.h"
#include "tape/float16.h"
#include "tape/strings.h"
#include "tape/validate.h"
#include "tracer/interp/nesting.h"

namespace ytape::tracer {

namespace {

constexpr uint32_t kNoVar = ~uint32_t{0};

bool is_integer_text(const std::string& s) {
  size_t i = s.size() > 1 && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// "; did you mean 'loss'?" naming the closest global the program defined (a function
// with methods, or a value that is not a function), or "".
std::string suggestion(Interpreter& program, const std::string& name, bool function) {
  std::vector<std::string> names;
  for (const std::string& g : program.global_names()) {
    const Value& v = *program.global(g);
    bool is_function = v.kind == VKind::function && !v.fn().methods.empty();
    if (is_function == function &&
        (function || (v.kind != VKind::function && v.kind != VKind::type)))
      names.push_back(g);
  }
  std::sort(names.begin(), names.end());  // of equally close names, the first in order
  return did_you_mean(name, names);
}

// One command-line argument as a value: a global, a type (a traced placeholder without
// data), or a literal.
Value parse_arg(Interpreter& program, const std::string& text) {
  if (is_integer_text(text)) {
    try {
      return Value::integer(std::stoll(text));
    } catch (const std::exception&) {
      user_error("argument '{}' does not fit in a 64-bit integer", text);
    }
  }
  if (text == "true" || text == "false") return Value::boolean(text == "true");
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    return Value::string(text.substr(1, text.size() - 2));
  }
  Type type;
  std::string why;
  if (text.find('[') != std::string::npos) {
    if (parse_type(text, &type, &why)) return Value::traced(Var{kNoVar}, type, type.rank() == 0);
    user_error("argument '{}' is not a valid type ({}); write a type as f32[3,4] or f64[]", text,
               why);
  }
  if (const Value* g = program.global(text)) return *g;
  char* end = nullptr;
  double number = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size())
    return Value::floating(number, DType::f64);
  user_error(
      "argument '{}' is not a global of the program, a type such as f32[3,4], or a "
      "literal (an integer, true/false, a \"string\" or a float){}",
      text, suggestion(program, text, false));
}

// Whether `v`, `depth` containers inside a lifted value, holds only static scalars:
// integers, booleans, strings, symbols and ranges, possibly in (nested) tuples. Not a tuple
// that takes the walk past kMaxValueNesting or that is inside itself (through a vector):
// the walk that asked goes on into it, and finds and names that.
bool all_static(const Value& v, size_t depth, std::vector<const Object*>& inside) {
  switch (v.kind) {
    case VKind::integer:
    case VKind::boolean:
    case VKind::string:
    case VKind::symbol:
    case VKind::range:
      return true;
    case VKind::tuple:
    case VKind::named_tuple: {
      if (depth >= kMaxValueNesting ||
          std::find(inside.begin(), inside.end(), v.obj.get()) != inside.end()) {
        return false;
      }
      inside.push_back(v.obj.get());
      bool all = std::all_of(v.tup().items.begin(), v.tup().items.end(), [&](const Value& item) {
        return all_static(item, depth + 1, inside);
      });
      inside.pop_back();
      return all;
    }
    default:
      return false;
  }
}

bool all_static(const Value& v, size_t depth) {
  std::vector<const Object*> inside;
  return all_static(v, depth, inside);
}

struct Lifter {
  explicit Lifter(Builder& builder) : b(builder) {}
  Builder& b;
  TensorMap examples;
  bool complete = true;
  PathWalk walk{"argument", "pass the parts the function needs"};

  // Floats and arrays become inputs; the rest is static and recorded in the meta. `place`
  // is `path` as the program writes it (model.layers[1]), kept on structs for the scopes of
  // layer calls.
  Value lift(const Value& v, const std::string& path, const std::string& place) {
    switch (v.kind) {
      case VKind::float_:
        return lift_float(v, path);
      case VKind::tensor: {
        const TensorObj& x = v.tensor();
        Var var = b.input(path, x.type);
        if (x.traced) {
          complete = false;
        } else {
          examples.emplace_back(path, x.data);
        }
        return Value::traced(var, x.type, x.number);
      }
      case VKind::tuple:
      case VKind::named_tuple: {
        const TupleObj& t = v.tup();
        if (!t.items.empty() && all_static(v, walk.depth())) {
          // One entry per tuple: `static.conv1.stride = (2, 2)` reads better than one
          // line per element, and a model's meta stays a line per setting.
          b.add_meta("static." + path, show(v));
          return v;
        }
        walk.enter(v, path);
        std::vector<Value> items;
        for (size_t i = 0; i < t.items.size(); ++i) {
          std::string name = t.names.empty() ? std::to_string(i + 1) : t.names[i];
          std::string at = t.names.empty() ? place + "[" + name + "]" : place + "." + name;
          items.push_back(lift(t.items[i], path + "." + name, at));
        }
        walk.leave();
        // A vector of values stays one, so that the traced code can push! onto it.
        return Value::like(t, std::move(items));
      }
      case VKind::object: {
        const StructObj& s = v.object();
        walk.enter(v, path);
        std::vector<Value> fields;
        for (size_t i = 0; i < s.fields.size(); ++i) {
          const std::string& field = s.type->fields[i];
          fields.push_back(lift(s.fields[i], path + "." + field, place + "." + field));
        }
        walk.leave();
        return Value::instance(s.type, std::move(fields), s.made, place);
      }
      case VKind::integer:
      case VKind::boolean:
      case VKind::string:
      case VKind::symbol:
      case VKind::range:
        b.add_meta("static." + path, show(v));
        return v;
      default:
        return v;
    }
  }

  Value lift_float(const Value& v, const std::string& path) {
    Var var = b.input(path, Type{v.dtype, {}});
    Tensor t(Type{v.dtype, {}});
    if (v.dtype == DType::f32) {
      t.data<float>()[0] = static_cast<float>(v.f);
    } else if (v.dtype == DType::f16) {
      t.data<uint16_t>()[0] = f16_from_double(v.f);
    } else {
      t.data<double>()[0] = v.f;
    }
    examples.emplace_back(path, t);
    return Value::traced(var, t.type(), true);
  }
};

// The tape's outputs: the entry's result flattened, named by path (trace.h).
struct Outputs {
  Outputs(Interpreter& program, Builder& builder) : in(program), b(builder) {}
  Interpreter& in;
  Builder& b;
  PathWalk walk{"the entry's result at", "return the parts that are needed"};

  void add(const Value& v, const std::string& name) {
    switch (v.kind) {
      case VKind::tuple:
      case VKind::named_tuple: {
        const TupleObj& t = v.tup();
        walk.enter(v, name);
        for (size_t i = 0; i < t.items.size(); ++i) {
          add(t.items[i], name + "." + (t.names.empty() ? std::to_string(i + 1) : t.names[i]));
        }
        walk.leave();
        return;
      }
      case VKind::object: {
        const StructObj& s = v.object();
        walk.enter(v, name);
        for (size_t i = 0; i < s.fields.size(); ++i) {
          // A returned model's static fields (integers, Bools, tuples of them: a stride)
          // are settings, as they are when it is an argument.
          if (all_static(s.fields[i], walk.depth())) continue;
          add(s.fields[i], name + "." + s.type->fields[i]);
        }
        walk.leave();
        return;
      }
      case VKind::nothing:
        return;
      case VKind::function:
      case VKind::type:
      case VKind::string:
      case VKind::symbol:
      case VKind::range:
        // Static parts of a returned model (an activation, a name) are no outputs; a
        // training step returns its model whole.
        if (name != "out") return;
        [[fallthrough]];
      default:
        if (!v.is_number() && !v.is_tensor()) {
          user_error("the entry returns {} at '{}', which cannot be a tape output", a_type_name(v),
                     name);
        }
        b.output(in.tape_var(v), name);
    }
  }
};

// The parameter names of the method the call will run, for input paths.
std::vector<std::string> param_names(Interpreter& program, const Value& f, const Args& args) {
  std::vector<std::string> names;
  const Method* m = f.kind == VKind::function ? program.find_method(f.fn(), args) : nullptr;
  for (size_t i = 0; i < args.pos.size(); ++i) {
    std::string name = fmt::format("arg{}", i + 1);
    if (m != nullptr && !m->def->params.empty()) {
      size_t k = std::min(i, m->def->params.size() - 1);
      const Param& p = m->def->params[k];
      if (p.splat) {
        name = fmt::format("{}.{}", p.name, i - k + 1);
      } else if (k == i && !p.name.empty()) {
        name = p.name;
      }
    }
    names.push_back(name);
  }
  return names;
}

}  // namespace

Traced trace(Interpreter& program, const std::string& entry, const std::vector<std::string>& args,
             const TraceOptions& options) {
  const Value* f = program.global(entry);
  if (f == nullptr)
    user_error("the program defines no function '{}'{}", entry, suggestion(program, entry, true));
  Args call_args;
  for (const std::string& a : args) call_args.pos.push_back(parse_arg(program, a));
  std::vector<std::string> names = param_names(program, *f, call_args);
  Builder b(entry);
  b.add_meta("entry", entry);
  Lifter lifter(b);
  for (size_t i = 0; i < call_args.pos.size(); ++i) {
    call_args.pos[i] = lifter.lift(call_args.pos[i], names[i], names[i]);
  }
  program.set_max_ops(options.max_ops);
  program.begin_trace(&b, lifter.examples, lifter.complete);
  try {
    Value result = program.call(*f, std::move(call_args));
    Outputs(program, b).add(result, "out");
  } catch (...) {
    program.end_trace();
    throw;
  }
  program.end_trace();
  Tape tape = drop_unread(b.finish(), program.droppable());
  check_made(tape, "trace");
  return {std::move(tape), std::move(lifter.examples)};
}

}  // namespace ytape::tracer
