// The --data sources of `sluice train`: TFRecords of Examples as `sluice records convert` writes
// them, with their split, class names and errors.
#include "apps/train_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/idx_dataset.h"
#include "sluice/formats/example_values.h"
#include "sluice/formats/png.h"
#include "sluice/formats/tfrecord_writer.h"
#include "tests/formats/testing.h"

namespace sluice::app {
namespace {

class TrainDataTest : public sluice::testing::TempDirTest {
 protected:
  // `n` Examples of 4×4 grey PNGs whose pixels all equal their label (i % 3), classes named.
  void write_split(const std::string& name, int n, Compression compression = Compression::kNone) {
    TFRecordWriter writer(path(name), compression);
    const char* names[] = {"zero", "one", "two"};
    for (int i = 0; i < n; ++i) {
      const int64_t label = i % 3;
      Tensor image(DType::kUInt8, {4, 4, 1});
      for (uint8_t& v : image.values<uint8_t>()) v = static_cast<uint8_t>(label * 100);
      ExampleValues e;
      e["image/encoded"] = FeatureValues::of_bytes({encode_png(image)});
      e["image/class/label"] = FeatureValues::of_ints({label});
      e["image/class/text"] = FeatureValues::of_bytes({names[label]});
      writer.write(serialize_example(e));
    }
  }

