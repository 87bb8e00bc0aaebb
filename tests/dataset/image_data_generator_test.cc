// image_data_generator(...).flow_from_directory(...): shapes, dtypes, Keras' label encodings and
// class order, the zip of a folder giving the same batches, determinism across thread counts and
// epochs, and a bad image reported with its path.
#include "sluice/dataset/image_data_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/formats/jpeg.h"
#include "sluice/formats/png.h"
#include "tests/dataset/testing.h"
#include "tests/formats/testing.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

// Pixels that tell images apart: value = (seed * 29 + i * 7) % 251.
Tensor pattern(int64_t h, int64_t w, int seed) {
  Tensor t(DType::kUInt8, Shape{h, w, 3});
  int i = 0;
  for (uint8_t& v : t.values<uint8_t>()) v = static_cast<uint8_t>((seed * 29 + i++ * 7) % 251);
  return t;
}

class ImageDataGeneratorTest : public testing::TempDirTest {
 protected:
  // root/{dogs: 2 images, cats: 3 images, Zebra: 1 image}, PNG (lossless) of h × w.
  std::string make_folder(int64_t h = 8, int64_t w = 8) {
    const std::string root = path("data");
    int seed = 0;
    for (const auto& [cls, count] :
         std::vector<std::pair<std::string, int>>{{"dogs", 2}, {"cats", 3}, {"Zebra", 1}}) {
      fs::create_directories(fs::path(root) / cls);
      for (int i = 0; i < count; ++i) {
        const std::string file =
            (fs::path(root) / cls / ("img" + std::to_string(i) + ".png")).string();
        testing::write_file(file, encode_png(pattern(h, w, seed++)));
      }
    }
    return root;
  }

  // A zip of `root`'s files, stored in reverse path order (not the order image_folder wants).
  std::string zip_folder(const std::string& root) {
    const std::string zip = path("data.zip");
    testing::zip_directory(root, zip);
    return zip;
  }
};

std::vector<Element> collect(const Dataset& ds, int threads = 2) {
  return testing::collect(ds, testing::threads(threads));
}

void expect_same(const std::vector<Element>& a, const std::vector<Element>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    for (size_t k = 0; k < a[i].size(); ++k) {
      EXPECT_TRUE(a[i][k].equals(b[i][k])) << "batch " << i << " component " << k;
    }
  }
}

const ImageDataGeneratorOptions kTutorial{
    .rescale = 1 / 255.f, .shear_range = 0.2, .zoom_range = 0.2, .horizontal_flip = true};

TEST_F(ImageDataGeneratorTest, CategoricalShapesClassOrderAndPixels) {
  const std::string root = make_folder();
  ::testing::internal::CaptureStdout();
  const DirectoryFlow flow =
      image_data_generator({.rescale = 1 / 255.f})
          .flow_from_directory(root, {.target_size = {8, 8}, .batch_size = 4, .shuffle = false});
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "Found 6 images belonging to 3 classes.\n");
  EXPECT_EQ(flow.class_names, (std::vector<std::string>{"Zebra", "cats", "dogs"}));
  EXPECT_EQ(flow.class_indices.at("cats"), 1);
  EXPECT_EQ(flow.samples, 6);
  EXPECT_EQ(flow.classes, (std::vector<int64_t>{0, 1, 1, 1, 2, 2}));
  EXPECT_EQ(flow.dataset.cardinality(), 2);
  const std::vector<Element> batches = collect(flow);
  ASSERT_EQ(batches.size(), 2u);  // 4 + 2: the short last batch is kept.
  EXPECT_EQ(batches[0]["image"].dtype(), DType::kFloat32);
  EXPECT_EQ(batches[0]["image"].shape(), (Shape{4, 8, 8, 3}));
  EXPECT_EQ(batches[1]["image"].shape(), (Shape{2, 8, 8, 3}));
  EXPECT_EQ(batches[0]["label"].dtype(), DType::kFloat32);
  EXPECT_EQ(batches[0]["label"].shape(), (Shape{4, 3}));
  const std::vector<float> one_hot(batches[0]["label"].values<float>().begin(),
                                   batches[0]["label"].values<float>().end());
  EXPECT_EQ(one_hot, (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0}));
  // No transform: the pixels rescaled; Zebra's image was written with seed 5, cats/img0 with 2.
  const Tensor zebra = pattern(8, 8, 5);
  const Tensor cat0 = pattern(8, 8, 2);
  for (int64_t i = 0; i < 8 * 8 * 3; ++i) {
    ASSERT_FLOAT_EQ(batches[0]["image"].data<float>()[i], zebra.data<uint8_t>()[i] / 255.f);
    ASSERT_FLOAT_EQ(batches[0]["image"].data<float>()[192 + i], cat0.data<uint8_t>()[i] / 255.f);
  }
}

