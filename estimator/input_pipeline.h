// InputPipeline: the Estimator's side of an input_fn — one running iterator over the Dataset it
// returns, with a prefetch of 2 batches so the pipeline prepares the next batch while the model
// runs the current step.
//
// An opaque type so that estimator/ headers need neither dataset/ nor graph/ headers: InputFn
// only names the incomplete Dataset type, and the iterator lives behind Impl.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "core/element.h"
#include "graph/options.h"

namespace sluice {

class Dataset;  // dataset/dataset.h

// Returns the Dataset of batches to read; called once per train / evaluate / predict call.
using InputFn = std::function<Dataset()>;

class InputPipeline {
 public:
  // Calls input_fn and starts iterating its dataset (prefetching 2 batches) with `options`.
  // Errors of input_fn and of building the iterator propagate.
  InputPipeline(const InputFn& input_fn, const Options& options);
  ~InputPipeline();
  InputPipeline(InputPipeline&&) noexcept;
  InputPipeline& operator=(InputPipeline&&) noexcept;

  // The next batch, nullopt at the end of the input; errors of the data propagate
  // (Iterator::next()).
  std::optional<Element> next();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
