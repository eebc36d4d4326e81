#include "inspect/diff_review.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "tape/error.h"
#include "tape/print.h"
#include "tape/strings.h"

namespace ytape {

namespace {

// 1.5 G, 23.4 M, 812 k, 12: a figure for a table.
std::string short_number(double v) {
  double m = std::abs(v);
  if (m >= 1e9) return fmt::format("{:.2f} G", v / 1e9);
  if (m >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
  if (m >= 1e3) return fmt::format("{:.1f} k", v / 1e3);
  return fmt::format("{:g}", v);
}

// The change from a to b: "+1.2%", "-3", "=".
std::string change_str(double a, double b, bool percent) {
  if (a == b) return "=";
  if (percent && a != 0) return fmt::format("{:+.1f}%", 100 * (b - a) / a);
  return fmt::format("{:+g}", b - a);
}

// Markdown text inside backticks: a backtick would end it.
std::string code(std::string text) {
  for (char& c : text) {
    if (c == '`') c = '\'';
  }
  return "`" + printable(text) + "`";
}

// The rows of changes by place: the innermost layer call an op was recorded in (its scope),
// else its source line; in the order the places first appear in the diff.
struct PlaceChanges {
  std::string where;  // a source line
  bool layer = false;
  std::string path, layer_a, layer_b, made;  // a layer's path, forms in A and B, own line
  int64_t changed = 0, added = 0, removed = 0;
  std::set<std::string> before, after;  // primitives
  std::string first;                    // the first op's text, B's where it has one
};

// The layer each op of a tape belongs to: the scope it was recorded in, or for an input
// (a parameter, `model.layers.1.weight`) the layer whose path its name extends.
class Layers {
 public:
  explicit Layers(const Tape& t) : t_(t) {
    for (const Scope& s : t.scopes) {
      if (!s.path.empty()) by_name_.try_emplace(dotted(s.path), &s);
    }
  }
  const Tape& tape() const { return t_; }
  const Scope* of(const Op& op) const {
    if (op.kind != OpKind::input) return t_.scope_of(op.loc);
    const std::string_view name = op.name;
    for (size_t dot = name.rfind('.'); dot != std::string::npos && dot > 0;
         dot = name.rfind('.', dot - 1)) {
      auto it = by_name_.find(std::string(name.substr(0, dot)));
      if (it != by_name_.end()) return it->second;
    }
    return nullptr;
  }

 private:
  // model.layers[1] as inputs are named: model.layers.1
  static std::string dotted(const std::string& path) {
    std::string out;
    for (char c : path) {
      if (c == '[') out += '.';
      if (c != '[' && c != ']') out += c;
    }
    return out;
  }
  const Tape& t_;
  std::map<std::string, const Scope*> by_name_;
};

// The key of the place of `op`: its layer by path (or form and line), else its line.
std::string place_key(const Layers& layers, const Op& op) {
  const Tape& t = layers.tape();
  if (const Scope* s = layers.of(op))
    return "layer " + (s->path.empty() ? s->layer + " " + t.loc_str(s->made) : s->path);
  std::string loc = t.loc_str(op.loc);
  if (loc.empty()) loc = op.kind == OpKind::input ? "(inputs)" : "(no source line)";
  return loc;
}

void note_layer(PlaceChanges& r, const Layers& layers, const Op* op, std::string* form) {
  const Scope* s = op != nullptr ? layers.of(*op) : nullptr;
  if (s == nullptr) return;
  const Tape& t = layers.tape();
  r.layer = true;
  r.path = s->path;
  *form = s->layer;
  if (r.made.empty()) r.made = t.loc_str(s->made);
}

std::vector<PlaceChanges> by_place(const Tape& a, const Tape& b, const TapeDiff& d) {
  std::vector<PlaceChanges> rows;
  std::map<std::string, size_t> index;
  const Layers layers_a(a), layers_b(b);
  for (const OpChange& c : d.ops) {
    const Op* oa = c.a != kNoIndex ? &a.ops[c.a] : nullptr;
    const Op* ob = c.b != kNoIndex ? &b.ops[c.b] : nullptr;
    std::string key = ob != nullptr ? place_key(layers_b, *ob) : place_key(layers_a, *oa);
    auto [it, fresh] = index.try_emplace(key, rows.size());
    if (fresh) rows.push_back({.where = key});
    PlaceChanges& r = rows[it->second];
    if (r.layer_b.empty()) note_layer(r, layers_b, ob, &r.layer_b);
    if (r.layer_a.empty()) note_layer(r, layers_a, oa, &r.layer_a);
    r.changed += c.change == Change::changed;
    r.added += c.change == Change::added;
    r.removed += c.change == Change::removed;
    if (oa != nullptr) r.before.insert(std::string(diff_op_name(*oa)));
    if (ob != nullptr) r.after.insert(std::string(diff_op_name(*ob)));
    if (r.first.empty()) r.first = ob != nullptr ? print_op(b, *ob) : print_op(a, *oa);
  }
  return rows;
}

// A layer as `path: form`, its form in A then B where they differ, and its own line.
std::string place_text(const PlaceChanges& r) {
  if (!r.layer) return code(r.where);
  const std::string& form = r.layer_a.empty() ? r.layer_b : r.layer_a;
  std::string out = code(r.path.empty() ? form : r.path + ": " + form);
  if (!r.layer_a.empty() && !r.layer_b.empty() && r.layer_a != r.layer_b)
    out += " → " + code(r.layer_b);
  if (!r.made.empty()) out += " at " + code(r.made);
  return out;
}

std::string names(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& n : s) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "-" : out;
}

std::string summary_table(const DiffLabels& labels, const TapeFigures& fa, const TapeFigures& fb) {
  std::string out = fmt::format("| | {} | {} | change |\n| --- | ---: | ---: | ---: |\n",
                                code(labels.a), code(labels.b));
  auto row = [&](std::string_view what, double x, double y, bool percent, bool bytes) {
    auto shown = [&](double v) {
      return !bytes              ? short_number(v)
             : std::abs(v) < 1e3 ? fmt::format("{:g} B", v)
                                 : short_number(v) + "B";
    };
    out +=
        fmt::format("| {} | {} | {} | {} |\n", what, shown(x), shown(y), change_str(x, y, percent));
  };
  row("ops", static_cast<double>(fa.ops), static_cast<double>(fb.ops), false, false);
  row("FLOPs", fa.flops, fb.flops, true, false);
  row("parameters", static_cast<double>(fa.parameters), static_cast<double>(fb.parameters), false,
      false);
  if (fa.memory >= 0 && fb.memory >= 0) {
    row("memory (plan)", static_cast<double>(fa.memory), static_cast<double>(fb.memory), true,
        true);
  }
  return out;
}

// A whole decimal number such as 5 or 2.5.
bool parse_percent(std::string_view text, double* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

TapeFigures tape_figures(const TapeStats& s, int64_t plan_bytes) {
  return {s.calls, s.flops, s.parameters, plan_bytes};
}

std::string diff_markdown(const Tape& a, const Tape& b, const TapeDiff& d, const DiffLabels& labels,
                          const TapeFigures& fa, const TapeFigures& fb) {
  std::string out = fmt::format("### ytape diff {} → {}\n\n", code(labels.a), code(labels.b));
  out += summary_table(labels, fa, fb) + "\n";
  if (d.same()) return out + "No difference in what the tapes compute.\n";
  std::vector<PlaceChanges> rows = by_place(a, b, d);
  auto layers = std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.layer; });
  auto lines = static_cast<int64_t>(rows.size()) - layers;
  std::string places = layers == 0 ? ""
                       : lines == 0
                           ? fmt::format(" in {} layer{}", layers, layers == 1 ? "" : "s")
                           : fmt::format(" in {} layer{} and", layers, layers == 1 ? "" : "s");
  if (lines > 0) {
    places += fmt::format(" at {}{} source line{}", lines, layers > 0 ? " other" : "",
                          lines == 1 ? "" : "s");
  }
  out +=
      fmt::format("**{} op change{}{}**\n\n", d.ops.size(), d.ops.size() == 1 ? "" : "s", places);
  out += "| where | changed | added | removed | before | after | first op |\n";
  out += "| --- | ---: | ---: | ---: | --- | --- | --- |\n";
  for (const PlaceChanges& r : rows) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", place_text(r), r.changed, r.added,
                       r.removed, names(r.before), names(r.after), code(r.first));
  }
  if (!d.outputs.empty()) {
    out += "\n**Outputs that differ:** ";
    std::string list;
    for (const OutputChange& c : d.outputs) {
      const std::string& name = c.b != kNoIndex ? b.outputs[c.b].name : a.outputs[c.a].name;
      list += (list.empty() ? "" : ", ") + code(name);
    }
    out += list + "\n";
  }
  return out;
}

