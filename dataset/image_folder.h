// image_folder: a directory with one sub-folder per class as a Dataset of {"path", "label"}
// elements, listed as Keras' flow_from_directory lists it. Decoding is a separate map
// (decode_image_folder), so listing stays cheap and decoding runs in parallel where wanted.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dataset/dataset.h"

namespace sluice {

// How labels are given, as Keras' class_mode.
enum class ClassMode {
  kCategorical,  // float32 one-hot [num_classes] (Keras' default).
  kBinary,       // float32 scalar 0 or 1; REQUIRES exactly two classes.
  kSparse,       // int64 scalar class index.
  kNone,         // No label component.
};

struct ImageFolderOptions {
  // The classes in label order; empty: the sub-folder names sorted (byte order, as Python).
  std::vector<std::string> classes;
  ClassMode class_mode = ClassMode::kCategorical;
  // File extensions kept, compared without letter case ("JPG" is kept).
  std::vector<std::string> allowed_extensions = {"jpg", "jpeg", "png", "bmp", "ppm", "tif", "tiff"};
  // Whether the listing descends through symbolic links to directories inside class folders.
  bool follow_links = false;
  // Prints "Found N images belonging to K classes." to stdout, as Keras does.
  bool verbose = true;
};

struct ImageFolder {
  // Element i: {"path": string scalar, "label": as class_mode} ("path" only for kNone), in class
  // order, and within a class in sorted path order (files in nested folders included).
  Dataset dataset;
  std::vector<std::string> class_names;               // Index → name.
  std::map<std::string, int64_t> class_indices;       // Name → index (Keras' class_indices).
  std::vector<std::string> filenames;                 // Element i's path.
  std::vector<int64_t> labels;                        // Element i's class index.
  ClassMode class_mode = ClassMode::kCategorical;
};

// Lists `dir` when called (files added later are not seen). Throws NotFound when `dir` or a
// class given in options.classes does not exist; InvalidArgument when `dir` has no class
// folders (and none are given), for duplicate class names, or for kBinary without exactly two
// classes. A class folder with no images is allowed.
ImageFolder image_folder(const std::string& dir, const ImageFolderOptions& options = {});

// The folder's images decoded: {"image": uint8 [h, w, channels], "label"} (or {"image"} alone
// for kNone). channels as decode_image (0: as encoded). Decode errors name the file and arrive
// at the element's place; num_parallel_calls as Dataset::map.
Dataset decode_image_folder(const ImageFolder& folder, int channels = 0,
                            int64_t num_parallel_calls = 0);

// The label tensor for class `index` under `mode` (kNone: an empty optional is not needed, so
// it REQUIRES mode != kNone).
Tensor class_label(int64_t index, int64_t num_classes, ClassMode mode);

}  // namespace sluice
