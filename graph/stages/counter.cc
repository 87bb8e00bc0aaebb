#include "sluice/graph/stages/counter.h"

#include <algorithm>
#include <limits>

#include "sluice/core/strings.h"

namespace sluice {
namespace {

// An infinite source answers a caller asking for "as many as there are" with this many.
constexpr size_t kMaxChunk = 1024;

class CounterNode final : public PlanNodeOf<CounterNode> {
 public:
  CounterNode(int64_t start, int64_t step, DType dtype)
      : PlanNodeOf("counter", {}), start_(start), step_(step), dtype_(dtype) {}

  int64_t cardinality() const override { return kInfiniteCardinality; }
  std::string parameters() const override {
    return str_cat("start=", start_, ", step=", step_, ", dtype=", dtype_name(dtype_));
  }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    class It final : public StageIterator {
     public:
      It(StageStats* stats, const CounterNode& node) : StageIterator(stats), node_(node) {}

     protected:
      bool next_internal(Chunk& out, size_t max) override {
        const size_t n = std::min<size_t>(max, kMaxChunk);
        for (size_t i = 0; i < n; ++i, ++index_) out.push_back(Item{node_.at(index_), nullptr});
        return true;
      }
      void save_internal(StateWriter& writer) override { writer.write_int("index", index_); }
      void restore_internal(const StateReader& reader) override {
        index_ = reader.read_int("index", 0, std::numeric_limits<int64_t>::max());
      }

     private:
      const CounterNode& node_;
      int64_t index_ = 0;
    };
    return std::make_unique<It>(ctx.stats_for(path, name(), false), *this);
  }

 private:
  // start + index * step in unsigned arithmetic: the wrapped sum TensorFlow's repeated additions
  // reach, whatever the index.
  Element at(int64_t index) const {
    const uint64_t v =
        static_cast<uint64_t>(start_) + static_cast<uint64_t>(index) * static_cast<uint64_t>(step_);
    if (dtype_ == DType::kInt32) return Element(Tensor::scalar<int32_t>(static_cast<int32_t>(v)));
    return Element(Tensor::scalar<int64_t>(static_cast<int64_t>(v)));
  }

  int64_t start_;
  int64_t step_;
  DType dtype_;
};

}  // namespace

PlanPtr make_counter(int64_t start, int64_t step, DType dtype) {
  if (dtype != DType::kInt32 && dtype != DType::kInt64) {
    throw InvalidArgument(
        str_cat("counter: dtype must be int32 or int64, got ", dtype_name(dtype)));
  }
  if (dtype == DType::kInt32 &&
      (start < std::numeric_limits<int32_t>::min() || start > std::numeric_limits<int32_t>::max() ||
       step < std::numeric_limits<int32_t>::min() || step > std::numeric_limits<int32_t>::max())) {
    throw InvalidArgument(str_cat("counter: start ", start, " and step ", step,
                                  " must fit in int32 for dtype int32"));
  }
  return std::make_shared<CounterNode>(start, step, dtype);
}

}  // namespace sluice
