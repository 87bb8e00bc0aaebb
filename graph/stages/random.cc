#include "sluice/graph/stages/random.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <memory>

#include "sluice/core/random.h"
#include "sluice/core/strings.h"

namespace sluice {
namespace {

constexpr size_t kMaxChunk = 1024;  // An infinite source's answer to "as many as there are".

class RandomNode final : public PlanNodeOf<RandomNode> {
 public:
  RandomNode(std::optional<uint64_t> seed, bool rerandomize)
      : PlanNodeOf("random", {}),
        seed_(seed),
        fallback_seed_(seed_or_random(std::nullopt)),
        rerandomize_(rerandomize) {}

  int64_t cardinality() const override { return kInfiniteCardinality; }
  std::vector<std::atomic<uint64_t>*> pass_counters() const override { return {passes_.get()}; }
  // Not the seed: the state holds the seed drawn, which a restore takes.
  std::string parameters() const override {
    return str_cat("rerandomize_each_iteration=", rerandomize_ ? "true" : "false");
  }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    class It final : public StageIterator {
     public:
      It(StageStats* stats, uint64_t seed, uint64_t pass, const RandomNode& node)
          : StageIterator(stats), seed_(seed), pass_(pass), node_(node) {}

     protected:
      bool next_internal(Chunk& out, size_t max) override {
        const size_t n = std::min(max, kMaxChunk);
        for (size_t i = 0; i < n; ++i, ++index_) {
          out.push_back(Item{Element(Tensor::scalar<int64_t>(value(index_))), nullptr});
        }
        return true;
      }
      void save_internal(StateWriter& writer) override {
        writer.write_int("seed", static_cast<int64_t>(seed_));
        writer.write_int("pass", static_cast<int64_t>(pass_));
        writer.write_int("index", index_);
      }
      void restore_internal(const StateReader& reader) override {
        seed_ = static_cast<uint64_t>(reader.read_int("seed"));
        pass_ = static_cast<uint64_t>(
            reader.read_int("pass", 0, std::numeric_limits<int64_t>::max() - 1));
        index_ = reader.read_int("index", 0, std::numeric_limits<int64_t>::max());
        // The passes after this one (epochs under repeat) draw what they would have drawn.
        restore_pass_counter(*node_.passes_, pass_);
        block_ = -1;
      }

     private:
      // Element i is word i mod 4 of the first Philox block of stream i / 4: a function of
      // (seed, i), so a restore needs the index only.
      int64_t value(int64_t index) {
        const int64_t block = index / 4;
        if (block != block_) {
          Random random(seed_, static_cast<uint64_t>(block));
          for (uint32_t& word : words_) word = random.next_u32();
          block_ = block;
        }
        return static_cast<int64_t>(words_[static_cast<size_t>(index % 4)]);
      }

      uint64_t seed_;
      uint64_t pass_;
      const RandomNode& node_;
      int64_t index_ = 0;
      int64_t block_ = -1;
      std::array<uint32_t, 4> words_{};
    };
    // As tf.data, a dataset without a seed (nor Options::seed) draws its seed once, when it is
    // built: iterating it twice gives the same sequence.
    const uint64_t base = seed_ || ctx.options().seed ? ctx.seed_for(seed_, path) : fallback_seed_;
    const uint64_t pass = passes_->fetch_add(1, std::memory_order_relaxed);
    const uint64_t seed = rerandomize_ ? mix_seed(base, pass) : base;
    return std::make_unique<It>(ctx.stats_for(path, name(), false), seed, pass, *this);
  }

 private:
  std::optional<uint64_t> seed_;
  uint64_t fallback_seed_;
  bool rerandomize_;
  // Passes made so far: with rerandomize_each_iteration each draws a new sequence.
  std::shared_ptr<std::atomic<uint64_t>> passes_ = std::make_shared<std::atomic<uint64_t>>(0);
};

}  // namespace

PlanPtr make_random(std::optional<uint64_t> seed, bool rerandomize_each_iteration) {
  return std::make_shared<RandomNode>(seed, rerandomize_each_iteration);
}

}  // namespace sluice
