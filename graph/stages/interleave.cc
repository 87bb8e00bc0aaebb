#include "graph/stages/interleave.h"

#include "core/strings.h"
#include "graph/async_stage.h"

namespace sluice {
namespace {

class InterleaveNode final : public PlanNodeOf<InterleaveNode> {
 public:
  InterleaveNode(PlanPtr input, DatasetFunction function, int64_t cycle_length,
                 int64_t block_length, int64_t num_parallel_calls)
      : PlanNodeOf("interleave", {std::move(input)}),
        function_(std::move(function)),
        cycle_length_(cycle_length),
        block_length_(block_length),
        num_parallel_calls_(num_parallel_calls) {}

  int64_t cardinality() const override {
    return input()->cardinality() == 0 ? 0 : kUnknownCardinality;
  }
  bool is_async() const override { return num_parallel_calls_ != 0; }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override;

 private:
  friend class InterleaveIterator;
  DatasetFunction function_;
  int64_t cycle_length_, block_length_, num_parallel_calls_;
};

class InterleaveIterator final : public StageIterator {
 public:
  InterleaveIterator(ExecContext& ctx, const StagePath& path, const InterleaveNode& node,
                     StageStats* stats)
      : StageIterator(stats),
        ctx_(ctx),
        path_(path),
        node_(node),
        input_(lower_input(ctx, node, path, stats)),
        block_length_(static_cast<size_t>(node.block_length_)) {
    const int64_t cycle =
        node.cycle_length_ == kAutotune ? *ctx.options().threads : node.cycle_length_;
    slots_.resize(static_cast<size_t>(cycle));
    parallel_ = node.num_parallel_calls_ != 0;
  }

 protected:
  bool next_internal(Chunk& out, size_t max) override {
    const size_t before = out.size();
    while (out.size() - before < max && !(input_ended_ && open_ == 0)) {
      Slot& slot = slots_[current_];
      if (slot.dataset) {
        Item item;
        if (slot.pull(item, block_length_)) {
          const bool counts = item.ok();  // Errors do not use up the block.
          out.push_back(std::move(item));
          if (counts && ++block_index_ == block_length_) advance();
        } else if (ctx_.cancelled()) {
          // A cancelled inner stage stops as if it had ended; it has not. Leave the slots for
          // the destructor rather than closing them (and opening the next) here: destroying a
          // parallel inner stage from this thread while the iterator is being cancelled could
          // wait on the arena forever (found by tests/hardening/cancellation_test.cc).
          break;
        } else {
          slot.close();
          --open_;
          advance();
        }
      } else if (!input_ended_) {
        open_next(slot, out);
      } else {
        advance();
      }
    }
    return out.size() > before;
  }

 private:
  struct Slot {
    PlanPtr plan;  // Declared before the iterator made from it, so it outlives it.
    std::optional<StageInput> dataset;
    Chunk buffer;
    size_t cursor = 0;

    bool pull(Item& item, size_t block_length) {
      if (cursor == buffer.size()) {
        buffer.clear();
        cursor = 0;
        if (!dataset->next(buffer, block_length)) return false;
      }
      item = std::move(buffer[cursor++]);
      return true;
    }
    void close() {
      dataset.reset();
      buffer.clear();
      cursor = 0;
      plan.reset();
    }
  };

  void advance() {
    block_index_ = 0;
    current_ = (current_ + 1) % slots_.size();
  }

  // Fills the empty current slot with the dataset of the next input element.
  void open_next(Slot& slot, Chunk& out) {
    Chunk in;
    if (!input_.next(in, 1)) {
      input_ended_ = true;
      return;
    }
    if (!in[0].ok()) {
      out.push_back(std::move(in[0]));
      return;
    }
    const int64_t index = input_index_++;
    try {
      slot.plan = node_.function_(in[0].element);
      if (!slot.plan) throw InvalidArgument("the interleave function returned no dataset");
    } catch (...) {
      out.push_back(Item::failure(
          add_error_context(std::current_exception(),
                            element_error_context("interleave", index, in[0].element.origin()))));
      return;
    }
    StagePath inner{path_.key + "/cycle", path_.depth + 1};
    StageStats* inner_stats = ctx_.stats_for(inner, "interleave cycle", parallel_);
    StageInput dataset(ctx_.lower(*slot.plan, &inner, 0), inner_stats);
    if (parallel_) {
      AsyncStageConfig config;
      config.parallelism = 1;
      config.max_tasks = SIZE_MAX;
      config.max_elements = 2 * block_length_;
      config.body = [](AsyncTask&) {};
      dataset = StageInput(
          make_async_stage(ctx_, inner_stats, std::move(dataset), std::move(config)), &stats());
    }
    slot.dataset.emplace(std::move(dataset));
    ++open_;
  }

  ExecContext& ctx_;
  StagePath path_;
  const InterleaveNode& node_;
  StageInput input_;
  size_t block_length_;
  bool parallel_ = false;
  std::vector<Slot> slots_;
  size_t current_ = 0;
  size_t block_index_ = 0;
  size_t open_ = 0;
  bool input_ended_ = false;
  int64_t input_index_ = 0;
};

std::unique_ptr<StageIterator> InterleaveNode::make_iterator(ExecContext& ctx,
                                                             const StagePath& path) const {
  return std::make_unique<InterleaveIterator>(ctx, path, *this, ctx.stats_for(path, name(), false));
}

}  // namespace

PlanPtr make_interleave(PlanPtr input, DatasetFunction function, int64_t cycle_length,
                        int64_t block_length, int64_t num_parallel_calls) {
  if (!function) throw InvalidArgument("interleave: no function given");
  if (cycle_length < 1 && cycle_length != kAutotune) {
    throw InvalidArgument(
        str_cat("interleave: cycle_length must be positive or AUTOTUNE, got ", cycle_length));
  }
  if (block_length < 1) {
    throw InvalidArgument(str_cat("interleave: block_length must be positive, got ", block_length));
  }
  return std::make_shared<InterleaveNode>(std::move(input), std::move(function), cycle_length,
                                          block_length, num_parallel_calls);
}

}  // namespace sluice
