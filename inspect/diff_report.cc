// The three forms of a diff report: text, per-primitive counts and JSON.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "inspect/diff.h"
#include "tape/print.h"
#include "tape/strings.h"

namespace ytape {

namespace {

// An op as `ytape show` prints it, with its location in the files of `root` (the tape
// `t` is, or the tape whose region it is).
std::string op_line(const Tape& t, size_t index, const Tape& root) {
  const Op& op = t.ops[index];
  std::string line = print_op(t, op);
  std::string loc = root.where_str(op.loc);
  if (!loc.empty()) line += "  # " + loc;
  return line;
}

std::string output_line(const Tape& t, size_t index) {
  const Output& o = t.outputs[index];
  return fmt::format("out {} {}", var_str(o.var), o.name);
}

// The names of the outputs both tapes have, in the order of `t`.
std::string common_outputs(const Tape& t, const Tape& other) {
  std::string names;
  for (const Output& o : t.outputs) {
    bool common = std::any_of(other.outputs.begin(), other.outputs.end(),
                              [&](const Output& p) { return p.name == o.name; });
    if (!common) continue;
    if (!names.empty()) names += ", ";
    names += o.name;
  }
  return names;
}

// What `--stat` and the JSON's "stat" count an op as: its primitive, "input" or "const".
std::string_view row_name(const Op& op) {
  switch (op.kind) {
    case OpKind::input:
      return "input";
    case OpKind::constant:
      return "const";
    case OpKind::call:
      return prim_name(op.prim);
  }
  return {};
}

size_t row_index(const Op& op) {
  switch (op.kind) {
    case OpKind::input:
      return 0;
    case OpKind::constant:
      return 1;
    case OpKind::call:
      return 2 + static_cast<size_t>(op.prim);
  }
  return 0;
}

struct StatRow {
  std::string_view name;
  int64_t removed = 0, added = 0;
};

struct Summary {
  int64_t changed = 0, added = 0, removed = 0;
};

// Removed and added ops per row, in the order input, const, then ops.def; a changed op
// counts as one of each.
std::vector<StatRow> stat_rows(const Tape& a, const Tape& b, const TapeDiff& d, Summary* sum) {
  std::vector<StatRow> rows(2 + kNumPrims);
  for (const OpChange& c : d.ops) {
    if (c.a != kNoIndex) {
      const Op& op = a.ops[c.a];
      rows[row_index(op)].name = row_name(op);
      ++rows[row_index(op)].removed;
    }
    if (c.b != kNoIndex) {
      const Op& op = b.ops[c.b];
      rows[row_index(op)].name = row_name(op);
      ++rows[row_index(op)].added;
    }
    switch (c.change) {
      case Change::changed:
        ++sum->changed;
        break;
      case Change::added:
        ++sum->added;
        break;
      case Change::removed:
        ++sum->removed;
        break;
    }
  }
  std::erase_if(rows, [](const StatRow& r) { return r.removed == 0 && r.added == 0; });
  return rows;
}

std::string yield_line(const Tape& region) {
  std::string line = "yield";
  for (size_t i = 0; i < region.outputs.size(); ++i) {
    line += (i > 0 ? ", " : " ") + var_str(region.outputs[i].var);
  }
  return line;
}

// For each var of `t`, the index of the op that defines it.
std::vector<size_t> defining_ops(const Tape& t) {
  std::vector<size_t> op_of(t.types.size(), kNoIndex);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    for (Var v : t.ops[i].outs) op_of[v.id] = i;
  }
  return op_of;
}

// Whether region `rb` yields, position by position, what `ra` yields: values of aligned ops.
// (Yields have no names, which the tape diff matches outputs by.)
bool same_yields(const Tape& ra, const Tape& rb, const TapeDiff& d) {
  if (ra.outputs.size() != rb.outputs.size()) return false;
  std::vector<size_t> in_a = defining_ops(ra), in_b = defining_ops(rb);
  for (size_t i = 0; i < ra.outputs.size(); ++i) {
    Var x = ra.outputs[i].var, y = rb.outputs[i].var;
    const Op& op = rb.ops[in_b[y.id]];
    size_t k = std::find(op.outs.begin(), op.outs.end(), y) - op.outs.begin();
    size_t aligned = d.a_of_b[in_b[y.id]];
    if (aligned != in_a[x.id] || ra.ops[aligned].outs[k] != x) return false;
  }
  return true;
}

// The changes of a changed op's regions, each under a line naming its path ("scan %4 ·
// body"), `indent` deeper per level: a region is diffed as a tape, so its renumbering alone
// is no change either.
void region_changes(std::string& out, const Tape& a, const Op& x, const Tape& b, const Op& y,
                    const std::string& path, const std::string& indent) {
  if (x.regions.size() != y.regions.size()) return;  // the op lines show it
  for (size_t k = 0; k < x.regions.size(); ++k) {
    const Tape &ra = x.regions[k], &rb = y.regions[k];
    TapeDiff d = diff_tapes(ra, rb);
    bool yields = !same_yields(ra, rb, d);
    if (d.ops.empty() && !yields) continue;
    std::string here = fmt::format("{} · {}", path, rb.name);
    out += fmt::format("{}{}:\n", indent, here);
    for (const OpChange& c : d.ops) {
      if (c.a != kNoIndex) out += indent + "- " + op_line(ra, c.a, a) + "\n";
      if (c.b != kNoIndex) out += indent + "+ " + op_line(rb, c.b, b) + "\n";
      if (c.a != kNoIndex && c.b != kNoIndex) {
        const Op& op = rb.ops[c.b];
        region_changes(out, a, ra.ops[c.a], b, op,
                       fmt::format("{} · {} {}", here, prim_name(op.prim), var_str(op.outs[0])),
                       indent + "  ");
      }
    }
    if (yields)
      out += fmt::format("{}- {}\n{}+ {}\n", indent, yield_line(ra), indent, yield_line(rb));
  }
}

std::string plural(int64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string json_op(const Tape& t, size_t index) {
  const Op& op = t.ops[index];
  std::string outs;
  for (Var v : op.outs) outs += fmt::format("{}{}", outs.empty() ? "" : ",", v.id + 1);
  std::string out = fmt::format("{{\"index\":{},\"out\":[{}],\"op\":{},\"text\":{}", index + 1,
                                outs, quoted(row_name(op)), quoted(print_op(t, op)));
  std::string loc = t.loc_str(op.loc);
  if (!loc.empty()) out += ",\"loc\":" + quoted(loc);
  if (const Scope* s = t.scope_of(op.loc)) out += ",\"layer\":" + quoted(s->title());
  return out + "}";
}

std::string json_output(const Tape& t, size_t index) {
  const Output& o = t.outputs[index];
  return fmt::format("{{\"var\":{},\"name\":{}}}", o.var.id + 1, quoted(o.name));
}

std::string json_change(Change c) {
  switch (c) {
    case Change::removed:
      return "\"removed\"";
    case Change::added:
      return "\"added\"";
    case Change::changed:
      return "\"changed\"";
  }
  return {};
}

std::string json_optional(const std::optional<std::string>& s) {
  return s ? quoted(*s) : "null";
}

// One line per element of `items`, each made by `line`, joined as the canonical tape JSON
// joins ops.
template <typename T, typename F>
std::string json_lines(const std::vector<T>& items, F line) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += line(items[i]) + (i + 1 < items.size() ? ",\n" : "\n");
  return out;
}

}  // namespace

