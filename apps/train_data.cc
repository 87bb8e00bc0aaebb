#include "apps/train_data.h"

#include <filesystem>

#include "core/errors.h"
#include "dataset/dataset.h"
#include "dataset/idx_dataset.h"
#include "dataset/image_folder.h"

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

TrainData make(std::string name, Dataset train, Dataset test, int64_t batch, int64_t parallelism,
               std::vector<std::string> classes) {
  TrainData data;
  data.name = std::move(name);
  data.train_examples = train.cardinality();
  data.test_examples = test.cardinality();
  data.class_names = std::move(classes);
  const int64_t buffer = std::max<int64_t>(data.train_examples, 1);
  data.train = [=](uint64_t seed) -> InputFn {
    return [=] {
      return train.shuffle(buffer, seed)
          .map(to_float, {.num_parallel_calls = parallelism})
          .batch(batch)
          .prefetch(kAutotune);
    };
  };
  data.test = [=] {
    return test.map(to_float, {.num_parallel_calls = parallelism}).batch(batch).prefetch(kAutotune);
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

}  // namespace

TrainData open_train_data(const std::string& spec, int64_t batch_size, int64_t map_parallelism) {
  if (batch_size <= 0) throw InvalidArgument("--batch must be > 0");
  if (spec == "fashion-mnist") {
    return make("fashion-mnist", fashion_mnist("train"), fashion_mnist("test"), batch_size,
                map_parallelism,
                {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                 "Sneaker", "Bag", "Ankle boot"});
  }
  if (spec.find_first_of("*?[") != std::string::npos) {
    throw Unimplemented("--data " + spec +
                        ": TFRecord input is not wired into the train command yet; use "
                        "fashion-mnist or an image folder");
  }
  namespace fs = std::filesystem;
  std::vector<std::string> classes;
  if (fs::is_directory(fs::path(spec) / "train") && fs::is_directory(fs::path(spec) / "test")) {
    Dataset train = folder_dataset((fs::path(spec) / "train").string(), &classes);
    Dataset test = folder_dataset((fs::path(spec) / "test").string(), nullptr);
    return make(spec, train, test, batch_size, map_parallelism, classes);
  }
  Dataset all = folder_dataset(spec, &classes);
  return make(spec, all, all, batch_size, map_parallelism, classes);
}

}  // namespace sluice::app
