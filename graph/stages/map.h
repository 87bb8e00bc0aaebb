// map, filter and the fused map_and_batch: the stages that run user functions on elements.
// A parallel map runs on the iterator's arena (see async_stage.h); a sequential one in the
// thread that pulls it, as tf.data's map without num_parallel_calls.
//
// Saved state: map and map_and_batch save each function's seed and pass and the index of the
// next input element (which a function's ElementContext sees); run in parallel they also save
// the outputs finished and not yet taken (async_stage.h), never elements in flight. filter saves
// the index of its next input element.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/graph/element_context.h"
#include "sluice/graph/plan.h"

namespace sluice {

using MapFunction = std::function<Element(Element, const ElementContext&)>;
using Predicate = std::function<bool(const Element&, const ElementContext&)>;

// One user function of a map stage (adjacent maps are fused into one stage of several steps).
struct MapStep {
  MapFunction function;
  std::optional<uint64_t> seed;
  // Passes made over this step so far: each pass draws fresh randomness from the seed.
  std::shared_ptr<std::atomic<uint64_t>> passes = std::make_shared<std::atomic<uint64_t>>(0);
};

struct MapSettings {
  int64_t num_parallel_calls = 0;     // 0: sequential; kAutotune: tuned (graph/autotune.h).
  std::optional<bool> deterministic;  // Unset: Options::deterministic.
  size_t extra_buffer = 0;  // map_and_batch: batches a folded prefetch() adds to its buffer.
  // map_and_batch: a folded prefetch(AUTOTUNE) adds batches to its buffer as that would grow.
  bool tuned_buffer = false;
};

PlanPtr make_map(PlanPtr input, MapFunction function, std::optional<uint64_t> seed,
                 MapSettings settings);
PlanPtr make_filter(PlanPtr input, Predicate predicate);
// map then batch in one parallel stage: each task maps a whole batch and writes it in place.
PlanPtr make_map_and_batch(PlanPtr input, MapFunction function, std::optional<uint64_t> seed,
                           int64_t batch_size, bool drop_remainder, MapSettings settings);

// The pass counters of `steps`, for PlanNode::pass_counters.
std::vector<std::atomic<uint64_t>*> step_pass_counters(const std::vector<MapStep>& steps);

class MapNode final : public PlanNodeOf<MapNode> {
 public:
  MapNode(PlanPtr input, std::vector<MapStep> steps, MapSettings settings);
  bool keeps_batches() const override { return true; }
  int64_t cardinality() const override { return input()->cardinality(); }
  bool is_async() const override { return settings_.num_parallel_calls != 0; }
  std::string parameters() const override;
  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override;
  const std::vector<MapStep>& steps() const { return steps_; }
  const MapSettings& settings() const { return settings_; }
  // Adjacent maps that run alike become one stage running both functions; a parallel map
  // followed by batch becomes map_and_batch.
  PlanPtr fused_with_input() const override { return input()->absorb_map(steps_, settings_); }
  PlanPtr absorb_map(const std::vector<MapStep>& steps, const MapSettings& settings) const override;
  PlanPtr absorb_batch(int64_t batch_size, bool drop_remainder) const override;
  std::vector<std::atomic<uint64_t>*> pass_counters() const override {
    return step_pass_counters(steps_);
  }

 private:
  std::vector<MapStep> steps_;
  MapSettings settings_;
};

class MapAndBatchNode final : public PlanNodeOf<MapAndBatchNode> {
 public:
  MapAndBatchNode(PlanPtr input, std::vector<MapStep> steps, int64_t batch_size,
                  bool drop_remainder, MapSettings settings);
  int64_t cardinality() const override;
  bool is_async() const override { return true; }
  std::string parameters() const override;
  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override;
  const std::vector<MapStep>& steps() const { return steps_; }
  int64_t batch_size() const { return batch_size_; }
  bool drop_remainder() const { return drop_remainder_; }
  std::optional<BatchSpec> batching() const override {
    return BatchSpec{batch_size_, drop_remainder_};
  }
  PlanPtr with_batch_size(int64_t batch_size) const override;
  const MapSettings& settings() const { return settings_; }
  // A prefetch right after it enlarges its buffer instead, by its size or, for AUTOTUNE, by
  // batches tuned as prefetch(AUTOTUNE) tunes its buffer: no stage and thread of its own between
  // the batches and their consumer. (A plain parallel map's tasks vary in size, so a prefetch
  // after one stays a stage of its own and its bound stays exact.)
  PlanPtr absorb_buffer(int64_t buffer_size) const override;
  std::vector<std::atomic<uint64_t>*> pass_counters() const override {
    return step_pass_counters(steps_);
  }

 private:
  std::vector<MapStep> steps_;
  int64_t batch_size_;
  bool drop_remainder_;
  MapSettings settings_;
};

}  // namespace sluice
