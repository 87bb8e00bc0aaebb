#include "sluice/graph/stages/sources.h"

#include <cstdio>

#include "sluice/core/strings.h"

namespace sluice {
namespace {

constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;

uint64_t fnv1a(uint64_t hash, std::string_view bytes) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hex(uint64_t value) {
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(value));
  return out;
}

class RangeNode final : public PlanNodeOf<RangeNode> {
 public:
  RangeNode(int64_t start, int64_t stop, int64_t step)
      : PlanNodeOf("range", {}), start_(start), stop_(stop), step_(step) {}

  int64_t cardinality() const override {
    if (step_ > 0) return stop_ > start_ ? (stop_ - start_ + step_ - 1) / step_ : 0;
    return start_ > stop_ ? (start_ - stop_ - step_ - 1) / -step_ : 0;
  }

  std::string parameters() const override {
    return str_cat("start=", start_, ", stop=", stop_, ", step=", step_);
  }
  bool has_element_at() const override { return true; }
  Element element_at(int64_t index) const override {
    return Element(Tensor::scalar<int64_t>(value(index)));
  }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    class It final : public StageIterator {
     public:
      It(StageStats* stats, const RangeNode& node)
          : StageIterator(stats), node_(node), total_(node.cardinality()) {}

     protected:
      bool next_internal(Chunk& out, size_t max) override {
        if (index_ == total_) return false;
        const int64_t n = std::min<int64_t>(total_ - index_, static_cast<int64_t>(max));
        for (int64_t i = 0; i < n; ++i, ++index_) {
          out.push_back(Item{Element(Tensor::scalar<int64_t>(node_.value(index_))), nullptr});
        }
        return true;
      }
      void save_internal(StateWriter& writer) override { writer.write_int("index", index_); }
      void restore_internal(const StateReader& reader) override {
        index_ = reader.read_int("index", 0, total_);
      }

     private:
      const RangeNode& node_;
      int64_t total_;
      int64_t index_ = 0;
    };
    return std::make_unique<It>(ctx.stats_for(path, name(), false), *this);
  }

 private:
  // Element i: start + i * step, in unsigned arithmetic, which wraps where int64 would overflow on
  // the way to a value that fits.
  int64_t value(int64_t index) const {
    return static_cast<int64_t>(static_cast<uint64_t>(start_) +
                                static_cast<uint64_t>(index) * static_cast<uint64_t>(step_));
  }

  int64_t start_, stop_, step_;
};

// from_tensors and from_tensor_slices: a fixed list of elements computed lazily from components.
class TensorsNode final : public PlanNodeOf<TensorsNode> {
 public:
  TensorsNode(std::string name, Element components, bool slices, bool file_names = false)
      : PlanNodeOf(std::move(name), {}),
        components_(std::move(components)),
        slices_(slices),
        file_names_(file_names) {}

  int64_t cardinality() const override {
    return slices_ ? (components_.empty() ? 0 : components_[0].dim(0)) : 1;
  }
  FileRole file_role() const override { return file_names_ ? FileRole::kNames : FileRole::kNone; }
  int64_t file_count() const override { return file_names_ ? cardinality() : 0; }
  bool has_element_at() const override { return true; }
  Element element_at(int64_t index) const override { return element(index); }