TEST_F(ImageDataGeneratorTest, BinarySparseAndNoneLabels) {
  const std::string root = make_folder();
  const ImageDataGenerator gen = image_data_generator();
  for (ClassMode mode : {ClassMode::kBinary, ClassMode::kSparse}) {
    const std::vector<Element> batches =
        collect(gen.flow_from_directory(root, {.target_size = {4, 5},
                                               .batch_size = 6,
                                               .class_mode = mode,
                                               .shuffle = false,
                                               .verbose = false}));
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_EQ(batches[0]["image"].shape(), (Shape{6, 4, 5, 3}));
    const Tensor& labels = batches[0]["label"];
    EXPECT_EQ(labels.dtype(), DType::kFloat32);  // Keras: the generator's dtype, float32.
    EXPECT_EQ(labels.shape(), (Shape{6}));
    EXPECT_EQ(std::vector<float>(labels.values<float>().begin(), labels.values<float>().end()),
              (std::vector<float>{0, 1, 1, 1, 2, 2}));
  }
  const std::vector<Element> none =
      collect(gen.flow_from_directory(root, {.target_size = {4, 4},
                                             .color_mode = ColorMode::kGrayscale,
                                             .batch_size = 4,
                                             .class_mode = ClassMode::kNone,
                                             .verbose = false}));
  ASSERT_EQ(none.size(), 2u);
  EXPECT_EQ(none[0].size(), 1u);
  EXPECT_EQ(none[0][0].shape(), (Shape{4, 4, 4, 1}));
}

TEST_F(ImageDataGeneratorTest, ZipOfTheFolderGivesTheSameBatches) {
  const std::string root = make_folder(12, 10);
  const std::string zip = zip_folder(root);
  const FlowFromDirectoryOptions options{
      .target_size = {8, 8}, .batch_size = 4, .seed = 42, .verbose = false};
  const DirectoryFlow from_dir = image_data_generator(kTutorial).flow_from_directory(root, options);
  const DirectoryFlow from_zip = image_data_generator(kTutorial).flow_from_directory(zip, options);
  EXPECT_EQ(from_zip.class_names, from_dir.class_names);
  EXPECT_EQ(from_zip.classes, from_dir.classes);
  // Two epochs each: the second pass reshuffles identically for both.
  expect_same(collect(from_zip.dataset.repeat(2)), collect(from_dir.dataset.repeat(2)));
}

TEST_F(ImageDataGeneratorTest, SameSeedSameBatchesWhateverTheThreads) {
  const std::string root = make_folder(11, 13);
  const FlowFromDirectoryOptions options{
      .target_size = {9, 9}, .batch_size = 4, .seed = 7, .verbose = false};
  const ImageDataGenerator gen = image_data_generator({.rescale = 1 / 255.f,
                                                       .rotation_range = 20,
                                                       .shear_range = 10,
                                                       .zoom_range = 0.3,
                                                       .horizontal_flip = true,
                                                       .vertical_flip = true});
  const auto one = collect(gen.flow_from_directory(root, options).dataset.repeat(3), 1);
  const auto two = collect(gen.flow_from_directory(root, options).dataset.repeat(3), 2);
  expect_same(one, two);
  // A different seed augments (or orders) differently.
  FlowFromDirectoryOptions other = options;
  other.seed = 8;
  const auto three = collect(gen.flow_from_directory(root, other).dataset.repeat(3), 2);
  bool differs = false;
  for (size_t i = 0; i < one.size(); ++i) differs |= !one[i]["image"].equals(three[i]["image"]);
  EXPECT_TRUE(differs);
}

