#include "sluice/graph/stages/group_by_window.h"

#include <limits>
#include <map>

#include "sluice/core/strings.h"
#include "sluice/graph/stages/window.h"

namespace sluice {
namespace {

// Input elements pulled at a time; those not grouped yet are part of the saved state.
constexpr size_t kPullSize = 16;

class GroupByWindowNode final : public PlanNodeOf<GroupByWindowNode> {
 public:
  GroupByWindowNode(PlanPtr input, KeyFunction key_func, ReduceFunction reduce_func,
                    WindowSizeFunction window_size_func)
      : PlanNodeOf("group_by_window", {std::move(input)}),
        key_func_(std::move(key_func)),
        reduce_func_(std::move(reduce_func)),
        window_size_func_(std::move(window_size_func)) {}

  int64_t cardinality() const override {
    const int64_t n = input()->cardinality();
    return n == kInfiniteCardinality ? n : kUnknownCardinality;
  }
  std::string parameters() const override { return ""; }
  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override;

  KeyFunction key_func_;
  ReduceFunction reduce_func_;
  WindowSizeFunction window_size_func_;
};

std::vector<Item> as_items(const std::vector<Element>& elements) {
  std::vector<Item> items;
  items.reserve(elements.size());
  for (const Element& e : elements) items.push_back(Item{e, nullptr});
  return items;
}

class GroupByWindowIterator final : public StageIterator {
 public:
  GroupByWindowIterator(ExecContext& ctx, const StagePath& path, const GroupByWindowNode& node,
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
      if (reduced_) {
        if (reduced_.next(out, max)) break;
        // A cancelled inner stage stops as if it had ended; it has not (see interleave.cc).
        if (ctx_.cancelled()) break;
        finish_reducing();
      } else if (!input_ended_) {
        Item item;
        if (pull(item)) {
          add(std::move(item), out);
        } else {
          input_ended_ = true;
        }
      } else if (!groups_.empty()) {
        start_reducing(groups_.begin()->first, out);
      } else {
        break;
      }
    }
    return out.size() > before;
  }

  void save_internal(StateWriter& writer) override {
    writer.write_int("input_ended", input_ended_ ? 1 : 0);
    writer.write_int("input_index", input_index_);
    if (!input_ended_) input_.save(writer);
    writer.write_items("pending", std::span<const Item>(pending_).subspan(cursor_));
    writer.write_int("groups", static_cast<int64_t>(groups_.size()));
    size_t g = 0;
    for (const auto& [key, elements] : groups_) {
      writer.write_int(str_cat("group", g, "_key"), key);
      writer.write_items(str_cat("group", g), as_items(elements));
      ++g;
    }
    writer.write_int("window_sizes", static_cast<int64_t>(window_sizes_.size()));
    size_t w = 0;
    for (const auto& [key, size] : window_sizes_) {
      writer.write_int(str_cat("window_size", w, "_key"), key);
      writer.write_int(str_cat("window_size", w), size);
      ++w;
    }
    writer.write_int("reducing", reduced_ ? 1 : 0);
    if (!reduced_) return;
    writer.write_int("reducing_key", reducing_key_);
    writer.write_signature("plan", plan_signature(*plan_));
    reduced_.save(writer, 1);
  }

  void restore_internal(const StateReader& reader) override {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    input_ended_ = reader.read_bool("input_ended");
    input_index_ = reader.read_int("input_index", 0, kMax);
    if (!input_ended_) input_.restore(reader);
    reader.read_items("pending", pending_);
    cursor_ = 0;
    const int64_t groups = reader.read_int("groups", 0, kMax);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t key = reader.read_int(str_cat("group", g, "_key"));
      Chunk items;
      reader.read_items(str_cat("group", g), items);
      std::vector<Element>& group = groups_[key];
      for (Item& item : items) {
        if (!item.ok()) reader.fail(str_cat("group", g), "holds an error");
        group.push_back(std::move(item.element));
      }
    }
    const int64_t sizes = reader.read_int("window_sizes", 0, kMax);
    for (int64_t w = 0; w < sizes; ++w) {
      window_sizes_[reader.read_int(str_cat("window_size", w, "_key"))] =
          reader.read_int(str_cat("window_size", w), 1, kMax);
    }
    if (!reader.read_bool("reducing")) return;
    reducing_key_ = reader.read_int("reducing_key");
    const auto group = groups_.find(reducing_key_);
    if (group == groups_.end() || group->second.empty()) {
      reader.fail("reducing_key", "names no open group");
    }
    plan_ = reduce(reducing_key_, group->second);
    check_signature(reader.read_signature("plan"), plan_signature(*plan_));
    reduced_ = StageInput(ctx_.lower(*plan_, &path_, 1), &stats());
    reduced_.restore(reader, 1);
  }

