// image_data_generator: Keras' ImageDataGenerator(...).flow_from_directory(...) as a Dataset of
// batches {"image": float32 [b, h, w, c], "label": ...}. Files are listed as Keras lists them
// (dataset/image_folder.h: folders or zip/tar archives), decoded, resized to target_size, given a
// random transform (geometry: ops/affine_transform.h; channel shift and brightness:
// ops/color.h) and standardized (rescale, sample-wise centring / normalisation), in a parallel map.
//
//   auto train = image_data_generator({.rescale = 1 / 255.f, .shear_range = 0.2,
//                                      .zoom_range = 0.2, .horizontal_flip = true})
//                    .flow_from_directory("data/train", {.target_size = {128, 128},
//                                                        .batch_size = 32,
//                                                        .class_mode = ClassMode::kBinary});
//   for (const Element& batch : train.dataset) { ... }
//
// Differences from Keras, on purpose: the dataset is one epoch (ceil(n / batch_size) batches;
// add repeat() for more), reshuffled for every pass as Keras reshuffles at each epoch; randomness
// comes from sluice's seeded generator (core/random.h), so a seed gives the same batches and the
// same augmentation whatever the thread count, but not NumPy's numbers; a JPEG much larger than
// target_size is decoded at a DCT scale before the resize (ops/image_codec.h), and the resize is
// sluice's (ops/resize.h), not PIL's. A subset without validation_split is an error (Keras gives
// every file to "training" and none to "validation"). The data-dependent featurewise_* and
// zca_whitening options, which need Keras' fit(), are refused as Unimplemented.
//
// Saved state (Iterator::save): the pass's seed and number, from which its order follows, and the
// position in it; then the parallel map's (graph/stages/map.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/random.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/image_folder.h"
#include "sluice/ops/affine_transform.h"
#include "sluice/ops/color.h"
#include "sluice/ops/image_shape.h"
#include "sluice/ops/resize.h"

namespace sluice {

// Keras' brightness_range: the factor is drawn uniformly from [lower, upper].
struct BrightnessRange {
  double lower = 1;
  double upper = 1;
};

// The ImageDataGenerator arguments, with Keras' meanings and defaults (see ops/affine_transform.h
// for the geometry). rescale comes first, as the tutorials write it; the others in Keras' order.
// Per image, in Keras' order: the affine transform and flips, channel shift, brightness (all in
// the decoded 0-255 units), then preprocessing_function, rescale, sample-wise centring and
// normalisation.
struct ImageDataGeneratorOptions {
  float rescale = 0;  // 0: none. Multiplies the pixels after the transform (Keras' order).
  // Refused (Unimplemented): they need statistics of the data set (Keras' fit()).
  bool featurewise_center = false;
  // x -= mean(x), the mean over the whole image (all channels), as Keras.
  bool samplewise_center = false;
  bool featurewise_std_normalization = false;  // Refused, as featurewise_center.
  // x /= (std(x) + 1e-6) over the whole image, after centring; implies samplewise_center (Keras
  // turns it on with a warning).
  bool samplewise_std_normalization = false;
  bool zca_whitening = false;  // Refused, as featurewise_center.
  double rotation_range = 0;
  double width_shift_range = 0;
  double height_shift_range = 0;
  // Unset: no brightness change. Set: a factor b ~ U(lower, upper) per image, applied as PIL's
  // ImageEnhance.Brightness (ops/color.h apply_brightness_shift; values become whole numbers).
  // Throws InvalidArgument unless 0 <= lower <= upper.
  std::optional<BrightnessRange> brightness_range;
  double shear_range = 0;  // Degrees.
  ZoomRange zoom_range = 0;
  // An intensity ~ U(-r, r) per image added to every channel, clipped to the image's range
  // (ops/color.h apply_channel_shift). In 0-255 units (before rescale). r >= 0.
  double channel_shift_range = 0;
  FillMode fill_mode = FillMode::kNearest;
  float cval = 0;
  bool horizontal_flip = false;
  bool vertical_flip = false;
  // Keras' preprocessing_function: called on each image (float32 [h, w, c], 0-255 units) after
  // the random transform and before rescale; must return a float32 tensor of the same shape
  // (else InvalidArgument, failing the batch). Called from several threads at once.
  std::function<Tensor(const Tensor&)> preprocessing_function;
  // The fraction of each class kept for FlowFromDirectoryOptions::subset "validation"; in [0, 1).
  double validation_split = 0;
};

// Keras' color_mode: the channel count of the images (1, 3 or 4). "rgba" gives an opaque alpha
// channel (255) to images that have none, as PIL's convert("RGBA").
enum class ColorMode { kRgb, kGrayscale, kRgba };

struct FlowFromDirectoryOptions {
  ImageSize target_size = {256, 256};  // {height, width}.
  ColorMode color_mode = ColorMode::kRgb;
  // The classes in label order; empty: the sub-folder names sorted.
  std::vector<std::string> classes;
  int64_t batch_size = 32;
  // Labels as Keras: kCategorical one-hot float32 [b, K]; kBinary and kSparse the class index as
  // float32 [b]; kInput the images themselves (the same float32 [b, h, w, c] tensor);
  // kNone no label (elements {"image"}).
  ClassMode class_mode = ClassMode::kCategorical;
  bool shuffle = true;
  std::optional<uint64_t> seed;  // Unset: a fresh random seed for this flow.
  // How images are resized to target_size before the transform (Keras' default: nearest).
  ResizeMethod interpolation = ResizeMethod::kNearest;
  // Keras' keep_aspect_ratio: an image whose size differs from target_size is first cropped to
  // the largest centred window with the target's aspect ratio (Keras' integer arithmetic:
  // crop_height = min(h, w * target_h / target_w), offsets (h - crop_height) / 2, rounding down)
  // and then resized. For a JPEG decoded at a DCT scale the window is taken on the scaled image.
  bool keep_aspect_ratio = false;
  bool follow_links = false;
  // "" (all files), "training" or "validation": Keras' per-class split by the generator's
  // validation_split (see ImageFolderOptions). "Found N images ..." counts the subset.
  std::string subset;
  int64_t num_parallel_calls = kAutotune;  // Parallel decode + transform calls.
  bool verbose = true;                     // Prints "Found N images belonging to K classes."
};

// One draw of get_random_transform: the geometry and, when their ranges are set, the colour
// changes (Keras' transform_parameters).
struct TransformParams {
  AffineTransformParams geometry;
  std::optional<double> channel_shift_intensity;
  std::optional<double> brightness;
};

// What flow_from_directory gives: the dataset and Keras' DirectoryIterator attributes.
struct DirectoryFlow {
  Dataset dataset;
  std::vector<std::string> class_names;          // Index -> name.
  std::map<std::string, int64_t> class_indices;  // Name -> index.
  std::vector<std::string> filenames;            // In listing order (class, then path).
  std::vector<int64_t> classes;                  // Class index of each file, listing order.
  int64_t samples = 0;
  operator const Dataset&() const { return dataset; }  // NOLINT: used where a Dataset is.
};

class ImageDataGenerator {
 public:
  // Throws InvalidArgument naming the option for negative ranges, bad zoom or brightness bounds
  // or a validation_split outside [0, 1); Unimplemented for featurewise_center,
  // featurewise_std_normalization and zca_whitening.
  explicit ImageDataGenerator(ImageDataGeneratorOptions options = {});