TEST_F(ImageDataGeneratorTest, ShufflesEveryEpochAsAPermutation) {
  const std::string root = make_folder();
  const DirectoryFlow flow =
      image_data_generator().flow_from_directory(root, {.target_size = {8, 8},
                                                        .batch_size = 6,
                                                        .class_mode = ClassMode::kSparse,
                                                        .seed = 3,
                                                        .verbose = false});
  std::vector<std::vector<float>> epochs;
  for (const Element& batch : collect(flow.dataset.repeat(4))) {
    const auto v = batch["label"].values<float>();
    epochs.emplace_back(v.begin(), v.end());
  }
  ASSERT_EQ(epochs.size(), 4u);
  bool reshuffled = false;
  for (auto& e : epochs) {
    reshuffled |= e != epochs[0];
    std::sort(e.begin(), e.end());
    EXPECT_EQ(e, (std::vector<float>{0, 1, 1, 1, 2, 2}));
  }
  EXPECT_TRUE(reshuffled);
}

TEST_F(ImageDataGeneratorTest, HorizontalFlipMirrorsExactly) {
  const std::string root = make_folder();
  const std::vector<Element> batches =
      collect(image_data_generator({.horizontal_flip = true})
                  .flow_from_directory(root, {.target_size = {8, 8},
                                              .batch_size = 6,
                                              .shuffle = false,
                                              .seed = 1,
                                              .verbose = false}));
  int flipped = 0;
  for (int64_t b = 0; b < 6; ++b) {
    const Tensor original = pattern(8, 8,
                                    b == 0   ? 5
                                    : b == 1 ? 2
                                    : b == 2 ? 3
                                    : b == 3 ? 4
                                             : b - 4);
    const float* got = batches[0]["image"].data<float>() + b * 192;
    bool same = true, mirrored = true;
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) {
        for (int k = 0; k < 3; ++k) {
          same &= got[(r * 8 + c) * 3 + k] == original.data<uint8_t>()[(r * 8 + c) * 3 + k];
          mirrored &= got[(r * 8 + c) * 3 + k] == original.data<uint8_t>()[(r * 8 + 7 - c) * 3 + k];
        }
      }
    }
    EXPECT_TRUE(same || mirrored) << "image " << b;
    flipped += mirrored;
  }
  EXPECT_GT(flipped, 0);
  EXPECT_LT(flipped, 6);
}

TEST_F(ImageDataGeneratorTest, BadImageErrorNamesItsPath) {
  const std::string root = make_folder();
  const std::string bad = (fs::path(root) / "cats" / "broken.jpg").string();
  testing::write_file(bad, "\xFF\xD8\xFF not really a jpeg");
  const DirectoryFlow flow = image_data_generator().flow_from_directory(
      root, {.target_size = {8, 8}, .batch_size = 2, .shuffle = false, .verbose = false});
  EXPECT_EQ(flow.samples, 7);  // Counted when listed, as Keras.
  Iterator it = flow.dataset.make_iterator();
  std::string message;
  try {
    while (it.next()) {
    }
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find(bad), std::string::npos) << message;
}

