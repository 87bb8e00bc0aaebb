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

// `spec` is "fashion-mnist" (the Debian package's files); an image folder with one sub-folder
// per class (or a zip/tar of one) whose images share one size, where a folder with "train" and
// "test" sub-folders uses them as the splits and otherwise serves as both; or TFRecords of
// Examples as `sluice records convert` writes them (image/encoded, image/class/label,
// image/class/text): "TRAIN_GLOB[,TEST_GLOB]", the test split defaulting to the train glob with
// its last "train" replaced by "test" when that matches, else the training files. The decode and
// uint8 → float maps run with `map_parallelism` calls (kAutotune: the thread budget).
// With `augment`, training examples get the tutorials' ImageDataGenerator augmentation (shear
// 0.2, zoom 0.2, horizontal flip), seeded by the epoch's seed (the test split never).
// With `drop_remainder` both splits drop a partial last batch (static batch shapes, as
// TPUStrategy requires). Throws NotFound or InvalidArgument naming the spec.
TrainData open_train_data(const std::string& spec, int64_t batch_size, int64_t map_parallelism,
                          bool augment = false, bool drop_remainder = false);

}  // namespace sluice::app
