// Execution: one running pipeline. Optimizes a plan, lowers it into stage iterators whose parallel
// parts run as oneTBB flow graphs in one task arena, and hands out its items one at a time.
// The engine behind dataset/'s Iterator; it keeps oneTBB out of every public header.
#pragma once

#include <memory>
#include <vector>

#include "graph/options.h"
#include "graph/plan.h"
#include "graph/stage.h"
#include "graph/stats.h"

namespace sluice {

class Execution {
 public:
  // Validates and optimizes the plan, then lowers it (nothing is pulled yet).
  Execution(PlanPtr plan, const Options& options);
  // Cancels every stage, waits for work in flight to stop, and releases everything.
  ~Execution();
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  // The next item of the stream; false at the end (and after it). Not thread-safe.
  bool next(Item& item);

  const Options& options() const;
  std::vector<StageStatsSnapshot> stats() const;
  // The plan as executed, after graph rewrites.
  const PlanPtr& plan() const { return plan_; }

 private:
  PlanPtr plan_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<ExecContext> ctx_;
  std::unique_ptr<StageIterator> root_;
  Chunk buffer_;
  size_t cursor_ = 0;
  bool ended_ = false;
};

}  // namespace sluice
