#include "apps/train_data.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

#include "apps/train_data_readers.h"
#include "sluice/core/errors.h"
#include "sluice/core/file_system.h"
#include "sluice/core/random.h"
#include "sluice/core/strings.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/folder_splits.h"
#include "sluice/dataset/idx_dataset.h"
#include "sluice/dataset/image_folder.h"
#include "sluice/dataset/list_files.h"
#include "sluice/dataset/tfrecord_dataset.h"
#include "sluice/formats/example.h"
#include "sluice/formats/image.h"
#include "sluice/formats/tfrecord_reader.h"
#include "sluice/ops/affine_transform.h"
#include "sluice/ops/resize.h"

namespace sluice::app {
namespace data_internal {

Tensor decode_checked(std::string_view bytes, const Geometry& g, std::string_view source) {
  Tensor image = decode_image(bytes, static_cast<int>(g.channels), source);
  if (!g.resize && (image.dim(0) != g.height || image.dim(1) != g.width)) {
    throw InvalidArgument(str_cat("image ", source, " is ", image.dim(0), "x", image.dim(1),
                                  " but the data's images are ", g.height, "x", g.width,
                                  " (the first one's size); give --image-size N to resize all"));
  }
  return image;
}

Tensor checked_label(int64_t label, const Geometry& g) {
  if (label < 0 || label >= g.classes) {
    throw InvalidArgument(str_cat("label ", label, " is not a class id in [0, ", g.classes, ")"));
  }
  return Tensor::scalar<int64_t>(label);
}

// uint8 pixels, an image or a batch of them, → float32 in [0, 1] at the geometry's size, as the
// tutorials' ToTensor / rescale=1/255 (resized in the same pass when the size differs).
Tensor to_float(const Tensor& pixels, const Geometry& g) {
  Shape shape{g.height, g.width, g.channels};
  if (pixels.rank() == 4) shape = Shape{pixels.dim(0), g.height, g.width, g.channels};
  Tensor images = Tensor::uninitialized(DType::kFloat32, shape);
  resize_into(pixels, ImageSize{g.height, g.width}, images.data<float>(), 1.0f / 255.0f);
  return images;
}

// The tutorials' ImageDataGenerator augmentation (shear 0.2 degrees, zoom 0.2, horizontal
// flip), drawn per example from the map's seeded per-element generator and fused with the
// conversion to float in [0, 1].
Tensor augment_to_float(Tensor pixels, const Geometry& g, const ElementContext& context) {
  static const RandomTransformOptions kAugmentation{
      .shear_range = 0.2, .zoom_range = 0.2, .horizontal_flip = true};
  if (pixels.dim(0) != g.height || pixels.dim(1) != g.width) {
    pixels = resize(pixels, ImageSize{g.height, g.width});
  }
  Random random = context.random();
  const AffineTransformParams params =
      random_transform_params(kAugmentation, g.height, g.width, random);
  Tensor image = Tensor::uninitialized(DType::kFloat32, Shape{g.height, g.width, g.channels});
  apply_affine_transform_to_float(pixels, params, FillMode::kNearest, 0.0f, 1.0f / 255.0f,
                                  image.data<float>());
  return image;
}

Element example(Tensor pixels, Tensor label, const Geometry& g, const ElementContext* augment) {
  Tensor image = augment ? augment_to_float(std::move(pixels), g, *augment) : to_float(pixels, g);
  return Element{{"image", std::move(image)}, {"label", std::move(label)}};
}

namespace {

Dataset batched(const Dataset& examples, int64_t size, const DataOptions& options,
                const BatchConversion& convert) {
  const Dataset batches = examples.batch(size, options.drop_remainder);
  return convert ? batches.map(convert) : batches;
}

}  // namespace

Dataset batches(const Dataset& examples, const DataOptions& options,
                const BatchConversion& convert) {
  return batched(examples, options.batch, options, convert).prefetch(kAutotune);
}

// --- Multi-worker shares, taken at the source so no worker decodes what it drops -----------------

// Whether position p of an epoch of n training examples is this worker's: the rows it takes of
// each global batch, split as mirrored replicas split one (rows [w·k, (w+1)·k), k = ceil(rows /
// workers)), so W workers train on exactly what W mirrored replicas would.
bool is_workers_row(int64_t p, int64_t n, const DataOptions& o) {
  const int64_t first = p / o.batch * o.batch;
  const int64_t rows = std::min(o.batch, n - first);
  const int64_t share = (rows + o.num_workers - 1) / o.num_workers;
  return (p - first) / share == o.worker_index;
}

// The element without its first component (the position enumerate() put there).
Element without_position(Element e) {
  std::vector<Tensor> rest(std::make_move_iterator(e.components().begin() + 1),
                           std::make_move_iterator(e.components().end()));
  if (!e.is_named()) return Element(std::move(rest));
  const auto& names = *e.names();
  return Element(std::move(rest),
                 std::make_shared<const Element::Names>(names.begin() + 1, names.end()));
}

// An epoch's training examples (of n, in their order, not yet decoded) reduced to this worker's.
Dataset training_share(const Dataset& examples, int64_t n, const DataOptions& o) {
  if (o.num_workers == 1) return examples;
  return examples.enumerate()
      .filter([n, o](const Element& e) { return is_workers_row(e[0].item<int64_t>(), n, o); })
      .map(without_position);
}

// This worker's training batches of an epoch of n examples: its rows of every global batch, and
// an empty batch where it has none of the last one, so every worker takes as many steps.
Dataset training_batches(const Dataset& examples, int64_t n, const Geometry& g,
                         const DataOptions& o, const BatchConversion& convert) {
  if (o.num_workers == 1) return batches(examples, o, convert);
  const Dataset mine = batched(examples, o.batch / o.num_workers, o, convert);
  const int64_t last = n % o.batch;
  const int64_t share = (last + o.num_workers - 1) / o.num_workers;
  if (o.drop_remainder || last == 0 || last > o.worker_index * share) {
    return mine.prefetch(kAutotune);
  }
  const Element empty{{"image", Tensor(DType::kFloat32, Shape{0, g.height, g.width, g.channels})},
                      {"label", Tensor(DType::kInt64, Shape{0})}};
  return mine.concatenate(Dataset::from_tensors(empty)).prefetch(kAutotune);
}

// The held-out examples this worker evaluates: every num_workers-th, before decoding; the
// Estimator sums the workers' losses and metrics.
Dataset evaluation_share(const Dataset& examples, const DataOptions& o) {
  return o.num_workers == 1 ? examples : examples.shard(o.num_workers, o.worker_index);
}

// A stable hash of a name under a seed: the held-out share is the names whose hash falls
// below validation_split, the same on every run.
bool held_out(std::string_view name, const DataOptions& options) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, then mixed with the seed.
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  const uint64_t mixed = mix_seed(h, options.seed);
  return static_cast<double>(mixed >> 11) * 0x1.0p-53 < options.validation_split;
}

std::string class_list(const std::vector<std::string>& names) {
  constexpr size_t kShown = 20;
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(names.size(), kShown));
  std::string list = str_join(shown, ", ");
  if (names.size() > kShown) list += str_cat(", ... (", names.size() - kShown, " more)");
  return list;
}

