#include "sluice/graph/stages/interleave.h"

#include <limits>

#include "sluice/core/strings.h"
#include "sluice/graph/async_stage.h"

namespace sluice {
namespace {

// The most blocks an open dataset's AUTOTUNE buffer grows to.
constexpr size_t kAutotuneBlocks = 32;

// How errors name the function that makes each input's dataset.
constexpr const char* kFunction = "the interleave function";

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
  std::string parameters() const override {
    return str_cat("cycle_length=", cycle_length_, ", block_length=", block_length_,
                   ", parallel=", num_parallel_calls_ != 0 ? "true" : "false");
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
    // The cycle decides the order, so AUTOTUNE fixes it when the iterator starts: one dataset
    // per thread the tuned stages may use.
    const int64_t cycle =
        node.cycle_length_ == kAutotune ? *ctx.options().autotune.cpu_budget : node.cycle_length_;
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

  void save_internal(StateWriter& writer) override {
    writer.write_int("cycle_length", static_cast<int64_t>(slots_.size()));
    writer.write_int("input_ended", input_ended_ ? 1 : 0);
    writer.write_int("input_index", input_index_);
    writer.write_int("current", static_cast<int64_t>(current_));
    writer.write_int("block_index", static_cast<int64_t>(block_index_));
    if (!input_ended_) input_.save(writer);
    for (size_t k = 0; k < slots_.size(); ++k) {
      Slot& slot = slots_[k];
      writer.write_int(str_cat("open", k), slot.dataset ? 1 : 0);
      if (!slot.dataset) continue;
      const Item source{slot.source, nullptr};
      writer.write_items(str_cat("source", k), std::span<const Item>(&source, 1));
      writer.write_signature(str_cat("plan", k), plan_signature(*slot.plan));
      writer.write_items(str_cat("pulled", k),
                         std::span<const Item>(slot.buffer).subspan(slot.cursor));
      slot.dataset->save(writer, k + 1);
    }
  }

  void restore_internal(const StateReader& reader) override {
    // The order depends on the cycle length, which AUTOTUNE takes from the CPU budget.
    const int64_t cycle = reader.read_int("cycle_length", 1, std::numeric_limits<int64_t>::max());
    if (cycle != static_cast<int64_t>(slots_.size())) {
      throw InvalidArgument(
          str_cat("interleave: the iterator state was saved with a cycle of ", cycle,
                  " datasets, this iterator has ", slots_.size(),
                  node_.cycle_length_ == kAutotune
                      ? " (cycle_length AUTOTUNE is Options::autotune.cpu_budget, "
                        "by default Options::threads: restore with the same "
                        "budget, or give cycle_length)"
                      : ""));
    }
    input_ended_ = reader.read_bool("input_ended");
    input_index_ = reader.read_int("input_index", 0, std::numeric_limits<int64_t>::max());
    current_ =
        static_cast<size_t>(reader.read_int("current", 0, static_cast<int64_t>(slots_.size()) - 1));
    block_index_ = static_cast<size_t>(
        reader.read_int("block_index", 0, static_cast<int64_t>(block_length_) - 1));
    if (!input_ended_) input_.restore(reader);
    open_ = 0;
    for (size_t k = 0; k < slots_.size(); ++k) {
      if (!reader.read_bool(str_cat("open", k))) continue;
      Slot& slot = slots_[k];
      Chunk source;
      reader.read_items(str_cat("source", k), source);
      if (source.size() != 1 || !source[0].ok()) {
        reader.fail(str_cat("source", k), "is not one element");
      }
      slot.source = std::move(source[0].element);
      slot.plan = ctx_.prepare_returned(node_.function_(slot.source), kFunction);
      check_signature(reader.read_signature(str_cat("plan", k)), plan_signature(*slot.plan));
      reader.read_items(str_cat("pulled", k), slot.buffer);
      slot.cursor = 0;
      slot.dataset.emplace(open_dataset(*slot.plan));
      slot.dataset->restore(reader, k + 1);
      ++open_;
    }
  }

 private:
  struct Slot {
    Element source;  // The input element the dataset was made from.
    PlanPtr plan;    // Declared before the iterator made from it, so it outlives it.
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
      source = Element();
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
      slot.plan = ctx_.prepare_returned(node_.function_(in[0].element), kFunction);
    } catch (...) {
      out.push_back(Item::failure(
          add_error_context(std::current_exception(),
                            element_error_context("interleave", index, in[0].element.origin()))));
      return;
    }
    slot.source = std::move(in[0].element);
    slot.dataset.emplace(open_dataset(*slot.plan));
    ++open_;
  }

  // The iterator of a slot's dataset (pulled ahead in the background when parallel).
  StageInput open_dataset(const PlanNode& plan) {
    StagePath inner{path_.key + "/cycle", path_.depth + 1};
    StageStats* inner_stats = ctx_.stats_for(inner, "interleave cycle", parallel_);
    StageInput dataset(ctx_.lower(plan, &inner, 0), inner_stats);
    if (parallel_) {
      AsyncStageConfig config;
      config.parallelism = 1;
      config.max_tasks = SIZE_MAX;
      config.max_elements = 2 * block_length_;
      // AUTOTUNE: each dataset's buffer grows as a prefetch(AUTOTUNE)'s does, within its share of
      // the RAM budget.
      if (node_.num_parallel_calls_ == kAutotune && *ctx_.options().autotune.enabled) {
        config.autotune_elements = true;
        config.max_elements_limit = kAutotuneBlocks * block_length_;
      }
      config.body = [](AsyncTask&) {};
      dataset = StageInput(
          make_async_stage(ctx_, inner_stats, std::move(dataset), std::move(config)), &stats());
    }
    return dataset;
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