TEST_F(ImageDataGeneratorTest, ResizingWithoutATransformMatchesTheTransformPath) {
  // Without augmentation a resized image is written into its slot by resize_into; an identity
  // preprocessing_function forces the resize-then-transform path. Both must give the same pixels,
  // for every method and colour mode, with and without keep_aspect_ratio, shrinking and enlarging.
  const std::string root = make_folder(12, 7);
  const auto identity = [](const Tensor& x) { return x; };
  for (const ResizeMethod method : {ResizeMethod::kNearest, ResizeMethod::kBilinear,
                                    ResizeMethod::kBicubic, ResizeMethod::kArea}) {
    for (const bool keep : {false, true}) {
      for (const ImageSize size : {ImageSize{8, 8}, ImageSize{16, 9}}) {
        for (const ColorMode color : {ColorMode::kRgb, ColorMode::kGrayscale, ColorMode::kRgba}) {
          const FlowFromDirectoryOptions options{.target_size = size,
                                                 .color_mode = color,
                                                 .batch_size = 4,
                                                 .shuffle = false,
                                                 .interpolation = method,
                                                 .keep_aspect_ratio = keep,
                                                 .verbose = false};
          const std::vector<Element> direct = collect(
              image_data_generator({.rescale = 1 / 255.f}).flow_from_directory(root, options));
          const std::vector<Element> transformed = collect(
              image_data_generator({.rescale = 1 / 255.f, .preprocessing_function = identity})
                  .flow_from_directory(root, options));
          ASSERT_EQ(direct.size(), transformed.size());
          for (size_t b = 0; b < direct.size(); ++b) {
            const Tensor& x = direct[b]["image"];
            const Tensor& y = transformed[b]["image"];
            ASSERT_EQ(x.shape(), y.shape());
            EXPECT_EQ(x.shape().dim(1), size.height);
            for (int64_t i = 0; i < x.num_elements(); ++i) {
              ASSERT_FLOAT_EQ(x.data<float>()[i], y.data<float>()[i])
                  << resize_method_name(method) << " keep " << keep << " batch " << b << " value "
                  << i;
            }
          }
        }
      }
    }
  }
}

TEST_F(ImageDataGeneratorTest, GreyJpegsAsRgbGiveTheBatchesOfTheirRgbConversion) {
  // A grey JPEG asked for as RGB is resized and warped as one channel and written as three. Its
  // batches must be those of the same pixels stored as RGB (a lossless PNG with the channel
  // repeated), bit for bit: with the tutorial's augmentation, with a colour shift and
  // standardization after it, without augmentation, and when resized first.
  const std::string jpegs = path("grey_jpeg"), pngs = path("rgb_png");
  for (const char* cls : {"a", "b"}) {
    fs::create_directories(fs::path(jpegs) / cls);
    fs::create_directories(fs::path(pngs) / cls);
    for (int i = 0; i < 3; ++i) {
      Tensor grey(DType::kUInt8, Shape{14, 10, 1});
      int k = 0;
      for (uint8_t& v : grey.values<uint8_t>()) v = static_cast<uint8_t>((i * 40 + k++ * 13) % 256);
      const std::string bytes = encode_jpeg(grey, {.quality = 90});
      const std::string name = "img" + std::to_string(i);
      testing::write_file((fs::path(jpegs) / cls / (name + ".jpg")).string(), bytes);
      const Tensor decoded = decode_jpeg(bytes, {.channels = 3});  // libjpeg repeats the grey.
      testing::write_file((fs::path(pngs) / cls / (name + ".png")).string(), encode_png(decoded));
    }
  }
  ImageDataGeneratorOptions shifted = kTutorial;
  shifted.channel_shift_range = 20;
  shifted.samplewise_center = true;
  for (const ImageDataGeneratorOptions& generator :
       {kTutorial, shifted, ImageDataGeneratorOptions{.rescale = 1 / 255.f}}) {
    for (const ImageSize size : {ImageSize{14, 10}, ImageSize{9, 12}}) {
      const FlowFromDirectoryOptions options{
          .target_size = size, .batch_size = 4, .seed = 3, .verbose = false};
      expect_same(collect(image_data_generator(generator).flow_from_directory(jpegs, options)),
                  collect(image_data_generator(generator).flow_from_directory(pngs, options)));
    }
  }
}

TEST_F(ImageDataGeneratorTest, RejectsBadArguments) {
  const std::string root = make_folder();
  EXPECT_THROW(image_data_generator({.zoom_range = {1.5, 0.5}}), InvalidArgument);
  EXPECT_THROW(image_data_generator().flow_from_directory(root, {.batch_size = 0}),
               InvalidArgument);
  EXPECT_THROW(image_data_generator().flow_from_directory(path("missing")), NotFound);
}

}  // namespace
}  // namespace sluice
