#include "inspect/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "tape/cost.h"
#include "tape/op_attrs.h"
#include "tape/strings.h"

namespace ytape {

namespace {

int64_t bytes_of(const Type& t) {
  return t.size() * dtype_size(t.dtype);
}

// 1536 as "1.5 KiB"; below 1 KiB in bytes.
std::string human_bytes(int64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, units[u]);
}

// 2.3e9 as "2.30 G".
std::string human_count(double n) {
  const char* units[] = {"", " k", " M", " G", " T", " P"};
  int u = 0;
  while (n >= 1000 && u < 5) {
    n /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f}", n) : fmt::format("{:.2f}{}", n, units[u]);
}

std::string plural(int64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string grouped_flops(double f) {
  return f < 9e18 ? grouped(static_cast<int64_t>(std::llround(f))) : fmt::format("{:.3g}", f);
}

}  // namespace

std::string grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

TapeStats tape_stats(const Tape& t) {
  TapeStats s;
  s.name = t.name;
  std::vector<PrimStats> by_prim(kNumPrims + 1);  // the last one: constants
  std::unordered_map<std::string, size_t> group_of;
  for (const Op& op : t.ops) {
    switch (op.kind) {
      case OpKind::input: {
        ++s.inputs;
        const Type& type = t.type(op.outs[0]);
        s.input_bytes += bytes_of(type);
        if (!is_float(type.dtype)) break;
        s.parameters += type.size();
        std::string prefix(op.name.view().substr(0, op.name.view().find('.')));
        auto [it, fresh] = group_of.try_emplace(prefix, s.groups.size());
        if (fresh) s.groups.push_back({prefix});
        ++s.groups[it->second].inputs;
        s.groups[it->second].elements += type.size();
        break;
      }
      case OpKind::constant:
        ++s.constants;
        s.constant_bytes += bytes_of(t.type(op.outs[0]));
        by_prim[kNumPrims].name = "const";
        ++by_prim[kNumPrims].ops;
        break;
      case OpKind::call: {
        ++s.calls;
        PrimStats& p = by_prim[static_cast<size_t>(op.prim)];
        p.name = prim_name(op.prim);
        ++p.ops;
        double f = op_flops(t, op);
        p.flops += f;
        s.flops += f;
        if (op.prim == Prim::scan && skips_steps(attrs_of<Prim::scan>(op.attrs)))
          s.skipping_scans = true;
        break;
      }
    }
  }
  // Outputs that are inputs or constants take no new memory; one computed twice counts once.
  std::vector<bool> computed(t.types.size(), false);
  for (const Op& op : t.ops) {
    if (op.kind == OpKind::call) {
      for (Var v : op.outs) computed[v.id] = true;
    }
  }
  for (const Output& o : t.outputs) {
    ++s.outputs;
    if (computed[o.var.id]) s.output_bytes += bytes_of(t.type(o.var));
    computed[o.var.id] = false;
  }
  for (const PrimStats& p : by_prim) {
    if (p.ops > 0) s.prims.push_back(p);
  }
  std::stable_sort(s.prims.begin(), s.prims.end(), [](const PrimStats& x, const PrimStats& y) {
    return x.flops != y.flops ? x.flops > y.flops : x.ops > y.ops;
  });
  return s;
}

std::string stats_str(const TapeStats& s, int64_t plan_bytes) {
  std::string out = fmt::format("tape {}: {}, {}, {}, {}\n", s.name, plural(s.inputs, "input"),
                                plural(s.constants, "constant"), plural(s.calls, "call"),
                                plural(s.outputs, "output"));
  size_t width = std::string_view("primitive").size();
  for (const PrimStats& p : s.prims) width = std::max(width, p.name.size());
  std::string total_flops = grouped_flops(s.flops);
  size_t flops_width = std::max<size_t>(total_flops.size(), 5);
  out += fmt::format("\n{:<{}}  {:>7}  {:>{}}  {:>6}\n", "primitive", width, "ops", "FLOPs",
                     flops_width, "share");
  auto share = [&](double f) {
    return s.flops > 0 ? fmt::format("{:.1f}%", 100 * f / s.flops) : std::string("-");
  };
  for (const PrimStats& p : s.prims) {
    out += fmt::format("{:<{}}  {:>7}  {:>{}}  {:>6}\n", p.name, width, grouped(p.ops),
                       grouped_flops(p.flops), flops_width, share(p.flops));
  }
  out +=
      fmt::format("{:<{}}  {:>7}  {:>{}}  {}FLOP\n", "total", width, grouped(s.constants + s.calls),
                  total_flops, flops_width, human_count(s.flops) + (s.flops >= 1000 ? "" : " "));
  for (const PrimStats& p : s.prims) {
    if (p.name == prim_name(Prim::while_loop)) {
      out +=
          "(while_loop: FLOPs per trip, its cond and body once; how many trips it takes is "
          "known when it runs)\n";
    }
  }
  if (s.skipping_scans) {
    out +=
        "(scan: one that may skip steps, as a while_loop's gradient does, is counted at its "
        "length: an upper bound)\n";
  }
  out += fmt::format("\nparameters (elements of float inputs): {}", grouped(s.parameters));
  if (s.parameters >= 1000)
    out += fmt::format(" ({})", human_count(static_cast<double>(s.parameters)));
  out += '\n';
  for (const ParamGroup& g : s.groups) {
    out += fmt::format("  {:<{}}  {:>13}  {}\n", g.prefix, width - 2, grouped(g.elements),
                       plural(g.inputs, "input"));
  }
  out += fmt::format("\n{:<38}{:>15}\n", "memory", "bytes");
  auto line = [&](std::string_view what, int64_t n) {
    out += fmt::format("  {:<36}{:>15}  {}\n", what, grouped(n), human_bytes(n));
  };
  if (plan_bytes >= 0) line("intermediate buffers (runtime plan)", plan_bytes);
  line("inputs", s.input_bytes);
  line("constants", s.constant_bytes);
  line("outputs", s.output_bytes);
  if (plan_bytes >= 0) {
    line("total", plan_bytes + s.input_bytes + s.constant_bytes + s.output_bytes);
  }
  return printable_lines(out);  // the tape's name comes from its file
}

}  // namespace ytape
