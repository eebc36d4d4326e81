#include "tracer/lang/ast.h"

#include <fmt/format.h>

namespace ytape::tracer {

namespace {

constexpr std::string_view kKindNames[] = {
#define X(kind, text) text,
#include "tracer/lang/expr_kinds.def"
#undef X
};

// Shortest round-trip digits, always with a '.' or an exponent so a float never reads as
// an integer.
std::string number_text(const Expr& e) {
  std::string text = e.float32 ? fmt::format("{}", static_cast<float>(e.float_value))
                               : fmt::format("{}", e.float_value);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

void print(const Expr& e, std::string& out);

void print_children(const Expr& e, size_t first, std::string& out) {
  for (size_t i = first; i < e.args.size(); ++i) {
    out += ' ';
    print(*e.args[i], out);
  }
}

// Callees and comparison operators that are plain names print bare: (call f (id x)).
void print_bare(const Expr& e, std::string& out) {
  if (e.kind == Kind::id) {
    out += e.name;
  } else {
    print(e, out);
  }
}

std::string param_text(const Param& p) {
  std::string out = p.name;
  if (!p.unpack.empty()) out = unpack_text(p.unpack, ",");
  if (p.type) out.append("::").append(type_expr_str(*p.type));
  if (p.splat) out += "...";
  if (p.default_value) out.append("=").append(to_sexpr(*p.default_value));
  return out;
}

void print_params(const std::vector<Param>& params, std::string_view lead, std::string& out) {
  out += " (";
  out += lead;
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0 || !lead.empty()) out += ' ';
    out += param_text(params[i]);
  }
  out += ')';
}

void print_function(const Expr& e, std::string& out) {
  const Function& f = *e.function;
  out += e.kind == Kind::lambda ? "(->" : "(function";
  if (!f.name.empty()) out += " " + f.name;
  if (f.receiver) out += " (" + param_text(*f.receiver) + ")";
  print_params(f.params, "", out);
  if (!f.kwparams.empty()) print_params(f.kwparams, ";", out);
  if (!f.where.empty()) {
    out += " (where";
    for (const ExprPtr& w : f.where) out.append(" ").append(type_expr_str(*w));
    out += ')';
  }
  out += ' ';
  print(*f.body, out);
  out += ')';
}

void print_struct(const Expr& e, std::string& out) {
  const StructDef& s = *e.struct_def;
  out += s.is_mutable ? "(struct mutable " : "(struct ";
  out += s.name;
  if (!s.type_params.empty()) {
    std::vector<std::string> params;
    for (const ExprPtr& p : s.type_params) params.push_back(type_expr_str(*p));
    out += fmt::format("{{{}}}", fmt::join(params, ", "));
  }
  if (s.supertype) out += " <: " + type_expr_str(*s.supertype);
  out += " (";
  for (size_t i = 0; i < s.fields.size(); ++i) {
    if (i > 0) out += ' ';
    out += s.fields[i].name;
    if (s.fields[i].type) out += "::" + type_expr_str(*s.fields[i].type);
  }
  out += "))";
}

void print(const Expr& e, std::string& out) {
  switch (e.kind) {
    case Kind::int_lit:
      out += fmt::format("(int {})", e.int_value);
      return;
    case Kind::float_lit:
      out += fmt::format("({} {})", e.float32 ? "float32" : "float", number_text(e));
      return;
    case Kind::bool_lit:
      out += e.int_value ? "(bool true)" : "(bool false)";
      return;
    case Kind::string_lit:
      out += "(string " + julia_quoted(e.name) + ")";
      return;
    case Kind::using_:
    case Kind::import_:
      out += fmt::format("({} {})", kind_name(e.kind), julia_quoted(e.name));
      return;
    case Kind::function:
    case Kind::lambda:
      print_function(e, out);
      return;
    case Kind::struct_:
      print_struct(e, out);
      return;
    case Kind::op_assign:
      out += fmt::format("({}=", e.name);
      break;
    case Kind::call:
    case Kind::broadcast:
      out += fmt::format("({} ", kind_name(e.kind));
      print_bare(*e.args[0], out);
      print_children(e, 1, out);
      out += ')';
      return;
    case Kind::comparison:
      out += "(comparison";
      for (size_t i = 0; i < e.args.size(); ++i) {
        out += ' ';
        if (i % 2 == 1) {
          print_bare(*e.args[i], out);
        } else {
          print(*e.args[i], out);
        }
      }
      out += ')';
      return;
    case Kind::field:
      out += "(. ";
      print(*e.args[0], out);
      out += " " + e.name + ")";
      return;
    default:
      out += '(';
      out += kind_name(e.kind);
      if (!e.name.empty()) out += " " + e.name;
  }
  print_children(e, 0, out);
  out += ')';
}

}  // namespace

std::string unpack_text(const std::vector<Unpack>& parts, std::string_view sep) {
  std::string out = "(";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i].parts.empty() ? parts[i].name : unpack_text(parts[i].parts, sep);
  }
  return out + ")";
}

std::string julia_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '$':
        out += "\\$";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + '"';
}

std::string_view kind_name(Kind kind) {
  return kKindNames[static_cast<size_t>(kind)];
}

ExprPtr make_expr(Kind kind, Pos pos, std::string name) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->pos = pos;
  e->name = std::move(name);
  return e;
}

std::string to_sexpr(const Expr& expr) {
  std::string out;
  print(expr, out);
  return out;
}

std::string type_expr_str(const Expr& type) {
  switch (type.kind) {
    case Kind::id:
      return type.name;
    case Kind::int_lit:
      return fmt::format("{}", type.int_value);
    case Kind::symbol:
      return fmt::format(":{}", type.name);
    case Kind::bool_lit:
      return type.int_value != 0 ? "true" : "false";
    case Kind::field:
      return type_expr_str(*type.args[0]) + "." + type.name;
    case Kind::curly: {
      std::vector<std::string> params;
      for (size_t i = 1; i < type.args.size(); ++i) params.push_back(type_expr_str(*type.args[i]));
      return fmt::format("{}{{{}}}", type_expr_str(*type.args[0]), fmt::join(params, ", "));
    }
    case Kind::call: {
      const Expr& callee = *type.args[0];
      bool bound = callee.kind == Kind::id && (callee.name == "<:" || callee.name == ">:");
      if (bound && type.args.size() == 2) return callee.name + type_expr_str(*type.args[1]);
      if (bound && type.args.size() == 3) {
        return type_expr_str(*type.args[1]) + callee.name + type_expr_str(*type.args[2]);
      }
      return to_sexpr(type);
    }
    default:
      return to_sexpr(type);
  }
}

}  // namespace ytape::tracer
