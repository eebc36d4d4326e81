#include "runtime/trace_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "runtime/plan_print.h"
#include "tape/cost.h"
#include "tape/print.h"

namespace ytape {

namespace {

using Json = nlohmann::ordered_json;

// What a step's event says of it, made once per step of each plan.
struct StepInfo {
  std::string name, category;
  Json args;
};

int64_t step_bytes(const Tape& t, const PlannedStep& s) {
  int64_t bytes = 0;
  for (const VarList* vars : {&s.args, &s.outs}) {
    for (Var v : *vars) bytes += t.type(v).size() * dtype_size(t.type(v).dtype);
  }
  return bytes;
}

std::vector<StepInfo> step_infos(const Plan& p, const Tape& root) {
  std::vector<StepInfo> infos;
  const Tape& t = *p.tape;
  for (const PlannedStep& s : planned_steps(p)) {
    std::string loc = root.loc_str(s.op->loc);
    double flops = op_flops(t, *s.op);
    for (const Op* f : s.fused) flops += op_flops(t, *f);
    Json args = {{"op", print_op(t, *s.op)},
                 {"kernel", s.kernel},
                 {"layouts", layouts_str(s.reads) + " -> " + layouts_str(s.writes)},
                 {"bytes", step_bytes(t, s)},
                 {"flops", static_cast<int64_t>(flops)}};
    // A category holds no commas: the format splits categories at them.
    std::replace(loc.begin(), loc.end(), ',', ';');
    infos.push_back({std::string(s.name), loc.empty() ? "tape" : loc, std::move(args)});
  }
  return infos;
}

// Per step of `p`: the bytes of the slots live while it runs (a slot lives from the first
// step that writes or reads a value in it to the last; work memory for its step alone).
std::vector<int64_t> live_bytes(const Plan& p) {
  const size_t n = p.steps.size();
  std::vector<int64_t> first(p.slot_bytes.size(), static_cast<int64_t>(n)),
      last(p.slot_bytes.size(), -1);
  auto touch = [&](int slot, size_t s) {
    if (slot < 0) return;
    first[slot] = std::min(first[slot], static_cast<int64_t>(s));
    last[slot] = std::max(last[slot], static_cast<int64_t>(s));
  };
  for (size_t s = 0; s < n; ++s) {
    for (Var v : p.args(p.steps[s])) touch(p.slot_of[v.id], s);
    for (Var v : p.outs(p.steps[s])) touch(p.slot_of[v.id], s);
    touch(p.steps[s].workspace_slot, s);
  }
  std::vector<int64_t> delta(n + 1, 0), live(n, 0);
  for (size_t k = 0; k < p.slot_bytes.size(); ++k) {
    if (last[k] < 0) continue;
    delta[first[k]] += p.slot_bytes[k];
    delta[last[k] + 1] -= p.slot_bytes[k];
  }
  int64_t sum = 0;
  for (size_t s = 0; s < n; ++s) live[s] = sum += delta[s];
  return live;
}

Json complete(std::string_view name, std::string_view category, double start, double seconds,
              double origin) {
  return Json{
      {"name", name},         {"cat", category}, {"ph", "X"}, {"ts", (start - origin) * 1e6},
      {"dur", seconds * 1e6}, {"pid", 1},        {"tid", 1}};
}

// The metadata events that name process 1 and its lane 1, as a trace's first events.
Json named_lane(std::string_view process, std::string_view lane) {
  Json trace = Json::array();
  trace.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", process}}}});
  trace.push_back(
      {{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", lane}}}});
  return trace;
}

}  // namespace

std::string chrome_trace(const Executor& e, std::span<const StepEvent> events,
                         std::span<const TracedRun> runs, std::string_view process) {
  double origin = runs.empty() ? 0 : runs.front().start;
  for (const StepEvent& ev : events) origin = std::min(origin, ev.start);
  Json trace = named_lane(process, "steps (each runs on all threads)");
  for (size_t r = 0; r < runs.size(); ++r) {
    trace.push_back(
        complete(fmt::format("run {}", r + 1), "run", runs[r].start, runs[r].seconds, origin));
  }
  std::map<const Executor*, std::vector<StepInfo>> infos;  // per executor, made on first use
  const std::vector<int64_t> live = live_bytes(e.plan());
  std::vector<const StepEvent*> order;
  for (const StepEvent& ev : events) order.push_back(&ev);
  std::stable_sort(order.begin(), order.end(),
                   [](const StepEvent* a, const StepEvent* b) { return a->start < b->start; });
  for (const StepEvent* ev : order) {
    auto [it, fresh] = infos.try_emplace(ev->executor);
    if (fresh) it->second = step_infos(ev->executor->plan(), e.tape());
    const StepInfo& info = it->second.at(ev->step);
    Json event = complete(info.name, info.category, ev->start, ev->seconds, origin);
    event["args"] = info.args;
    trace.push_back(std::move(event));
    if (ev->executor == &e) {
      trace.push_back({{"name", "memory"},
                       {"ph", "C"},
                       {"ts", (ev->start - origin) * 1e6},
                       {"pid", 1},
                       {"args", {{"planned buffers (bytes)", live.at(ev->step)}}}});
    }
  }
  Json doc = {{"traceEvents", std::move(trace)}, {"displayTimeUnit", "ms"}};
  return doc.dump() + "\n";
}

std::string phases_trace(std::span<const TracePhase> phases, std::string_view process) {
  Json trace = named_lane(process, "phases");
  for (const TracePhase& p : phases) {
    Json event = complete(p.name, "phase", p.start, p.seconds, 0);
    Json args = Json::object();
    for (const auto& [key, n] : p.counts) args[key] = n;
    event["args"] = std::move(args);
    trace.push_back(std::move(event));
  }
  Json doc = {{"traceEvents", std::move(trace)}, {"displayTimeUnit", "ms"}};
  return doc.dump() + "\n";
}

}  // namespace ytape
