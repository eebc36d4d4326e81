#include "tape/print.h"

#include <fmt/format.h>

#include "tape/strings.h"

namespace ytape {

namespace {

constexpr int64_t kMaxShownElements = 8;

std::string type_of(const Tape& t, Var v) {
  return v.id < t.types.size() ? type_str(t.types[v.id]) : "?";
}

void append_vars(std::string& out, const VarList& vars) {
  for (size_t i = 0; i < vars.size(); ++i) {
    if (i > 0) out += ", ";
    out += var_str(vars[i]);
  }
}

void append_literal(std::string& out, const Tape& t, const Op& op) {
  if (op.outs.empty() || op.outs[0].id >= t.types.size()) return;
  const Type& type = t.types[op.outs[0].id];
  int64_t n = type.size();
  if (static_cast<int64_t>(op.value.size()) != n * dtype_size(type.dtype)) {
    out += fmt::format("<{} bytes>", op.value.size());
    return;
  }
  if (type.rank() == 0) {
    out += literal_str(op, type.dtype, 0);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < std::min(n, kMaxShownElements); ++i) {
    if (i > 0) out += ", ";
    out += literal_str(op, type.dtype, i);
  }
  if (n > kMaxShownElements) out += fmt::format(", ... {} elements", n);
  out += ']';
}

// Attributes that differ from their schema default, "name=value" joined by ", ".
std::string shown_attrs(const Op& op) {
  const PrimInfo& info = prim_info(op.prim);
  std::string out;
  for (const Attr& a : op.attrs) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : info.attrs) {
      if (s.name == a.name) spec = &s;
    }
    if (spec != nullptr && spec->default_value && *spec->default_value == a.value) continue;
    if (!out.empty()) out += ", ";
    out += a.name;
    out += '=';
    out += printable(attr_value_str(a.value));
  }
  return out;
}

}  // namespace

std::string var_str(Var v) {
  return fmt::format("%{}", v.id + 1);
}

std::string print_op(const Tape& t, const Op& op) {
  std::string out;
  if (op.kind == OpKind::input) {
    Var v = op.outs.empty() ? Var{~0u} : op.outs[0];
    return fmt::format("in  {}::{} {}", var_str(v), type_of(t, v), printable(op.name));
  }
  append_vars(out, op.outs);
  if (!op.outs.empty()) out += " = ";
  if (op.kind == OpKind::constant) {
    out += "const(";
    append_literal(out, t, op);
    out += ')';
  } else if (static_cast<int>(op.prim) >= kNumPrims) {
    out += fmt::format("<primitive {}>(", static_cast<int>(op.prim));
    append_vars(out, op.args);
    out += ')';
  } else {
    out += prim_name(op.prim);
    out += '(';
    append_vars(out, op.args);
    std::string attrs = shown_attrs(op);
    if (!attrs.empty()) {
      if (!op.args.empty()) out += "; ";
      out += attrs;
    }
    out += ')';
  }
  if (op.outs.size() == 1) {
    out += "::" + type_of(t, op.outs[0]);
  } else if (op.outs.size() > 1) {
    out += "::(";
    for (size_t i = 0; i < op.outs.size(); ++i) {
      if (i > 0) out += ", ";
      out += type_of(t, op.outs[i]);
    }
    out += ')';
  }
  return out;
}

namespace {

// The ops of `t` indented by `indent`, each region under its op one level deeper (its
// name, then its ops and its yield); locations name the files of `root`.
void append_ops(std::string& out, const Tape& t, const Tape& root, const std::string& indent) {
  for (const Op& op : t.ops) {
    out += indent;
    out += print_op(t, op);
    std::string loc = root.where_str(op.loc);
    if (!loc.empty()) {
      out += "  # ";
      out += loc;
    }
    out += '\n';
    for (const Tape& r : op.regions) {
      out += fmt::format("{}  {}\n", indent, printable(r.name));
      append_ops(out, r, root, indent + "    ");
      out += indent + "    yield";
      for (size_t i = 0; i < r.outputs.size(); ++i) {
        out += (i > 0 ? ", " : " ") + var_str(r.outputs[i].var);
      }
      out += '\n';
    }
  }
}

}  // namespace

std::string print_tape(const Tape& t) {
  std::string out = fmt::format("tape {}\n", printable(t.name));
  for (const auto& [key, value] : t.meta) {
    out += fmt::format("  meta {} = {}\n", printable(key), printable(quoted(value)));
  }
  for (size_t i = 0; i < t.scopes.size(); ++i) {
    const Scope& s = t.scopes[i];
    out += fmt::format("  scope {} {}", i + 1, printable(s.title()));
    if (s.parent != 0) out += fmt::format(" in {}", s.parent);
    std::string made = t.loc_str(s.made), call = t.loc_str(s.call);
    if (!made.empty() || !call.empty()) out += "  #";
    if (!made.empty()) out += " made at " + made + (call.empty() ? "" : ",");
    if (!call.empty()) out += " called at " + call;
    out += '\n';
  }
  append_ops(out, t, t, "  ");
  for (const Output& o : t.outputs) {
    out += fmt::format("  out {} {}\n", var_str(o.var), printable(o.name));
  }
  return out;
}

}  // namespace ytape
