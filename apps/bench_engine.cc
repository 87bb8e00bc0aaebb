// bench overhead and bench map-scaling: the engine's own costs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "apps/bench.h"
#include "apps/report.h"

namespace sluice::app {

uint64_t spin(uint64_t iterations, uint64_t seed) {
  uint64_t x = seed | 1;
  for (uint64_t i = 0; i < iterations; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

uint64_t iterations_per_microsecond() {
  constexpr uint64_t kProbe = 20'000'000;
  const auto start = Clock::now();
  volatile uint64_t sink = spin(kProbe, 7);
  (void)sink;
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  return static_cast<uint64_t>(static_cast<double>(kProbe) / us);
}

void run_overhead(int64_t elements, int threads, bool json, const std::string& trace_path) {
  const Dataset ds = Dataset::range(elements)
                         .map([](const Tensor& x) { return Tensor::scalar(x.item<int64_t>() + 1); },
                              {.num_parallel_calls = kAutotune})
                         .batch(1024);
  Options options;
  options.threads = threads > 0 ? std::optional<int>(threads) : std::nullopt;
  const RunResult r = drain(ds, options, trace_path);
  std::printf("pipeline: range(%lld) -> map(x+1, AUTOTUNE) -> batch(1024), deterministic\n%s",
              static_cast<long long>(elements), r.table.c_str());
  // tf.data's measure of what a stage adds to each element's way: ten chained trivial maps,
  // unfused, against none, per map and element.
  const int64_t chained = std::max<int64_t>(elements / 10, 1);
  Options unfused = options;
  unfused.static_optimizations = false;
  auto chain_seconds = [&](int maps) {
    Dataset chain = Dataset::range(chained);
    for (int i = 0; i < maps; ++i) chain = chain.map([](const Tensor& x) { return x; });
    return drain(chain, unfused).seconds;
  };
  const double none = chain_seconds(0);
  const double ten = chain_seconds(10);
  const double ns_per_map = (ten - none) * 1e9 / (10.0 * static_cast<double>(chained));
  std::printf("range(%lld) -> 10 chained maps (x -> x, unfused): %.1f ns per map and element\n",
              static_cast<long long>(chained), ns_per_map);
  Report report;
  report.add("elements", static_cast<long long>(r.elements));
  report.add("seconds", r.seconds, 3);
  report.add("ns_per_element", r.seconds * 1e9 / static_cast<double>(r.elements), 1);
  report.add("elements_per_sec", static_cast<double>(r.elements) / r.seconds);
  report.add("chained_map_ns", ns_per_map, 1);
  report_trace(trace_path, r, report);
  report.print(json);
}

void run_map_scaling(int64_t elements, double cost_us, bool json, const std::string& trace_path) {
  const uint64_t iterations = static_cast<uint64_t>(cost_us * iterations_per_microsecond());
  const Dataset ds = Dataset::range(elements).map(
      [iterations](const Tensor& x) {
        return Tensor::scalar(static_cast<int64_t>(spin(iterations, x.item<int64_t>()) & 0xFF));
      },
      {.num_parallel_calls = kAutotune});
  Report report;
  double rate[3] = {0, 0, 0};
  RunResult traced;
  for (int threads : {1, 2}) {
    Options options;
    options.threads = threads;
    const RunResult r = drain(ds, options, threads == 2 ? trace_path : std::string());
    if (threads == 2) traced = r;
    rate[threads] = static_cast<double>(r.elements) / r.seconds;
    std::printf("threads=%d: %.0f elements/s\n%s", threads, rate[threads], r.table.c_str());
  }
  report.add("cost_us", cost_us, 1);
  report.add("elements_per_sec_1", rate[1]);
  report.add("elements_per_sec_2", rate[2]);
  report.add("speedup", rate[2] / rate[1], 2);
  report_trace(trace_path, traced, report);
  report.print(json);
}

}  // namespace sluice::app