  // Lists `directory` (a folder with one sub-folder per class, or a zip/tar archive of one) now
  // and returns the epoch's batches. Element i of a pass is file perm[i], perm a permutation drawn
  // from (seed, pass) when shuffling, the listing order otherwise; its transform is drawn from
  // (seed, pass, i). Listing errors are thrown here (image_folder's; InvalidArgument for a bad
  // subset); a file that cannot be read
  // or decoded is an error naming it, failing its batch at its place in the iteration. Each batch
  // is one parallel task writing every image straight into the batch. Buffers: the parallel
  // map's in-flight batches, their buffers kept for reuse by later batches (as many as were
  // ever in flight at once, until the dataset is destroyed), and for an archive the reorder
  // window of its reader.
  DirectoryFlow flow_from_directory(const std::string& directory,
                                    const FlowFromDirectoryOptions& options = {}) const;

  // Keras' get_random_transform for an image of height × width, drawing in Keras' order:
  // rotation, height shift, width shift, shear, zoom (zx, zy), horizontal flip, vertical flip
  // (see random_transform_params), then the channel shift intensity when channel_shift_range is
  // non-zero, then the brightness factor when brightness_range is set.
  TransformParams get_random_transform(int64_t height, int64_t width, Random& random) const;

  // Keras' apply_transform on one image [h, w, c] (uint8 or float32, in 0-255 units): the affine
  // transform and flips (fill_mode, cval), the channel shift, the brightness. float32 result.
  Tensor apply_transform(const Tensor& image, const TransformParams& params) const;
  // Keras' standardize on a float32 image [h, w, c]: preprocessing_function, rescale, then
  // sample-wise centring and normalisation. Returns a new tensor.
  Tensor standardize(const Tensor& image) const;
  // get_random_transform, apply_transform, standardize: what flow_from_directory does to each
  // image after the resize.
  Tensor random_transform(const Tensor& image, Random& random) const;

  const ImageDataGeneratorOptions& options() const { return options_; }

 private:
  // apply_transform then standardize, written to `out` (h * w * channels floats: the image's
  // channels, or a grey image's one repeated). REQUIRES a rank-3 uint8 or float32 image, and 1, 3
  // or 4 channels when brightness is in `params`.
  void transform_into(const Tensor& image, const TransformParams& params, int64_t channels,
                      float* out) const;

  ImageDataGeneratorOptions options_;
  RandomTransformOptions geometry_;
};

inline ImageDataGenerator image_data_generator(ImageDataGeneratorOptions options = {}) {
  return ImageDataGenerator(options);
}

}  // namespace sluice