std::string diff_str(const Tape& a, const Tape& b, const TapeDiff& d, const DiffLabels& labels) {
  if (d.same() && !d.name_differs && d.meta.empty()) return {};
  std::string out = fmt::format("--- {}\n+++ {}\n", labels.a, labels.b);
  if (d.name_differs) out += fmt::format("- tape {}\n+ tape {}\n", a.name, b.name);
  for (const MetaChange& m : d.meta) {
    if (m.a) out += fmt::format("- meta {} = {}\n", m.key, quoted(*m.a));
    if (m.b) out += fmt::format("+ meta {} = {}\n", m.key, quoted(*m.b));
  }
  for (const OpChange& c : d.ops) {
    if (c.a != kNoIndex) out += "- " + op_line(a, c.a, a) + "\n";
    if (c.b != kNoIndex) out += "+ " + op_line(b, c.b, b) + "\n";
    if (c.a != kNoIndex && c.b != kNoIndex && !b.ops[c.b].regions.empty()) {
      const Op& op = b.ops[c.b];
      region_changes(out, a, a.ops[c.a], b, op,
                     fmt::format("{} {}", prim_name(op.prim), var_str(op.outs[0])), "  ");
    }
  }
  for (const OutputChange& c : d.outputs) {
    if (c.a != kNoIndex) out += "- " + output_line(a, c.a) + "\n";
    if (c.b != kNoIndex) out += "+ " + output_line(b, c.b) + "\n";
  }
  if (d.outputs_reordered) {
    out += fmt::format("- outputs {}\n+ outputs {}\n", common_outputs(a, b), common_outputs(b, a));
  }
  return printable_lines(out);  // names and file names come from the tapes
}

