// prefetch(buffer_size): a background thread keeps up to buffer_size elements ready (AUTOTUNE:
// starts at 16 and doubles, up to 1024, whenever the consumer finds nothing ready, within the
// buffer's share of Options::autotune.ram_budget). Errors take their place in the buffer like
// elements. buffer_size 0 is no prefetching.
// Saved state: the elements in the buffer (async_stage.h), the input's state, and under AUTOTUNE
// the buffer size tuned so far.
#pragma once

#include <string>

#include "sluice/graph/plan.h"

namespace sluice {

// Throws InvalidArgument for buffer_size < -1.
PlanPtr make_prefetch(PlanPtr input, int64_t buffer_size);

class PrefetchNode final : public PlanNodeOf<PrefetchNode> {
 public:
  PrefetchNode(PlanPtr input, int64_t buffer_size)
      : PlanNodeOf("prefetch", {std::move(input)}), buffer_size_(buffer_size) {}
  bool keeps_batches() const override { return true; }
  int64_t cardinality() const override { return input()->cardinality(); }
  bool is_async() const override { return buffer_size_ != 0; }
  std::string parameters() const override { return "buffer_size=" + std::to_string(buffer_size_); }
  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override;
  int64_t buffer_size() const { return buffer_size_; }
  bool is_noop() const override { return buffer_size_ == 0; }
  PlanPtr fused_with_input() const override {
    return buffer_size_ != 0 ? input()->absorb_buffer(buffer_size_) : nullptr;
  }

 private:
  int64_t buffer_size_;
};

}  // namespace sluice