void announce(const DataOptions& options, int64_t examples, const std::vector<std::string>& classes,
              std::string_view what) {
  if (!options.verbose) return;
  std::printf("Found %lld images belonging to %zu classes in %s: %s\n",
              static_cast<long long>(examples), classes.size(), std::string(what).c_str(),
              class_list(classes).c_str());
}

Geometry geometry_of(const Tensor& first, int64_t classes, const DataOptions& options) {
  Geometry g;
  g.resize = options.image_size > 0;
  g.height = g.resize ? options.image_size : first.dim(0);
  g.width = g.resize ? options.image_size : first.dim(1);
  g.channels = options.grayscale || first.dim(2) == 1 ? 1 : 3;
  g.classes = classes;
  return g;
}

}  // namespace data_internal
namespace {

using namespace data_internal;
namespace fs = std::filesystem;

// --- Fashion-MNIST ----------------------------------------------------------------------------

TrainData open_fashion_mnist(const DataOptions& options) {
  static const std::vector<std::string> kClasses = {
      "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
      "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  if (!options.classes.empty() && options.classes != kClasses) {
    throw InvalidArgument("--data fashion-mnist has the classes " + class_list(kClasses) +
                          ", not the model's " + class_list(options.classes));
  }
  const Geometry g{.height = options.image_size > 0 ? options.image_size : 28,
                   .width = options.image_size > 0 ? options.image_size : 28,
                   .channels = 1,
                   .classes = 10,
                   .resize = true};
  const Dataset train = fashion_mnist("train");
  const Dataset test = fashion_mnist("test");
  TrainData data;
  data.name = "fashion-mnist";
  data.class_names = kClasses;
  data.image_shape = Shape{g.height, g.width, g.channels};
  data.train_examples = train.cardinality();
  data.test_examples = test.cardinality();
  data.test_split = "the test files";
  announce(options, data.train_examples, kClasses, "the training files");
  // The images are in memory already (IDX), so the whole split fits one shuffle buffer, and
  // unaugmented batches are gathered as uint8 and converted whole.
  const BatchConversion to_float_batches = [g](Element batch) {
    return Element{{"image", to_float(batch["image"], g)}, {"label", batch["label"]}};
  };
  data.train = [=](uint64_t seed) -> InputFn {
    return [=] {
      const int64_t n = data.train_examples;
      const Dataset shuffled = training_share(train.shuffle(n, seed), n, options);
      if (options.augment) {
        return training_batches(shuffled.map(
                                    [g](Element e, const ElementContext& context) {
                                      return example(e["image"], e["label"], g, &context);
                                    },
                                    {.num_parallel_calls = options.map_parallelism, .seed = seed}),
                                n, g, options);
      }
      return training_batches(shuffled, n, g, options, to_float_batches);
    };
  };
  data.test = [=] { return batches(evaluation_share(test, options), options, to_float_batches); };
  return data;
}

}  // namespace

