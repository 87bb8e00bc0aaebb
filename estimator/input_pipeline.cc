#include "estimator/input_pipeline.h"

#include "dataset/dataset.h"

namespace sluice {

struct InputPipeline::Impl {
  Iterator iterator;
};

namespace {

Dataset validated(const InputFn& input_fn, const std::function<void(const Dataset&)>& validate) {
  Dataset dataset = input_fn();
  if (validate) validate(dataset);
  return dataset;
}

}  // namespace

InputPipeline::InputPipeline(const InputFn& input_fn, const Options& options,
                             const std::function<void(const Dataset&)>& validate)
    : impl_(std::make_unique<Impl>(
          Impl{validated(input_fn, validate).prefetch(2).make_iterator(options)})) {}

InputPipeline::~InputPipeline() = default;
InputPipeline::InputPipeline(InputPipeline&&) noexcept = default;
InputPipeline& InputPipeline::operator=(InputPipeline&&) noexcept = default;

std::optional<Element> InputPipeline::next() { return impl_->iterator.next(); }

std::vector<StageStatsSnapshot> InputPipeline::stats() const { return impl_->iterator.stats(); }

}  // namespace sluice
