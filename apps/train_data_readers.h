// The pieces the --data readers share (apps/train_data.cc, apps/train_data_folder.cc,
// apps/train_data_records.cc): what every example becomes, checks that name the input, and each
// worker's share. Internal to those files.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/train_data.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/image_folder.h"

namespace sluice::app::data_internal {

// Encoded examples a training shuffle buffer may hold: records are shuffled within this many
// bytes (tf.data's advice: a buffer as large as memory allows), file order every epoch.
constexpr int64_t kShuffleBufferBytes = int64_t{256} << 20;

// What every example becomes: [height, width, channels] float32, with a label below `classes`.
struct Geometry {
  int64_t height = 0;
  int64_t width = 0;
  int64_t channels = 0;
  int64_t classes = 0;
  bool resize = false;  // Images of another size are resized, not refused.
};

// The image `bytes` decoded as `g` says. Throws InvalidArgument naming `source` for an image of
// another size when g does not resize.
Tensor decode_checked(std::string_view bytes, const Geometry& g, std::string_view source);
// `label` as a tensor; InvalidArgument unless it is a class id below g.classes.
Tensor checked_label(int64_t label, const Geometry& g);
// {"image", "label"}: pixels as float32 in [0, 1], augmented when `augment` is given.
Element example(Tensor pixels, Tensor label, const Geometry& g, const ElementContext* augment);
// Runs on each batch as a whole, before it is prefetched.
using BatchConversion = std::function<Element(Element)>;
// How each split's examples become batches, each converted by `convert` when it is given.
Dataset batches(const Dataset& examples, const DataOptions& options,
                const BatchConversion& convert = {});
// Whether position p of an epoch of n training examples is this worker's: the rows it takes of
// each global batch, split as mirrored replicas split one.
bool is_workers_row(int64_t p, int64_t n, const DataOptions& o);
// An epoch's training examples (of n, in their order, not yet decoded) reduced to this worker's.
Dataset training_share(const Dataset& examples, int64_t n, const DataOptions& o);
// This worker's training batches of an epoch of n examples: its rows of every global batch, and
// an empty batch where it has none of the last one, so every worker takes as many steps.
Dataset training_batches(const Dataset& examples, int64_t n, const Geometry& g,
                         const DataOptions& o, const BatchConversion& convert = {});
// The held-out examples this worker evaluates: every num_workers-th, before decoding; the
// Estimator sums the workers' losses and metrics.
Dataset evaluation_share(const Dataset& examples, const DataOptions& o);
// A stable hash of a name under a seed: the held-out share is the names whose hash falls
// below validation_split, the same on every run.
bool held_out(std::string_view name, const DataOptions& options);
// The first class names, for messages.
std::string class_list(const std::vector<std::string>& names);
// Keras' "Found N images belonging to C classes" line, when options.verbose.
void announce(const DataOptions& options, int64_t examples, const std::vector<std::string>& classes,
              std::string_view what);
// The geometry of the data whose first image is `first`.
Geometry geometry_of(const Tensor& first, int64_t classes, const DataOptions& options);

// The positions of `folder` for which keep(position) holds, in order.
template <class Keep>
ImageFolder kept(const ImageFolder& folder, Keep keep) {
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < static_cast<int64_t>(folder.filenames.size()); ++i) {
    if (keep(i)) positions.push_back(i);
  }
  return select_images(folder, positions);
}

// The readers, one per kind of --data.
TrainData open_folder(const std::string& spec, const DataOptions& options);
TrainData open_records(const std::string& spec, const DataOptions& options);

}  // namespace sluice::app::data_internal
