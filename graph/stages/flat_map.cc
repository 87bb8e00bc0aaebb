#include "sluice/graph/stages/flat_map.h"

#include <limits>

#include "sluice/core/strings.h"

namespace sluice {
namespace {

// How errors name the function that makes each input's dataset.
constexpr const char* kFunction = "the flat_map function";

class FlatMapNode final : public PlanNodeOf<FlatMapNode> {
 public:
  FlatMapNode(PlanPtr input, DatasetFunction function)
      : PlanNodeOf("flat_map", {std::move(input)}), function_(std::move(function)) {}

  int64_t cardinality() const override {
    return input()->cardinality() == 0 ? 0 : kUnknownCardinality;
  }
  std::string parameters() const override { return ""; }
  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override;

  DatasetFunction function_;
};

class FlatMapIterator final : public StageIterator {
 public:
  FlatMapIterator(ExecContext& ctx, const StagePath& path, const FlatMapNode& node,
                  StageStats* stats)
      : StageIterator(stats),
        ctx_(ctx),
        path_(path),
        node_(node),
        input_(lower_input(ctx, node, path, stats)) {}

 protected:
  bool next_internal(Chunk& out, size_t max) override {
    const size_t before = out.size();
    while (out.size() == before) {
      if (dataset_) {
        if (dataset_.next(out, max)) break;
        // A cancelled inner stage stops as if it had ended; it has not (see interleave.cc).
        if (ctx_.cancelled()) break;
        close();
      } else if (input_ended_) {
        break;
      } else {
        open_next(out);
      }
    }
    return out.size() > before;
  }

  void save_internal(StateWriter& writer) override {
    writer.write_int("input_ended", input_ended_ ? 1 : 0);
    writer.write_int("input_index", input_index_);
    if (!input_ended_) input_.save(writer);
    writer.write_int("open", dataset_ ? 1 : 0);
    if (!dataset_) return;
    const Item source{source_, nullptr};
    writer.write_items("source", std::span<const Item>(&source, 1));
    writer.write_signature("plan", plan_signature(*plan_));
    dataset_.save(writer, 1);
  }

  void restore_internal(const StateReader& reader) override {
    input_ended_ = reader.read_bool("input_ended");
    input_index_ = reader.read_int("input_index", 0, std::numeric_limits<int64_t>::max());
    if (!input_ended_) input_.restore(reader);
    if (!reader.read_bool("open")) return;
    Chunk source;
    reader.read_items("source", source);
    if (source.size() != 1 || !source[0].ok()) reader.fail("source", "is not one element");
    source_ = std::move(source[0].element);
    plan_ = ctx_.prepare_returned(node_.function_(source_), kFunction);
    check_signature(reader.read_signature("plan"), plan_signature(*plan_));
    open(*plan_);
    dataset_.restore(reader, 1);
  }

 private:
  void open_next(Chunk& out) {
    Chunk in;
    if (!input_.next(in, 1)) {
      input_ended_ = true;
      return;
    }
    const int64_t index = input_index_++;
    if (!in[0].ok()) {
      out.push_back(std::move(in[0]));
      return;
    }
    try {
      plan_ = ctx_.prepare_returned(node_.function_(in[0].element), kFunction);
    } catch (...) {
      out.push_back(Item::failure(
          add_error_context(std::current_exception(),
                            element_error_context("flat_map", index, in[0].element.origin()))));
      return;
    }
    source_ = std::move(in[0].element);
    open(*plan_);
  }

  void open(const PlanNode& plan) {
    // Input 1 of this stage in statistics (input 0 is the stage's input).
    dataset_ = StageInput(ctx_.lower(plan, &path_, 1), &stats());
  }

  void close() {
    dataset_.reset();
    plan_.reset();
    source_ = Element();
  }

  ExecContext& ctx_;
  StagePath path_;
  const FlatMapNode& node_;
  StageInput input_;
  Element source_;  // The input element the open dataset was made from.
  PlanPtr plan_;    // Declared before the iterator made from it, so it outlives it.
  StageInput dataset_;
  bool input_ended_ = false;
  int64_t input_index_ = 0;
};

std::unique_ptr<StageIterator> FlatMapNode::make_iterator(ExecContext& ctx,
                                                          const StagePath& path) const {
  return std::make_unique<FlatMapIterator>(ctx, path, *this, ctx.stats_for(path, name(), false));
}

}  // namespace

PlanPtr make_flat_map(PlanPtr input, DatasetFunction function) {
  if (!function) throw InvalidArgument("flat_map: no function given");
  return std::make_shared<FlatMapNode>(std::move(input), std::move(function));
}

}  // namespace sluice