std::string diff_stat(const Tape& a, const Tape& b, const TapeDiff& d) {
  if (d.same()) return {};
  Summary sum;
  std::vector<StatRow> rows = stat_rows(a, b, d, &sum);
  int64_t out_removed = 0, out_added = 0;
  for (const OutputChange& c : d.outputs) {
    out_removed += c.a != kNoIndex;
    out_added += c.b != kNoIndex;
  }
  if (out_removed + out_added > 0) rows.push_back({"output", out_removed, out_added});
  size_t width = std::string_view("primitive").size();
  for (const StatRow& r : rows) width = std::max(width, r.name.size());
  std::string out = fmt::format("{:<{}}  removed  added\n", "primitive", width);
  for (const StatRow& r : rows)
    out += fmt::format("{:<{}}  {:>7}  {:>5}\n", r.name, width, r.removed, r.added);
  out += fmt::format("{} changed, {} added, {} removed", plural(sum.changed, "op"), sum.added,
                     sum.removed);
  if (!d.outputs.empty()) {
    out += fmt::format("; {} {}", plural(static_cast<int64_t>(d.outputs.size()), "output"),
                       d.outputs.size() == 1 ? "differs" : "differ");
  }
  if (d.outputs_reordered) out += "; outputs reordered";
  return out + "\n";
}

namespace {

// The "meta", "ops" and "outputs" lists of the JSON report, one difference per line.
std::string diff_lists_json(const Tape& a, const Tape& b, const TapeDiff& d) {
  std::string out;
  out += "\"meta\":[\n" +
         json_lines(d.meta,
                    [](const MetaChange& m) {
                      return fmt::format("{{\"key\":{},\"a\":{},\"b\":{}}}", quoted(m.key),
                                         json_optional(m.a), json_optional(m.b));
                    }) +
         "],\n";
  out += "\"ops\":[\n" +
         json_lines(d.ops,
                    [&](const OpChange& c) {
                      std::string line = "{\"change\":" + json_change(c.change);
                      if (c.a != kNoIndex) line += ",\"a\":" + json_op(a, c.a);
                      if (c.b != kNoIndex) line += ",\"b\":" + json_op(b, c.b);
                      return line + "}";
                    }) +
         "],\n";
  out += "\"outputs\":[\n" +
         json_lines(d.outputs,
                    [&](const OutputChange& c) {
                      std::string line = "{\"change\":" + json_change(c.change);
                      if (c.a != kNoIndex) line += ",\"a\":" + json_output(a, c.a);
                      if (c.b != kNoIndex) line += ",\"b\":" + json_output(b, c.b);
                      return line + "}";
                    }) +
         "],\n";
  return out;
}

}  // namespace

std::string_view diff_op_name(const Op& op) {
  return row_name(op);
}

std::string diff_json(const Tape& a, const Tape& b, const TapeDiff& d, const DiffLabels& labels,
                      bool stat_only) {
  Summary sum;
  std::vector<StatRow> rows = stat_rows(a, b, d, &sum);
  std::string out =
      fmt::format("{{\"format\":\"ytape-diff\",\"version\":1,\"same\":{},\"a\":{},\"b\":{},\n",
                  d.same(), quoted(labels.a), quoted(labels.b));
  out += fmt::format(
      "\"summary\":{{\"changed\":{},\"added\":{},\"removed\":{},\"outputs\":{},"
      "\"outputs_reordered\":{}}},\n",
      sum.changed, sum.added, sum.removed, d.outputs.size(), d.outputs_reordered);
  out += fmt::format("\"name\":{{\"a\":{},\"b\":{}}},\n", quoted(a.name), quoted(b.name));
  if (!stat_only) out += diff_lists_json(a, b, d);
  out += "\"stat\":[\n" +
         json_lines(rows,
                    [](const StatRow& r) {
                      return fmt::format("{{\"op\":{},\"removed\":{},\"added\":{}}}",
                                         quoted(r.name), r.removed, r.added);
                    }) +
         "]}\n";
  return out;
}

}  // namespace ytape
