// InputPipeline: the Estimator's side of an input_fn — one running iterator over the Dataset it
// returns, with a prefetch of 2 batches so the pipeline prepares the next batch while the model
// runs the current step.
//
// Why a separate, opaque type: dataset/dataset.h (through graph/stage.h) and model/sequential.h
// both declare a `sluice::Input`, so no translation unit can include both. This header includes
// neither, letting estimator/ and its users build models in one file and datasets in another
// (InputFn only names the incomplete Dataset type). See the report of issue 6.
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
