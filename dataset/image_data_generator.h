// image_data_generator: Keras' ImageDataGenerator(...).flow_from_directory(...) as a Dataset of
// batches {"image": float32 [b, h, w, c], "label": ...}. Files are listed as Keras lists them
// (dataset/image_folder.h: folders or zip/tar archives), decoded, resized to target_size, given a
// random geometric transform (ops/affine_transform.h) and rescaled, in a parallel map.
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
// target_size is decoded at a DCT scale before the resize (ops/image_codec.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/random.h"
#include "dataset/dataset.h"
#include "dataset/image_folder.h"
#include "ops/affine_transform.h"
#include "ops/image_shape.h"
#include "ops/resize.h"

namespace sluice {

// The ImageDataGenerator arguments sluice implements, with Keras' meanings and defaults (see
// ops/affine_transform.h for the geometry). rescale comes first, as the tutorials write it.
struct ImageDataGeneratorOptions {
  float rescale = 0;  // 0: none. Multiplies the pixels after the transform (Keras' order).
  double rotation_range = 0;
  double width_shift_range = 0;
  double height_shift_range = 0;
  double shear_range = 0;  // Degrees.
  ZoomRange zoom_range = 0;
  FillMode fill_mode = FillMode::kNearest;
  float cval = 0;
  bool horizontal_flip = false;
  bool vertical_flip = false;
};

enum class ColorMode { kRgb, kGrayscale };

struct FlowFromDirectoryOptions {
  ImageSize target_size = {256, 256};  // {height, width}.
  ColorMode color_mode = ColorMode::kRgb;
  // The classes in label order; empty: the sub-folder names sorted.
  std::vector<std::string> classes;
  int64_t batch_size = 32;
  // Labels as Keras: kCategorical one-hot float32 [b, K]; kBinary and kSparse the class index as
  // float32 [b]; kNone no label (elements {"image"}).
  ClassMode class_mode = ClassMode::kCategorical;
  bool shuffle = true;
  std::optional<uint64_t> seed;  // Unset: a fresh random seed for this flow.
  // How images are resized to target_size before the transform (Keras' default: nearest).
  ResizeMethod interpolation = ResizeMethod::kNearest;
  bool follow_links = false;
  int64_t num_parallel_calls = kAutotune;  // Parallel decode + transform calls.
  bool verbose = true;                     // Prints "Found N images belonging to K classes."
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
  // Throws InvalidArgument for negative ranges or bad zoom bounds.
  explicit ImageDataGenerator(ImageDataGeneratorOptions options = {});

  // Lists `directory` (a folder with one sub-folder per class, or a zip/tar archive of one) now
  // and returns the epoch's batches. Element i of a pass is file perm[i], perm a permutation drawn
  // from (seed, pass) when shuffling, the listing order otherwise; its transform is drawn from
  // (seed, pass, i). Listing errors are thrown here (image_folder's); a file that cannot be read
  // or decoded is an error naming it, failing its batch at its place in the iteration. Each batch
  // is one parallel task writing every image straight into the batch. Buffers: the parallel
  // map's in-flight batches, their buffers kept for reuse by later batches (as many as were
  // ever in flight at once, until the dataset is destroyed), and for an archive the reorder
  // window of its reader.
  DirectoryFlow flow_from_directory(const std::string& directory,
                                    const FlowFromDirectoryOptions& options = {}) const;

  // Keras' get_random_transform: one draw of the geometry for an image of height × width.
  AffineTransformParams get_random_transform(int64_t height, int64_t width, Random& random) const;

  const ImageDataGeneratorOptions& options() const { return options_; }

 private:
  ImageDataGeneratorOptions options_;
  RandomTransformOptions geometry_;
};

inline ImageDataGenerator image_data_generator(ImageDataGeneratorOptions options = {}) {
  return ImageDataGenerator(options);
}

}  // namespace sluice
