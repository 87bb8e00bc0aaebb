// Iterator::start_trace / write_trace: the Chrome trace of a running pipeline, parsed back and
// checked as Perfetto and chrome://tracing read it — every span complete, one named row per
// thread, spans in order on each row, every stage of the pipeline present with the items it
// handled — and bounded: past max_events spans are counted as dropped, not kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/dataset/dataset.h"
#include "sluice/graph/chrome_trace.h"
#include "tests/dataset/testing.h"
#include "tests/formats/testing.h"

namespace sluice {
namespace {

using nlohmann::json;
using testing::I;

class TraceTest : public testing::TempDirTest {
 protected:
  json read_trace(const std::string& name) { return json::parse(testing::read_file(path(name))); }
};

// range(200) -> map(2x, 2 parallel calls) -> prefetch(3) -> batch(10), on two threads.
Dataset traced_pipeline() {
  return Dataset::range(200)
      .map([](const Tensor& x) { return Tensor::scalar<int64_t>(2 * x.item<int64_t>()); },
           {.num_parallel_calls = 2})
      .prefetch(3)
      .batch(10);
}

std::vector<json> events_of(const json& trace, const std::string& phase) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == phase) out.push_back(e);
  }
  return out;
}

TEST_F(TraceTest, WritesAChromeTraceOfEveryStageOnTheThreadsThatRanIt) {
  Iterator it = traced_pipeline().make_iterator(testing::threads(2));
  it.start_trace();
  std::vector<int64_t> values;
  while (auto e = it.next()) {
    for (int64_t v : (*e)[0].values<int64_t>()) values.push_back(v);
  }
  ASSERT_EQ(values.size(), 200u);
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], 2 * int64_t(i));
  it.write_trace(path("trace.json"));

  const json trace = read_trace("trace.json");
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_EQ(trace.at("otherData").at("dropped_events"), 0);
  EXPECT_EQ(trace.at("otherData").at("max_events"), kDefaultTraceEvents);

  // Metadata: the process and every thread named.
  std::map<int64_t, std::string> thread_names;
  int process_names = 0;
  for (const json& m : events_of(trace, "M")) {
    EXPECT_EQ(m.at("pid"), 1);
    if (m.at("name") == "thread_name") {
      const std::string name = m.at("args").at("name");
      EXPECT_TRUE(thread_names.emplace(int64_t(m.at("tid")), name).second) << m;
    } else if (m.at("name") == "process_name") {
      ++process_names;
      EXPECT_EQ(m.at("args").at("name"), "sluice pipeline");
    }
  }
  EXPECT_EQ(process_names, 1);

  const std::vector<json> spans = events_of(trace, "X");
  EXPECT_EQ(int64_t(trace.at("otherData").at("recorded_events")), int64_t(spans.size()));
  std::map<int64_t, double> last_ts;     // Per thread.
  std::map<std::string, int64_t> items;  // Per "category/stage".
  std::set<std::string> threads_of_work, threads_of_map_input;
  for (const json& e : spans) {
    for (const char* key : {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}) {
      ASSERT_TRUE(e.contains(key)) << key << " missing in " << e;
    }
    ASSERT_TRUE(e.at("ts").is_number() && e.at("dur").is_number()) << e;
    EXPECT_GE(double(e.at("dur")), 0.0) << e;
    EXPECT_GE(double(e.at("ts")), 0.0) << e;
    EXPECT_EQ(e.at("pid"), 1);
    const int64_t tid = e.at("tid");
    ASSERT_TRUE(thread_names.count(tid)) << "no thread_name for tid " << tid;
    const double ts = e.at("ts");
    if (last_ts.count(tid)) {
      EXPECT_GE(ts, last_ts[tid]) << "spans out of order on tid " << tid;
    }
    last_ts[tid] = ts;
    const std::string cat = e.at("cat");
    const std::string name = e.at("name");
    if (cat == "wait") {
      EXPECT_TRUE(e.at("args").contains("stage")) << e;
      continue;
    }
    ASSERT_TRUE(cat == "stage" || cat == "take" || cat == "work") << e;
    items[cat + "/" + name] += int64_t(e.at("args").at("items"));
    if (cat == "work") threads_of_work.insert(thread_names[tid]);
    if (name == "range") threads_of_map_input.insert(thread_names[tid]);
  }

  // Every stage that ran is in the trace, with exactly the items it handled: the map's workers
  // mapped each element once, and each stage handed on every item.
  const std::vector<StageStatsSnapshot> stats = it.stats();
  std::set<std::string> stage_names;
  for (const StageStatsSnapshot& s : stats) stage_names.insert(s.name);
  EXPECT_EQ(stage_names, (std::set<std::string>{"range", "map", "prefetch", "batch"}));
  for (const std::string& stage : stage_names) {
    bool found = false;
    for (const json& e : spans) found = found || e.at("name") == stage;
    EXPECT_TRUE(found) << stage;
  }
  EXPECT_EQ(items["stage/range"], 200);
  EXPECT_EQ(items["work/map"], 200);
  EXPECT_EQ(items["take/map"], 200);
  EXPECT_EQ(items["take/prefetch"], 200);
  EXPECT_EQ(items["stage/batch"], 20);
  EXPECT_EQ(items.count("work/prefetch"), 1u);  // A prefetch's body hands items on.
  // Bodies run on the arena's workers; the map's input is pulled by its feeder.
  EXPECT_EQ(threads_of_work, (std::set<std::string>{"worker"}));
  EXPECT_EQ(threads_of_map_input, (std::set<std::string>{"feeder: map"}));
  std::set<std::string> names;
  for (const auto& [tid, name] : thread_names) names.insert(name);
  EXPECT_TRUE(names.count("consumer"));
  EXPECT_TRUE(names.count("feeder: prefetch"));
}

