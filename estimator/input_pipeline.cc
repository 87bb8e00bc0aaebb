#include "estimator/input_pipeline.h"

#include "dataset/dataset.h"

namespace sluice {

struct InputPipeline::Impl {
  Iterator iterator;
};

InputPipeline::InputPipeline(const InputFn& input_fn, const Options& options)
    : impl_(std::make_unique<Impl>(Impl{input_fn().prefetch(2).make_iterator(options)})) {}

InputPipeline::~InputPipeline() = default;
InputPipeline::InputPipeline(InputPipeline&&) noexcept = default;
InputPipeline& InputPipeline::operator=(InputPipeline&&) noexcept = default;

std::optional<Element> InputPipeline::next() { return impl_->iterator.next(); }

}  // namespace sluice
