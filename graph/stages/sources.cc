#include "graph/stages/sources.h"

#include "core/strings.h"

namespace sluice {
namespace {

class RangeNode final : public PlanNodeOf<RangeNode> {
 public:
  RangeNode(int64_t start, int64_t stop, int64_t step)
      : PlanNodeOf("range", {}), start_(start), stop_(stop), step_(step) {}

  int64_t cardinality() const override {
    if (step_ > 0) return stop_ > start_ ? (stop_ - start_ + step_ - 1) / step_ : 0;
    return start_ > stop_ ? (start_ - stop_ - step_ - 1) / -step_ : 0;
  }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    class It final : public StageIterator {
     public:
      It(StageStats* stats, int64_t next, int64_t remaining, int64_t step)
          : StageIterator(stats), next_(next), remaining_(remaining), step_(step) {}

     protected:
      bool next_internal(Chunk& out, size_t max) override {
        if (remaining_ == 0) return false;
        const int64_t n = std::min<int64_t>(remaining_, static_cast<int64_t>(max));
        for (int64_t i = 0; i < n; ++i, next_ += step_) {
          out.push_back(Item{Element{Tensor::scalar<int64_t>(next_)}, nullptr});
        }
        remaining_ -= n;
        return true;
      }

     private:
      int64_t next_, remaining_, step_;
    };
    return std::make_unique<It>(ctx.stats_for(path, name(), false), start_, cardinality(), step_);
  }

 private:
  int64_t start_, stop_, step_;
};

// from_tensors and from_tensor_slices: a fixed list of elements computed lazily from components.
class TensorsNode final : public PlanNodeOf<TensorsNode> {
 public:
  TensorsNode(std::string name, Element components, bool slices)
      : PlanNodeOf(std::move(name), {}), components_(std::move(components)), slices_(slices) {}

  int64_t cardinality() const override {
    return slices_ ? (components_.empty() ? 0 : components_[0].dim(0)) : 1;
  }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    class It final : public StageIterator {
     public:
      It(StageStats* stats, const TensorsNode& node) : StageIterator(stats), node_(node) {}

     protected:
      bool next_internal(Chunk& out, size_t max) override {
        const int64_t total = node_.cardinality();
        if (index_ >= total) return false;
        const int64_t end = std::min<int64_t>(total, index_ + static_cast<int64_t>(max));
        for (; index_ < end; ++index_) out.push_back(Item{node_.element(index_), nullptr});
        return true;
      }

     private:
      const TensorsNode& node_;
      int64_t index_ = 0;
    };
    return std::make_unique<It>(ctx.stats_for(path, name(), false), *this);
  }

  Element element(int64_t i) const {
    if (!slices_) return components_;
    std::vector<Tensor> row;
    row.reserve(components_.size());
    for (const Tensor& t : components_) row.push_back(t.select(i));
    Element slice(std::move(row), components_.names());
    if (components_.origin()) slice.set_origin(components_.origin().at_record(i));
    return slice;
  }

 private:
  Element components_;
  bool slices_;
};

class GeneratorNode final : public PlanNodeOf<GeneratorNode> {
 public:
  explicit GeneratorNode(std::function<Generator()> make)
      : PlanNodeOf("from_generator", {}), make_(std::move(make)) {}

  int64_t cardinality() const override { return kUnknownCardinality; }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    class It final : public StageIterator {
     public:
      It(StageStats* stats, Generator generator)
          : StageIterator(stats), generator_(std::move(generator)) {}

     protected:
      bool next_internal(Chunk& out, size_t max) override {
        if (ended_) return false;
        const size_t before = out.size();
        for (size_t i = 0; i < max; ++i) {
          std::optional<Element> element = generator_();
          if (!element) {
            ended_ = true;
            break;
          }
          out.push_back(Item{std::move(*element), nullptr});
        }
        return out.size() > before;
      }

     private:
      Generator generator_;
      bool ended_ = false;
    };
    return std::make_unique<It>(ctx.stats_for(path, name(), false), make_());
  }

 private:
  std::function<Generator()> make_;
};

class SourceNode final : public PlanNodeOf<SourceNode> {
 public:
  SourceNode(std::string name, int64_t cardinality,
             std::function<std::unique_ptr<ElementSource>()> open)
      : PlanNodeOf(std::move(name), {}), cardinality_(cardinality), open_(std::move(open)) {}

  int64_t cardinality() const override { return cardinality_; }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    class It final : public StageIterator {
     public:
      It(StageStats* stats, const SourceNode& node) : StageIterator(stats), node_(node) {}

     protected:
      bool next_internal(Chunk& out, size_t max) override {
        // Opened on first pull, so that errors opening it arrive in the stream.
        if (!source_) source_ = node_.open_();
        return source_->next(out, max);
      }

     private:
      const SourceNode& node_;
      std::unique_ptr<ElementSource> source_;
    };
    return std::make_unique<It>(ctx.stats_for(path, name(), false), *this);
  }

 private:
  int64_t cardinality_;
  std::function<std::unique_ptr<ElementSource>()> open_;
};

}  // namespace

PlanPtr make_range(int64_t start, int64_t stop, int64_t step) {
  if (step == 0) throw InvalidArgument("range: step must not be 0");
  return std::make_shared<RangeNode>(start, stop, step);
}

PlanPtr make_from_tensors(Element element) {
  return std::make_shared<TensorsNode>("from_tensors", std::move(element), false);
}

PlanPtr make_from_tensor_slices(Element components) {
  if (components.empty()) throw InvalidArgument("from_tensor_slices: no components to slice");
  for (size_t i = 0; i < components.size(); ++i) {
    const Tensor& t = components[i];
    if (t.rank() == 0) {
      throw InvalidArgument(str_cat("from_tensor_slices: component ", i,
                                    " is a scalar and has no first dimension to slice"));
    }
    if (t.dim(0) != components[0].dim(0)) {
      throw InvalidArgument(
          str_cat("from_tensor_slices: all components must have the same size "
                  "in the first dimension; component 0 has shape ",
                  components[0].shape(), " and component ", i, " has shape ", t.shape()));
    }
  }
  return std::make_shared<TensorsNode>("from_tensor_slices", std::move(components), true);
}

PlanPtr make_from_generator(std::function<Generator()> make_generator) {
  if (!make_generator) throw InvalidArgument("from_generator: no generator factory given");
  return std::make_shared<GeneratorNode>(std::move(make_generator));
}

PlanPtr make_source(std::string name, int64_t cardinality,
                    std::function<std::unique_ptr<ElementSource>()> open) {
  return std::make_shared<SourceNode>(std::move(name), cardinality, std::move(open));
}

}  // namespace sluice
