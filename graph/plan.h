// The plan: an immutable tree of stage descriptions that a Dataset handle points to. Nothing runs
// until an iterator lowers the plan: each node then makes the stage iterator that executes it.
// Nodes are shared between datasets (a transformation returns a new node over the same inputs).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/graph/options.h"
#include "sluice/graph/stage.h"
#include "sluice/graph/stats.h"

namespace sluice {

inline constexpr int64_t kInfiniteCardinality = -1;
inline constexpr int64_t kUnknownCardinality = -2;

class PlanNode;
using PlanPtr = std::shared_ptr<const PlanNode>;
class Engine;
class ExecContext;
struct MapStep;
struct MapSettings;

// Where a stage sits in a running pipeline: the key its statistics are summed under (a stage
// re-created by repeat() or interleave() keeps its key) and its distance from the output.
struct StagePath {
  std::string key;
  int depth = 0;
};

// How a batching stage (batch, padded_batch, map_and_batch) batches.
struct BatchSpec {
  int64_t batch_size = 0;
  bool drop_remainder = false;
};

// What a stage is to the files of a pipeline, for FILE auto-sharding (strategy/auto_shard.h):
// a list of file names, one element per file (list_files, an image folder's files, the names
// TFRecordDataset interleaves), sharded by keeping every n-th element; or a reader of a fixed
// list of files (a TFRecordDataset source, an image folder in an archive), sharded by reading
// only some of them.
enum class FileRole { kNone, kNames, kReader };

class PlanNode {
 public:
  PlanNode(std::string name, std::vector<PlanPtr> inputs)
      : name_(std::move(name)), inputs_(std::move(inputs)) {}
  virtual ~PlanNode() = default;

  // The stage's name in statistics and errors ("map", "batch", ...).
  const std::string& name() const { return name_; }
  const std::vector<PlanPtr>& inputs() const { return inputs_; }
  const PlanPtr& input() const { return inputs_.at(0); }

  // Number of elements: >= 0, kInfiniteCardinality or kUnknownCardinality (tf.data's rules).
  virtual int64_t cardinality() const = 0;

  // Makes the iterator that executes this stage; lowers the inputs through ctx.lower().
  virtual std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                                       const StagePath& path) const = 0;

  // Whether the stage runs on the iterator's arena (parallel map, prefetch, ...).
  virtual bool is_async() const { return false; }

  // What the stage is besides its kind, for the plan signature a saved iterator state carries
  // (graph/state.h): every parameter that changes what it produces ("batch_size=32,
  // drop_remainder=false"), not its functions, which cannot be compared.
  virtual std::string parameters() const = 0;
  // Whether the stage's iterators can save their position (a generator without state cannot).
  // The stages a function makes at run time (interleave's) are not known here.
  virtual bool checkpointable() const { return true; }

  // Sources whose element i is a function of i alone (range, from_tensor_slices) make it on
  // demand, so that a buffer over them can hold and save indices instead of elements.
  virtual bool has_element_at() const { return false; }
  // REQUIRES: has_element_at() and 0 <= index < cardinality().
  virtual Element element_at(int64_t /*index*/) const { return Element(); }

  // The counters of the passes (iterators) made of this stage so far, for stages that draw anew
  // each pass (a reshuffling shuffle, a seeded map, random): Iterator::save keeps them, so that
  // the passes after a restore draw what a straight run draws even where no stage saved the
  // pass's position (the input of a take that finished, of a concatenate that moved on).
  virtual std::vector<std::atomic<uint64_t>*> pass_counters() const { return {}; }

  // A copy of this node reading from other inputs (for graph rewrites).
  virtual PlanPtr with_inputs(std::vector<PlanPtr> inputs) const = 0;

  // Batching stages say how they batch; with_batch_size is such a stage batching another number
  // of elements (so that each worker batches its share of a global batch).
  virtual std::optional<BatchSpec> batching() const { return std::nullopt; }
  virtual PlanPtr with_batch_size(int64_t batch_size) const;
  // Whether the stage's elements are batches of the size of its inputs' (map, filter, prefetch,
  // shuffle, take, zip, concatenate, ...): a static batch size every input has is the output's.
  virtual bool keeps_batches() const { return false; }

  // The stage's part in the files of its pipeline (FileRole), and how many files it names or
  // reads. with_worker_files is a reader reading only the files j with j mod num_workers == index.
  virtual FileRole file_role() const { return FileRole::kNone; }
  virtual int64_t file_count() const { return 0; }
  virtual PlanPtr with_worker_files(int num_workers, int index) const;