 private:
  bool pull(Item& item) {
    if (cursor_ == pending_.size()) {
      pending_.clear();
      cursor_ = 0;
      if (!input_.next(pending_, kPullSize)) return false;
    }
    item = std::move(pending_[cursor_++]);
    return true;
  }

  // Puts an input item in its group, and starts reducing the group when it is full.
  void add(Item item, Chunk& out) {
    const int64_t index = input_index_++;
    if (!item.ok()) {
      out.push_back(std::move(item));
      return;
    }
    const ElementOrigin origin = item.element.origin();
    int64_t key = 0;
    try {
      key = node_.key_func_(item.element);
      auto size = window_sizes_.find(key);
      if (size == window_sizes_.end()) {
        const int64_t window_size = node_.window_size_func_(key);
        if (window_size <= 0) {
          throw InvalidArgument(
              str_cat("Window size must be greater than zero, but got ", window_size, "."));
        }
        size = window_sizes_.emplace(key, window_size).first;
      }
      std::vector<Element>& group = groups_[key];
      group.push_back(std::move(item.element));
      if (static_cast<int64_t>(group.size()) < size->second) return;
    } catch (...) {
      out.push_back(Item::failure(add_error_context(
          std::current_exception(), element_error_context("group_by_window", index, origin))));
      return;
    }
    start_reducing(key, out);
  }

  PlanPtr reduce(int64_t key, const std::vector<Element>& elements) const {
    return ctx_.prepare_returned(node_.reduce_func_(key, make_elements_source(elements)),
                                 "the group_by_window reduce function");
  }

  void start_reducing(int64_t key, Chunk& out) {
    try {
      plan_ = reduce(key, groups_.at(key));
    } catch (...) {
      // The window is reported lost in its place.
      groups_.erase(key);
      out.push_back(Item::failure(add_error_context(
          std::current_exception(),
          str_cat(" [in stage 'group_by_window' reducing the window of key ", key, "]"))));
      return;
    }
    reducing_key_ = key;
    reduced_ = StageInput(ctx_.lower(*plan_, &path_, 1), &stats());
  }

  void finish_reducing() {
    reduced_.reset();
    plan_.reset();
    groups_.erase(reducing_key_);
  }

  ExecContext& ctx_;
  StagePath path_;
  const GroupByWindowNode& node_;
  StageInput input_;
  Chunk pending_;
  size_t cursor_ = 0;
  bool input_ended_ = false;
  int64_t input_index_ = 0;
  std::map<int64_t, std::vector<Element>> groups_;
  std::map<int64_t, int64_t> window_sizes_;
  int64_t reducing_key_ = 0;
  PlanPtr plan_;  // Declared before the iterator made from it, so it outlives it.
  StageInput reduced_;
};

std::unique_ptr<StageIterator> GroupByWindowNode::make_iterator(ExecContext& ctx,
                                                                const StagePath& path) const {
  return std::make_unique<GroupByWindowIterator>(ctx, path, *this,
                                                 ctx.stats_for(path, name(), false));
}

}  // namespace

PlanPtr make_group_by_window(PlanPtr input, KeyFunction key_func, ReduceFunction reduce_func,
                             WindowSizeFunction window_size_func) {
  if (!key_func || !reduce_func || !window_size_func) {
    throw InvalidArgument("group_by_window: key_func, reduce_func and window_size_func are needed");
  }
  return std::make_shared<GroupByWindowNode>(std::move(input), std::move(key_func),
                                             std::move(reduce_func), std::move(window_size_func));
}

}  // namespace sluice