bool looks_like_tfrecord(const std::string& path) {
  try {
    TFRecordReader reader(path, Compression::kAuto);
    std::string_view record;
    return reader.read_view(record);
  } catch (const Error&) {
    return false;
  }
}

TrainData open_train_data(const std::string& spec, const DataOptions& options) {
  if (options.batch <= 0) throw InvalidArgument("--batch must be > 0");
  if (!(options.validation_split >= 0 && options.validation_split < 1)) {
    throw InvalidArgument(
        str_cat("--validation-split must be in [0, 1), got ", options.validation_split));
  }
  if (options.image_size < 0) throw InvalidArgument("--image-size must be > 0");
  if (options.num_workers < 1 || options.worker_index < 0 ||
      options.worker_index >= options.num_workers) {
    throw InvalidArgument(
        str_cat("worker ", options.worker_index, " of ", options.num_workers, " is not a worker"));
  }
  if (options.batch % options.num_workers != 0) {
    throw InvalidArgument(str_cat("--batch ", options.batch,
                                  " is the global batch: it must be a "
                                  "multiple of the ",
                                  options.num_workers, " workers"));
  }
  if (spec == "fashion-mnist") return open_fashion_mnist(options);
  std::error_code ec;
  const bool records =
      !fs::is_directory(spec, ec) && (spec.find_first_of("*?[,") != std::string::npos ||
                                      (fs::is_regular_file(spec, ec) && looks_like_tfrecord(spec)));
  try {
    return records ? open_records(spec, options) : open_folder(spec, options);
  } catch (...) {
    std::rethrow_exception(add_error_context(std::current_exception(), " (--data " + spec + ")"));
  }
}

}  // namespace sluice::app