// On the consumer's row a synchronous stage's span holds the calls it made to its input.
TEST_F(TraceTest, InputCallsNestInsideTheSpanOfTheStageThatMadeThem) {
  Iterator it = traced_pipeline().make_iterator(testing::threads(2));
  it.start_trace();
  while (it.next()) {
  }
  it.write_trace(path("trace.json"));
  const json trace = read_trace("trace.json");
  std::vector<json> batches, takes;
  for (const json& e : events_of(trace, "X")) {
    if (e.at("name") == "batch") batches.push_back(e);
    if (e.at("name") == "prefetch" && e.at("cat") == "take") takes.push_back(e);
  }
  ASSERT_FALSE(batches.empty());
  ASSERT_FALSE(takes.empty());
  for (const json& take : takes) {
    EXPECT_EQ(take.at("tid"), batches[0].at("tid"));
    EXPECT_EQ(take.at("args").at("depth"), 1);
    bool inside = false;
    for (const json& batch : batches) {
      inside = inside || (double(take.at("ts")) >= double(batch.at("ts")) &&
                          double(take.at("ts")) + double(take.at("dur")) <=
                              double(batch.at("ts")) + double(batch.at("dur")) + 1e-3);
    }
    EXPECT_TRUE(inside) << take;
  }
}

TEST_F(TraceTest, KeepsAtMostMaxEventsAndCountsTheRestAsDropped) {
  Iterator it = traced_pipeline().make_iterator(testing::threads(2));
  it.start_trace(10);
  while (it.next()) {
  }
  it.write_trace(path("trace.json"));
  const json trace = read_trace("trace.json");
  EXPECT_EQ(events_of(trace, "X").size(), 10u);
  const int64_t dropped = trace.at("otherData").at("dropped_events");
  // batch alone makes 21 calls; every other stage more.
  EXPECT_GT(dropped, 50);
  EXPECT_EQ(trace.at("otherData").at("recorded_events"), 10);
  EXPECT_EQ(trace.at("otherData").at("max_events"), 10);
  std::string label;
  for (const json& m : events_of(trace, "M")) {
    if (m.at("name") == "process_labels") label = m.at("args").at("labels");
  }
  EXPECT_EQ(label, "dropped " + std::to_string(dropped) + " events (max_events 10)");
}

TEST_F(TraceTest, RecordsNothingUnlessStarted) {
  Iterator off = traced_pipeline().make_iterator(testing::threads(2));
  while (off.next()) {
  }
  EXPECT_THROW(off.write_trace(path("off.json")), FailedPrecondition);
  EXPECT_FALSE(std::filesystem::exists(path("off.json")));

  // Stopped before the first element: the file names the process and nothing ran.
  Iterator stopped = traced_pipeline().make_iterator(testing::threads(2));
  stopped.start_trace();
  stopped.stop_trace();
  while (stopped.next()) {
  }
  stopped.write_trace(path("stopped.json"));
  const json trace = read_trace("stopped.json");
  EXPECT_TRUE(events_of(trace, "X").empty());
  EXPECT_EQ(trace.at("otherData").at("dropped_events"), 0);
}

TEST_F(TraceTest, ResumesAfterStopAndWritesWhatWasRecordedSoFar) {
  Iterator it = Dataset::range(30).batch(10).make_iterator();
  it.start_trace();
  ASSERT_TRUE(it.next());
  it.stop_trace();
  ASSERT_TRUE(it.next());  // Not recorded.
  it.write_trace(path("first.json"));
  it.start_trace();
  ASSERT_TRUE(it.next());
  EXPECT_FALSE(it.next());
  it.write_trace(path("second.json"));
  const auto batch_items = [&](const std::string& file) {
    std::vector<int64_t> out;
    for (const json& e : events_of(read_trace(file), "X")) {
      if (e.at("name") == "batch") out.push_back(e.at("args").at("items"));
    }
    return out;
  };
  EXPECT_EQ(batch_items("first.json"), (std::vector<int64_t>{1}));
  // The first batch, then the third and the end of the data.
  EXPECT_EQ(batch_items("second.json"), (std::vector<int64_t>{1, 1, 0}));
}

TEST(ChromeTraceTest, EscapesNamesAndWritesNoNonFiniteNumbers) {
  ChromeTrace trace;
  trace.thread_name(1, 7, "a \"quoted\"\nname\\");
  trace.complete("x\ty", "c", 1.5, 2.25, 1, 7,
                 TraceArgs().add("n", 3).add("nan", 0.0 / 0.0).add("s", "v\"w"));
  trace.counter("k", "c", 4, 1, TraceArgs().add("v", 0.5));
  trace.other_data("dropped", 2);
  const json doc = json::parse(trace.json());
  EXPECT_EQ(doc.at("otherData").at("dropped"), 2);
  const json& events = doc.at("traceEvents");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].at("args").at("name"), "a \"quoted\"\nname\\");
  EXPECT_EQ(events[1].at("name"), "x\ty");
  EXPECT_EQ(events[1].at("ts"), 1.5);
  EXPECT_EQ(events[1].at("dur"), 2.25);
  EXPECT_EQ(events[1].at("args").at("n"), 3);
  EXPECT_TRUE(events[1].at("args").at("nan").is_null());
  EXPECT_EQ(events[1].at("args").at("s"), "v\"w");
  EXPECT_EQ(events[2].at("ph"), "C");
  EXPECT_EQ(events[2].at("args").at("v"), 0.5);
  EXPECT_EQ(trace.events(), 3u);
  trace.clear();
  EXPECT_TRUE(json::parse(trace.json()).at("traceEvents").empty());
}

}  // namespace
}  // namespace sluice