  // Every (label, first pixel) of one pass, in order.
  static std::vector<std::pair<int64_t, float>> read_all(const InputFn& input) {
    std::vector<std::pair<int64_t, float>> out;
    for (const Element& batch : input()) {
      const Tensor& images = batch["image"];
      const Tensor& labels = batch["label"];
      EXPECT_EQ(images.dtype(), DType::kFloat32);
      EXPECT_EQ(images.shape().rank(), 4);
      for (int64_t i = 0; i < labels.dim(0); ++i) {
        out.emplace_back(labels.values<int64_t>()[i], images.select(i).values<float>()[0]);
      }
    }
    return out;
  }
};

TEST_F(TrainDataTest, ReadsRecordsWithTheTestSplitBesideTheTrainGlob) {
  write_split("train-00000-of-00002", 7);
  write_split("train-00001-of-00002", 5, Compression::kGzip);
  write_split("test-00000-of-00001", 4);
  const TrainData data = open_train_data(path("train-*"), {.batch = 4, .map_parallelism = 2});
  EXPECT_EQ(data.train_examples, 12);
  EXPECT_EQ(data.test_examples, 4);
  EXPECT_EQ(data.class_names, (std::vector<std::string>{"zero", "one", "two"}));
  const auto test = read_all(data.test);
  ASSERT_EQ(test.size(), 4u);
  for (size_t i = 0; i < test.size(); ++i) {
    EXPECT_EQ(test[i].first, int64_t(i % 3));
    EXPECT_FLOAT_EQ(test[i].second, float(i % 3) * 100.0f / 255.0f);  // Decoded and rescaled.
  }
  const auto train = read_all(data.train(7));
  EXPECT_EQ(train.size(), 12u);
  for (const auto& [label, pixel] : train) EXPECT_FLOAT_EQ(pixel, float(label) * 100.0f / 255.0f);
}

TEST_F(TrainDataTest, AnExplicitTestGlobOrNoneAtAll) {
  write_split("a.tfrecord", 6);
  write_split("b.tfrecord", 3);
  const TrainData both =
      open_train_data(path("a.tfrecord") + "," + path("b.*"), {.batch = 2, .map_parallelism = 1});
  EXPECT_EQ(both.train_examples, 6);
  EXPECT_EQ(both.test_examples, 3);
  // A single file without a test split is never evaluated on: no held-out split at all, unless
  // the data is given for evaluation.
  const TrainData alone = open_train_data(path("a.tfrecord"), {.batch = 2});
  EXPECT_FALSE(alone.test);
  const TrainData given = open_train_data(path("a.tfrecord"), {.batch = 2, .all_held_out = true});
  EXPECT_EQ(given.test_examples, 6);
  EXPECT_EQ(read_all(given.test).size(), 6u);
}

TEST_F(TrainDataTest, AugmentChangesTrainingImagesReproduciblyAndNeverTheTestSplit) {
  // 8×8 horizontal ramps: a flip or zoom changes them, unlike the uniform images above.
  {
    TFRecordWriter writer(path("ramps.tfrecord"));
    for (int i = 0; i < 16; ++i) {
      Tensor image(DType::kUInt8, {8, 8, 1});
      auto pixels = image.values<uint8_t>();
      for (size_t p = 0; p < pixels.size(); ++p) pixels[p] = static_cast<uint8_t>((p % 8) * 30 + i);
      ExampleValues e;
      e["image/encoded"] = FeatureValues::of_bytes({encode_png(image)});
      e["image/class/label"] = FeatureValues::of_ints({i % 2});
      writer.write(serialize_example(e));
    }
  }
  auto images = [](const InputFn& input) {
    std::vector<float> out;
    for (const Element& batch : input()) {
      const auto v = batch["image"].values<float>();
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  };
  const TrainData plain = open_train_data(path("ramps.tfrecord"),
                                          {.batch = 4, .map_parallelism = 2, .all_held_out = true});
  const TrainData augmented =
      open_train_data(path("ramps.tfrecord"),
                      {.batch = 4, .map_parallelism = 2, .augment = true, .all_held_out = true});
  const std::vector<float> a = images(augmented.train(3));
  EXPECT_EQ(a, images(augmented.train(3)));  // Same seed, same augmentation.
  EXPECT_NE(a, images(plain.train(3)));      // Same order, different pixels.
  EXPECT_NE(a, images(augmented.train(4)));  // Another epoch's seed, another draw.
  EXPECT_EQ(images(augmented.test), images(plain.test));
  for (float v : a) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
  }
}

TEST_F(TrainDataTest, ErrorsNameTheDataAndTheRecord) {
  try {
    open_train_data(path("nothing-*"), {.batch = 2});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("No files matched pattern"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("--data"), std::string::npos) << e.what();
  }
  {
    TFRecordWriter writer(path("bad.tfrecord"));
    ExampleValues e;
    e["image/encoded"] = FeatureValues::of_bytes({"x"});
    writer.write(serialize_example(e));  // No label.
  }
  try {
    open_train_data(path("bad.tfrecord"), {.batch = 2});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("image/class/label"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.tfrecord"), std::string::npos) << e.what();
  }
}

TEST_F(TrainDataTest, AHugeLabelIsAnErrorNamingItsRecordNotAnAllocation) {
  write_split("huge.tfrecord", 20);
  {
    // Appended: a 21st record whose label would size a class list of 2^40 names.
    TFRecordWriter writer(path("huge2.tfrecord"));
    ExampleValues e;
    e["image/encoded"] = FeatureValues::of_bytes({encode_png(Tensor(DType::kUInt8, {4, 4, 1}))});
    e["image/class/label"] = FeatureValues::of_ints({int64_t{1} << 40});
    writer.write(serialize_example(e));
  }
  const std::string message = sluice::testing::error_of<InvalidArgument>(
      [&] { open_train_data(path("huge*.tfrecord"), {.batch = 2}); });
  EXPECT_NE(message.find("huge2.tfrecord record 0 has 1099511627776"), std::string::npos)
      << message;
  EXPECT_NE(message.find("the class ids 0..K-1"), std::string::npos) << message;
}

TEST_F(TrainDataTest, ClassSortedRecordsAreShuffledAcrossTheWholeSet) {
  // 60 records sorted by class (20 of each): the first batch of a pass mixes the classes, and
  // every epoch's order differs while holding every record once.
  {
    TFRecordWriter writer(path("sorted.tfrecord"));
    for (int64_t label = 0; label < 3; ++label) {
      for (int i = 0; i < 20; ++i) {
        Tensor image(DType::kUInt8, {4, 4, 1});
        for (uint8_t& v : image.values<uint8_t>()) v = static_cast<uint8_t>(label * 100);
        ExampleValues e;
        e["image/encoded"] = FeatureValues::of_bytes({encode_png(image)});
        e["image/class/label"] = FeatureValues::of_ints({label});
        writer.write(serialize_example(e));
      }
    }
  }
  const TrainData data = open_train_data(path("sorted.tfrecord"), {.batch = 10});
  const auto first = read_all(data.train(1));
  const auto second = read_all(data.train(2));
  ASSERT_EQ(first.size(), 60u);
  std::set<int64_t> first_batch;
  for (size_t i = 0; i < 10; ++i) first_batch.insert(first[i].first);
  EXPECT_EQ(first_batch.size(), 3u);
  EXPECT_NE(first, second);
  std::vector<int> counts(3);
  for (const auto& [label, pixel] : second) ++counts[static_cast<size_t>(label)];
  EXPECT_EQ(counts, (std::vector<int>{20, 20, 20}));
}

// An image and its label as bytes: the label, then the pixels. From float images, each pixel is
// taken back from its value in [0, 1] (255 steps).
std::vector<std::string> fashion_keys(const Dataset& examples) {
  std::vector<std::string> keys;
  for (const Element& e : examples) {
    const Tensor& pixels = e["image"];
    std::string key(1, static_cast<char>(e["label"].item<int64_t>()));
    key.append(reinterpret_cast<const char*>(pixels.data<uint8_t>()),
               static_cast<size_t>(pixels.num_elements()));
    keys.push_back(std::move(key));
  }
  return keys;
}
std::vector<std::string> fashion_keys(const InputFn& batches) {
  std::vector<std::string> keys;
  for (const Element& batch : batches()) {
    const Tensor& images = batch["image"];
    EXPECT_EQ(images.dtype(), DType::kFloat32);
    for (int64_t i = 0; i < images.dim(0); ++i) {
      std::string key(1, static_cast<char>(batch["label"].values<int64_t>()[i]));
      for (const float v : images.select(i).values<float>()) {
        key.push_back(static_cast<char>(std::lround(v * 255.0f)));
      }
      keys.push_back(std::move(key));
    }
  }
  return keys;
}

TEST(FashionMnistDataTest, BatchesHoldEveryImageOnceAsItsPixelsOver255) {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/train-labels-idx1-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  // Batches of 128: both splits end with a partial batch (96 and 16 images).
  const TrainData data = open_train_data("fashion-mnist", {.batch = 128});
  // The test split in its files' order, the training split shuffled: each image exactly once,
  // with its own label and pixels.
  EXPECT_EQ(fashion_keys(data.test), fashion_keys(fashion_mnist("test")));
  std::vector<std::string> trained = fashion_keys(data.train(3));
  std::vector<std::string> files = fashion_keys(fashion_mnist("train"));
  EXPECT_NE(trained, files);
  std::ranges::sort(trained);
  std::ranges::sort(files);
  EXPECT_EQ(trained, files);
}

}  // namespace
}  // namespace sluice::app
