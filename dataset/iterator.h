// Iterator: one pass over a Dataset. It owns the running pipeline (its flow graphs, threads and
// buffers) and a reference to the plan; destroying it cancels the work and returns once the work
// in flight has stopped.
//
//   auto it = ds.make_iterator();
//   while (auto e = it.next()) use(*e);
//
// Not thread-safe: one thread calls next() at a time (the pipeline itself is parallel).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/element.h"
#include "graph/executor.h"
#include "graph/options.h"
#include "graph/stats.h"

namespace sluice {

class Iterator {
 public:
  explicit Iterator(std::unique_ptr<Execution> execution) : execution_(std::move(execution)) {}
  Iterator(Iterator&&) noexcept = default;
  Iterator& operator=(Iterator&&) noexcept = default;

  // The next element, or nullopt at the end of the data (and on every call after it). An element
  // whose production failed throws its error here, with the stage and element named; the next
  // call continues after it, as tf.data's GetNext.
  std::optional<Element> next();

  // Per-stage counters: elements, errors, busy time and waiting on input and output.
  std::vector<StageStatsSnapshot> stats() const { return execution_->stats(); }
  std::string stats_table() const { return format_stats_table(stats()); }
  // The options in force (defaults filled in).
  const Options& options() const { return execution_->options(); }

 private:
  std::unique_ptr<Execution> execution_;
};

}  // namespace sluice
