// Traces a viewer opens (runtime/trace_events.h): the Chrome trace event format's JSON
// object form, checked field by field against the format's documented schema (Trace Event
// Format: complete events "X" with ts and dur in microseconds, counters "C", metadata "M"),
// a step per executed step, a region's steps inside their op's, times that add up.
#include "runtime/trace_events.h"

#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "runtime/profile.h"
#include "unit/runtime/scan_cases.h"

namespace ytape {
namespace {

using Json = nlohmann::json;

// Runs `t` `runs` times traced, and returns the trace parsed.
Json traced(const Tape& t, const TensorMap& inputs, int runs, const Executor** kept = nullptr) {
  static std::vector<std::unique_ptr<Executor>> alive;  // the trace names their plans
  alive.push_back(std::make_unique<Executor>(t));
  Executor& e = *alive.back();
  std::vector<StepEvent> events;
  std::vector<TracedRun> timed;
  auto origin = std::chrono::steady_clock::now();
  e.set_trace(&events, origin);
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    e.run(inputs);
    auto end = std::chrono::steady_clock::now();
    timed.push_back({std::chrono::duration<double>(start - origin).count(),
                     std::chrono::duration<double>(end - start).count()});
  }
  if (kept != nullptr) *kept = &e;
  return Json::parse(chrome_trace(e, events, timed, "t.json"));
}

void check_schema(const Json& doc) {
  REQUIRE(doc.is_object());
  REQUIRE(doc.at("traceEvents").is_array());
  CHECK(doc.at("displayTimeUnit") == "ms");
  for (const Json& ev : doc.at("traceEvents")) {
    CAPTURE(ev.dump());
    REQUIRE(ev.at("name").is_string());
    std::string ph = ev.at("ph");
    CHECK(ev.at("pid").is_number_integer());
    if (ph == "X") {
      CHECK(ev.at("cat").is_string());
      CHECK(ev.at("ts").is_number());
      CHECK(ev.at("dur").is_number());
      CHECK(ev.at("dur").get<double>() >= 0);
      CHECK(ev.at("tid").is_number_integer());
    } else if (ph == "C") {
      CHECK(ev.at("ts").is_number());
      REQUIRE(ev.at("args").is_object());
      for (const auto& [k, v] : ev.at("args").items()) CHECK(v.is_number());
    } else {
      CHECK(ph == "M");
      CHECK(ev.at("args").at("name").is_string());
    }
  }
}

TEST_CASE("a trace has an event per step, nested in its run, adding up to the run") {
  Tape t = testing::unrolled_rnn(3);
  const Executor* e = nullptr;
  Json doc = traced(t, testing::rnn_inputs(3, 5), 2, &e);
  check_schema(doc);
  std::vector<Json> runs, steps, counters;
  for (const Json& ev : doc.at("traceEvents")) {
    if (ev.at("ph") == "C") counters.push_back(ev);
    if (ev.at("ph") != "X") continue;
    (ev.at("cat") == "run" ? runs : steps).push_back(ev);
  }
  REQUIRE(runs.size() == 2);
  CHECK(steps.size() == 2 * e->plan().steps.size());
  CHECK(counters.size() == steps.size());
  for (const Json& run : runs) {
    double begin = run.at("ts"), end = begin + run.at("dur").get<double>(), sum = 0;
    for (const Json& s : steps) {
      double at = s.at("ts");
      if (at < begin || at > end) continue;
      CHECK(at + s.at("dur").get<double>() <= end + 1);  // within the run (1 µs of rounding)
      sum += s.at("dur").get<double>();
    }
    CHECK(sum <= run.at("dur").get<double>() + 1);
  }
  // Each step says what it ran.
  const Json& matmul = *std::find_if(steps.begin(), steps.end(),
                                     [](const Json& s) { return s.at("name") == "matmul"; });
  CHECK(matmul.at("args").at("flops") == 2 * 4 * 4);
  CHECK(matmul.at("args").at("bytes") == (16 + 4 + 4) * 4);
  CHECK(matmul.at("args").at("op").get<std::string>().find("matmul(") != std::string::npos);
  CHECK(matmul.at("args").at("layouts") == "plain plain -> plain");
  CHECK(!matmul.at("args").at("kernel").get<std::string>().empty());
}

TEST_CASE("a scan's body steps are traced inside the scan's step, each trip") {
  Tape t = testing::rnn(4);
  Json doc = traced(t, testing::rnn_inputs(4, 9), 1);
  check_schema(doc);
  const Json* scan = nullptr;
  std::vector<const Json*> inner;
  for (const Json& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "X") continue;
    if (ev.at("name") == "scan") scan = &ev;
    if (ev.at("name") == "matmul") inner.push_back(&ev);
  }
  REQUIRE(scan != nullptr);
  REQUIRE(inner.size() == 4);  // one per trip
  double begin = scan->at("ts"), end = begin + scan->at("dur").get<double>();
  for (const Json* ev : inner) {
    CHECK(ev->at("ts").get<double>() >= begin - 1);
    CHECK(ev->at("ts").get<double>() <= end + 1);
  }
}

TEST_CASE("profile_by_line counts a region's steps at their lines, the loop's rest at its own") {
  Tape t = testing::rnn(4);
  Executor e(t);
  e.set_profiling(true);
  e.run(testing::rnn_inputs(4, 9));
  std::string table = profile_by_line(e, 1);
  CHECK(table.find("line") == 0);
  CHECK(table.find("total") != std::string::npos);
  CHECK(table.find("matmul") != std::string::npos);  // a body op, at its line ("-": none)
}

}  // namespace
}  // namespace ytape

namespace ytape {

TEST_CASE("a command's phases are complete events, their counts as args, passes inside") {
  std::vector<TracePhase> phases = {{"read", 0, 0.002, {}},
                                    {"opt", 0.002, 0.010, {{"ops before", 40}, {"ops after", 30}}},
                                    {"dce", 0.002, 0.004, {{"changed", 10}}},
                                    {"write", 0.012, 0.001, {}}};
  nlohmann::json doc = nlohmann::json::parse(phases_trace(phases, "ytape opt g.json"));
  check_schema(doc);
  std::vector<nlohmann::json> events;
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("ph") == "X") events.push_back(ev);
    if (ev.at("name") == "process_name") CHECK(ev.at("args").at("name") == "ytape opt g.json");
  }
  REQUIRE(events.size() == 4);
  CHECK(events[1].at("name") == "opt");
  CHECK(events[1].at("ts").get<double>() == doctest::Approx(2000));
  CHECK(events[1].at("dur").get<double>() == doctest::Approx(10000));
  CHECK(events[1].at("args").at("ops after") == 30);
  // The pass lies within "opt": a viewer nests it there.
  double start = events[2].at("ts"), end = start + events[2].at("dur").get<double>();
  CHECK(start >= events[1].at("ts").get<double>());
  CHECK(end <= events[1].at("ts").get<double>() + events[1].at("dur").get<double>());
}

}  // namespace ytape
