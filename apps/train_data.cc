#include "apps/train_data.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <map>

#include "core/errors.h"
#include "dataset/dataset.h"
#include "dataset/idx_dataset.h"
#include "dataset/image_folder.h"
#include "dataset/list_files.h"
#include "dataset/tfrecord_dataset.h"
#include "formats/example.h"
#include "formats/image.h"
#include "formats/tfrecord_reader.h"
#include "ops/affine_transform.h"

namespace sluice::app {
namespace {

// uint8 pixels → float32 in [0, 1], as the tutorials' ToTensor / rescale=1/255.
Element to_float(Element e) {
  const Tensor& pixels = e["image"];
  Tensor image(DType::kFloat32, pixels.shape());
  const auto in = pixels.values<uint8_t>();
  auto out = image.values<float>();
  for (size_t i = 0; i < in.size(); ++i) out[i] = static_cast<float>(in[i]) * (1.0f / 255.0f);
  return Element{{"image", std::move(image)}, {"label", e["label"]}};
}

// The tutorials' ImageDataGenerator augmentation (shear 0.2 degrees, zoom 0.2, horizontal
// flip), drawn per example from the map's seeded per-element generator and fused with the
// conversion to float in [0, 1].
Element augment_to_float(Element e, const ElementContext& context) {
  static const RandomTransformOptions kAugmentation{
      .shear_range = 0.2, .zoom_range = 0.2, .horizontal_flip = true};
  const Tensor& pixels = e["image"];
  Random random = context.random();
  const AffineTransformParams params =
      random_transform_params(kAugmentation, pixels.dim(0), pixels.dim(1), random);
  Tensor image(DType::kFloat32, pixels.shape());
  apply_affine_transform_to_float(pixels, params, FillMode::kNearest, 0.0f, 1.0f / 255.0f,
                                  image.data<float>());
  return Element{{"image", std::move(image)}, {"label", e["label"]}};
}

TrainData make(std::string name, Dataset train, Dataset test, int64_t batch, int64_t parallelism,
               std::vector<std::string> classes, bool augment, bool drop_remainder) {
  TrainData data;
  data.name = std::move(name);
  data.train_examples = train.cardinality();
  data.test_examples = test.cardinality();
  data.class_names = std::move(classes);
  const int64_t buffer = std::max<int64_t>(data.train_examples, 1);
  data.train = [=](uint64_t seed) -> InputFn {
    return [=] {
      const Dataset shuffled = train.shuffle(buffer, seed);
      return (augment ? shuffled.map(augment_to_float,
                                     {.num_parallel_calls = parallelism, .seed = seed})
                      : shuffled.map(to_float, {.num_parallel_calls = parallelism}))
          .batch(batch, drop_remainder)
          .prefetch(kAutotune);
    };
  };
  data.test = [=] {
    return test.map(to_float, {.num_parallel_calls = parallelism})
        .batch(batch, drop_remainder)
        .prefetch(kAutotune);
  };
  return data;
}

Dataset folder_dataset(const std::string& dir, std::vector<std::string>* classes) {
  ImageFolderOptions options;
  options.class_mode = ClassMode::kSparse;
  options.verbose = false;
  const ImageFolder folder = image_folder(dir, options);
  if (classes) *classes = folder.class_names;
  return decode_image_folder(folder, 0, kAutotune);
}

// What a TFRecord split written by `sluice records convert` holds, read once up front: the
// record count (the Estimator's epochs need it) and the class names by label.
struct RecordsSummary {
  int64_t records = 0;
  int64_t max_label = -1;
  std::map<int64_t, std::string> class_text;
};

const FeatureSpec& label_spec() {
  static const FeatureSpec spec{
      {"image/class/label", FixedLenFeature{{}, DType::kInt64}},
      {"image/class/text", FixedLenFeature{{}, DType::kString, Tensor::scalar(std::string())}}};
  return spec;
}

RecordsSummary summarize_records(const std::vector<std::string>& files) {
  RecordsSummary summary;
  std::string_view record;
  for (const std::string& file : files) {
    TFRecordReader reader(file, Compression::kAuto);
    while (reader.read_view(record)) {
      const Element e = parse_single_example(record, label_spec(), reader.record_index() - 1);
      const int64_t label = e["image/class/label"].item<int64_t>();
      const std::string text = e["image/class/text"].item<std::string>();
      if (label < 0) {
        throw InvalidArgument("negative image/class/label " + std::to_string(label) +
                              " in record " + std::to_string(reader.record_index() - 1) + " of " +
                              file);
      }
      if (!text.empty()) summary.class_text.emplace(label, text);
      summary.max_label = std::max(summary.max_label, label);
      ++summary.records;
    }
  }
  return summary;
}

// tf.train.Examples with image/encoded (JPEG or PNG) and image/class/label as
// {"image": uint8 [h, w, c], "label": int64}.
Dataset records_dataset(const std::vector<std::string>& files, int64_t parallelism) {
  static const FeatureSpec spec{{"image/encoded", FixedLenFeature{{}, DType::kString}},
                                {"image/class/label", FixedLenFeature{{}, DType::kInt64}}};
  return TFRecordDataset(files, "AUTO")
      .map(
          [](const Tensor& record) {
            const Element e = parse_single_example(record.item<std::string>(), spec);
            return Element{{"image", decode_image(e["image/encoded"].item<std::string>())},
                           {"label", e["image/class/label"]}};
          },
          {.num_parallel_calls = parallelism});
}

// `spec` is "TRAIN_GLOB" or "TRAIN_GLOB,TEST_GLOB". Without a test glob, the train glob with its
// last "train" replaced by "test" when that matches files, else the training files themselves.
TrainData open_records(const std::string& spec, int64_t batch, int64_t parallelism, bool augment,
                       bool drop_remainder) {
  const size_t comma = spec.find(',');
  const std::string train_glob = spec.substr(0, comma);
  std::vector<std::string> test_files;
  if (comma != std::string::npos) {
    test_files = matching_files({spec.substr(comma + 1)});
    if (test_files.empty())
      throw InvalidArgument("No files matched pattern: " + spec.substr(comma + 1));
  } else if (const size_t at = train_glob.rfind("train"); at != std::string::npos) {
    std::string test_glob = train_glob;
    test_glob.replace(at, 5, "test");
    test_files = matching_files({test_glob});
  }
  const std::vector<std::string> train_files = matching_files({train_glob});
  if (train_files.empty()) throw InvalidArgument("No files matched pattern: " + train_glob);
  if (test_files.empty()) test_files = train_files;
  const RecordsSummary train = summarize_records(train_files);
  const int64_t test_records =
      test_files == train_files ? train.records : summarize_records(test_files).records;
  // Named by image/class/text where the records have it, else by number.
  std::vector<std::string> classes;
  for (int64_t label = 0; label <= train.max_label; ++label) {
    auto it = train.class_text.find(label);
    classes.push_back(it != train.class_text.end() ? it->second : std::to_string(label));
  }
  TrainData data = make(spec, records_dataset(train_files, parallelism),
                        records_dataset(test_files, parallelism), batch, parallelism, classes,
                        augment, drop_remainder);
  data.train_examples = train.records;
  data.test_examples = test_records;
  return data;
}

}  // namespace

TrainData open_train_data(const std::string& spec, int64_t batch_size, int64_t map_parallelism,
                          bool augment, bool drop_remainder) {
  if (batch_size <= 0) throw InvalidArgument("--batch must be > 0");
  if (spec == "fashion-mnist") {
    return make("fashion-mnist", fashion_mnist("train"), fashion_mnist("test"), batch_size,
                map_parallelism,
                {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                 "Sneaker", "Bag", "Ankle boot"},
                augment, drop_remainder);
  }
  namespace fs = std::filesystem;
  if (spec.find_first_of("*?[,") != std::string::npos ||
      (fs::is_regular_file(spec) && spec.find(".tfrecord") != std::string::npos)) {
    try {
      return open_records(spec, batch_size, map_parallelism, augment, drop_remainder);
    } catch (...) {
      std::rethrow_exception(add_error_context(std::current_exception(), " (--data " + spec + ")"));
    }
  }
  std::vector<std::string> classes;
  if (fs::is_directory(fs::path(spec) / "train") && fs::is_directory(fs::path(spec) / "test")) {
    Dataset train = folder_dataset((fs::path(spec) / "train").string(), &classes);
    Dataset test = folder_dataset((fs::path(spec) / "test").string(), nullptr);
    return make(spec, train, test, batch_size, map_parallelism, classes, augment, drop_remainder);
  }
  Dataset all = folder_dataset(spec, &classes);
  return make(spec, all, all, batch_size, map_parallelism, classes, augment, drop_remainder);
}

}  // namespace sluice::app