FailOn parse_fail_on(std::string_view spec) {
  FailOn f;
  const std::vector<std::string> known = {"ops", "params", "flops", "memory"};
  for (size_t at = 0; at <= spec.size();) {
    size_t end = std::min(spec.find(',', at), spec.size());
    std::string_view item = spec.substr(at, end - at);
    at = end + 1;
    if (item.empty()) continue;
    size_t gt = item.find('>');
    std::string word(item.substr(0, gt));
    double limit = 0;
    if (gt != std::string_view::npos) {
      std::string_view pct = item.substr(gt + 1);
      if (pct.empty() || pct.back() != '%' || (word != "flops" && word != "memory") ||
          !parse_percent(pct.substr(0, pct.size() - 1), &limit) || limit < 0) {
        user_error(
            "--fail-on: '{}' is not a condition: give flops>P% or memory>P% (P a "
            "percent, such as 5%)",
            printable(item));
      }
    }
    if (word == "ops") {
      f.ops = true;
    } else if (word == "params") {
      f.params = true;
    } else if (word == "flops") {
      f.flops = limit;
    } else if (word == "memory") {
      f.memory = limit;
    } else {
      user_error("--fail-on: unknown condition '{}' (ops, params, flops[>P%], memory[>P%]){}",
                 printable(word), did_you_mean(word, known));
    }
  }
  return f;
}

std::vector<std::string> failed_conditions(const FailOn& f, const TapeDiff& d,
                                           const TapeFigures& fa, const TapeFigures& fb) {
  std::vector<std::string> failed;
  if (f.ops && !d.same()) {
    failed.push_back(fmt::format("{} op{} and {} output{} differ", d.ops.size(),
                                 d.ops.size() == 1 ? "" : "s", d.outputs.size(),
                                 d.outputs.size() == 1 ? "" : "s"));
  }
  if (f.params && fa.parameters != fb.parameters) {
    failed.push_back(
        fmt::format("parameters {} -> {}", grouped(fa.parameters), grouped(fb.parameters)));
  }
  auto check = [&](std::string_view what, double limit, double x, double y) {
    if (limit < 0 || x == y) return;
    double pct = x != 0 ? 100 * std::abs(y - x) / x : INFINITY;
    if (pct > limit) {
      failed.push_back(fmt::format("{} {}, more than {:g}%", what, change_str(x, y, true), limit));
    }
  };
  check("FLOPs", f.flops, fa.flops, fb.flops);
  if (fa.memory >= 0 && fb.memory >= 0) {
    check("memory", f.memory, static_cast<double>(fa.memory), static_cast<double>(fb.memory));
  }
  return failed;
}

}  // namespace ytape