  // Names, types and shapes; string components (file lists) also by a digest of their contents.
  std::string parameters() const override {
    std::string out;
    for (size_t c = 0; c < components_.size(); ++c) {
      const Tensor& t = components_[c];
      out += str_cat(c == 0 ? "" : ", ", components_.name(c), components_.is_named() ? ":" : "",
                     dtype_name(t.dtype()), t.shape());
      if (t.dtype() == DType::kString) {
        uint64_t hash = kFnvBasis;
        for (std::string_view s : t.strings())
          hash = fnv1a(fnv1a(hash, s), std::string_view("", 1));
        out += str_cat(" #", hex(hash));
      }
    }
    return out;
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
      void save_internal(StateWriter& writer) override { writer.write_int("index", index_); }
      void restore_internal(const StateReader& reader) override {
        index_ = reader.read_int("index", 0, node_.cardinality());
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
  bool file_names_;
};

class GeneratorNode final : public PlanNodeOf<GeneratorNode> {
 public:
  GeneratorNode(std::function<StatefulGenerator()> make, bool stateful)
      : PlanNodeOf("from_generator", {}), make_(std::move(make)), stateful_(stateful) {}

  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string parameters() const override { return stateful_ ? "stateful" : ""; }
  bool checkpointable() const override { return stateful_; }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    class It final : public StageIterator {
     public:
      It(StageStats* stats, StatefulGenerator generator)
          : StageIterator(stats), generator_(std::move(generator)) {}

     protected:
      bool next_internal(Chunk& out, size_t max) override {
        if (ended_) return false;
        const size_t before = out.size();
        for (size_t i = 0; i < max; ++i) {
          std::optional<Element> element = generator_.next();
          if (!element) {
            ended_ = true;
            break;
          }
          out.push_back(Item{std::move(*element), nullptr});
        }
        return out.size() > before;
      }
      void save_internal(StateWriter& writer) override {
        if (!generator_.save || !generator_.restore) {
          throw Unimplemented(
              "from_generator: a plain generator cannot save its position; give "
              "from_generator a StatefulGenerator (next, save, restore) to save this pipeline");
        }
        writer.write_int("ended", ended_ ? 1 : 0);
        if (!ended_) writer.write_bytes("generator", generator_.save());
      }
      void restore_internal(const StateReader& reader) override {
        if (!generator_.restore) {
          throw Unimplemented("from_generator: a plain generator cannot restore a position");
        }
        ended_ = reader.read_bool("ended");
        if (!ended_) generator_.restore(reader.read_bytes("generator"));
      }

     private:
      StatefulGenerator generator_;
      bool ended_ = false;
    };
    return std::make_unique<It>(ctx.stats_for(path, name(), false), make_());
  }

 private:
  std::function<StatefulGenerator()> make_;
  bool stateful_;
};

class SourceNode final : public PlanNodeOf<SourceNode> {
 public:
  SourceNode(std::string name, int64_t cardinality, std::string parameters,
             std::function<std::unique_ptr<ElementSource>()> open, SourceFiles files)
      : PlanNodeOf(std::move(name), {}),
        cardinality_(cardinality),
        parameters_(std::move(parameters)),
        open_(std::move(open)),
        files_(std::move(files)) {}

  int64_t cardinality() const override { return cardinality_; }
  std::string parameters() const override { return parameters_; }
  FileRole file_role() const override {
    return files_.for_worker ? FileRole::kReader : FileRole::kNone;
  }
  int64_t file_count() const override { return files_.count; }
  PlanPtr with_worker_files(int num_workers, int index) const override {
    return files_.for_worker(num_workers, index);
  }

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
      void save_internal(StateWriter& writer) override {
        writer.write_int("opened", source_ ? 1 : 0);
        if (source_) source_->save(writer);
      }
      void restore_internal(const StateReader& reader) override {
        if (!reader.read_bool("opened")) return;
        source_ = node_.open_();
        source_->restore(reader);
      }

     private:
      const SourceNode& node_;
      std::unique_ptr<ElementSource> source_;
    };
    return std::make_unique<It>(ctx.stats_for(path, name(), false), *this);
  }

 private:
  int64_t cardinality_;
  std::string parameters_;
  std::function<std::unique_ptr<ElementSource>()> open_;
  SourceFiles files_;
};

}  // namespace

std::string digest(std::string_view bytes) { return hex(fnv1a(kFnvBasis, bytes)); }

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
  return std::make_shared<GeneratorNode>(
      [make = std::move(make_generator)] {
        return StatefulGenerator{make(), nullptr, nullptr};
      },
      false);
}

PlanPtr make_from_stateful_generator(std::function<StatefulGenerator()> make_generator) {
  if (!make_generator) throw InvalidArgument("from_generator: no generator factory given");
  return std::make_shared<GeneratorNode>(std::move(make_generator), true);
}

PlanPtr make_source(std::string name, int64_t cardinality, std::string parameters,
                    std::function<std::unique_ptr<ElementSource>()> open, SourceFiles files) {
  return std::make_shared<SourceNode>(std::move(name), cardinality, std::move(parameters),
                                      std::move(open), std::move(files));
}

PlanPtr make_file_names(Element components) {
  const PlanPtr slices = make_from_tensor_slices(components);
  return std::make_shared<TensorsNode>(slices->name(), std::move(components), true, true);
}

}  // namespace sluice