  // Graph rewrites (graph/optimize.h) ask the nodes. is_noop: the stage does nothing as
  // configured (take(-1), skip(0), repeat(1), prefetch(0), with_options) and is dropped.
  virtual bool is_noop() const { return false; }
  // One stage doing this one's work and its input's, when the two fuse, else null. A stage fuses
  // by offering itself to its input through the absorb_ methods, which a fusing input overrides:
  // itself followed by map steps run with `settings` (map after map), by a batch (batch after a
  // parallel map), by a repeat (repeat after a reshuffling shuffle), or holding `elements` more
  // finished outputs (prefetch after map-and-batch).
  virtual PlanPtr fused_with_input() const { return nullptr; }
  virtual PlanPtr absorb_map(const std::vector<MapStep>& /*steps*/,
                             const MapSettings& /*settings*/) const {
    return nullptr;
  }
  virtual PlanPtr absorb_batch(int64_t /*batch_size*/, bool /*drop_remainder*/) const {
    return nullptr;
  }
  virtual PlanPtr absorb_repeat(int64_t /*count*/) const { return nullptr; }
  // A prefetch of `buffer_size` (> 0, or kAutotune) right after this stage, folded into it.
  virtual PlanPtr absorb_buffer(int64_t /*buffer_size*/) const { return nullptr; }
  // The Options a with_options stage attaches (merged by the executor); null for any other.
  virtual const Options* attached_options() const { return nullptr; }

 protected:
  PlanNode(const PlanNode&) = default;
  void set_inputs(std::vector<PlanPtr> inputs) { inputs_ = std::move(inputs); }

 private:
  std::string name_;
  std::vector<PlanPtr> inputs_;
};

// Base of concrete nodes: implements with_inputs() by copying the derived node.
template <class Derived>
class PlanNodeOf : public PlanNode {
 public:
  using PlanNode::PlanNode;

  PlanPtr with_inputs(std::vector<PlanPtr> inputs) const override {
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    copy->set_inputs(std::move(inputs));
    return copy;
  }
};

// Everything the stages of one iterator share: resolved options, the engine that runs the
// parallel stages, statistics. Outlives every stage iterator made from it.
class ExecContext {
 public:
  ExecContext(Options options, Engine* engine);
  ~ExecContext();

  const Options& options() const { return options_; }  // threads, deterministic, autotune set.
  Engine& engine() const { return *engine_; }
  bool cancelled() const;

  // The statistics record of the stage at `path`, made on first use.
  StageStats* stats_for(const StagePath& path, const std::string& name, bool async);
  std::vector<StageStatsSnapshot> stats_snapshot() const;
  // The trace every stage records into while it is on (graph/trace.h).
  TraceRecorder& trace() const { return *trace_; }

  // Lowers `node` as input `index` of the stage at `parent` (or as the root when parent is null).
  std::unique_ptr<StageIterator> lower(const PlanNode& node, const StagePath* parent, int index);

  // A plan as this iterator runs it: with the static rewrites (graph/optimize.h) unless
  // Options::static_optimizations turned them off. The root's plan, and every dataset a stage
  // makes while running (interleave's and flat_map's, a window's reduction), so that a dataset
  // runs the same whether it is the whole pipeline or made per element.
  PlanPtr prepare(PlanPtr plan) const;
  // prepare() of the dataset a user function returned (`function` names it in the error:
  // "the interleave function"); InvalidArgument when it returned none.
  PlanPtr prepare_returned(PlanPtr plan, std::string_view function) const;

  // The seed of a random stage: its own when given, else one derived from Options::seed and the
  // stage's place in the plan, else a fresh random one.
  uint64_t seed_for(std::optional<uint64_t> stage_seed, const StagePath& path) const;

 private:
  Options options_;
  Engine* engine_;
  mutable std::mutex stats_mutex_;
  std::map<std::string, std::unique_ptr<StageStats>> stats_;
  std::vector<StageStats*> stats_order_;
  std::unique_ptr<TraceRecorder> trace_;  // Its events point to stats_, which outlive it.
};

// The path of input `index` of the stage at `parent`, when that input is `node`.
StagePath child_path(const StagePath& parent, int index, const PlanNode& node);

// Convenience for stages: the first element of `inputs` of a node, lowered with this path.
inline StageInput lower_input(ExecContext& ctx, const PlanNode& node, const StagePath& path,
                              StageStats* owner, int index = 0) {
  return StageInput(ctx.lower(*node.inputs().at(static_cast<size_t>(index)), &path, index), owner);
}

}  // namespace sluice
