// The datasets behind the --data flag of `sluice train / evaluate / predict`, as input_fns of
// float batches {"image": float32 [batch, h, w, c] in [0, 1], "label": int64 [batch]}.
// Kept apart from the model side of the commands: dataset/ and model/ headers cannot share a
// translation unit (estimator/input_pipeline.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/shape.h"
#include "estimator/input_pipeline.h"

namespace sluice::app {

struct TrainData {
  std::string name;  // "fashion-mnist" or the folder given.
  // One pass over the training examples, shuffled (whole split in one buffer) with `seed`.
  std::function<InputFn(uint64_t seed)> train;
  InputFn test;  // One pass over the test examples in order.
  int64_t train_examples = 0;
  int64_t test_examples = 0;
  std::vector<std::string> class_names;
};

// `spec` is "fashion-mnist" (the Debian package's files) or an image folder with one sub-folder
// per class (or a zip/tar of one) whose images share one size; a folder with "train" and "test"
// sub-folders uses them as the splits, otherwise the folder serves as both. The uint8 → float
// map runs with `map_parallelism` calls (kAutotune: the thread budget).
// Throws NotFound or InvalidArgument naming the spec; TFRecord globs are Unimplemented for now.
TrainData open_train_data(const std::string& spec, int64_t batch_size, int64_t map_parallelism);

}  // namespace sluice::app
