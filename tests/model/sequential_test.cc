// Sequential: naming, presets' parameter counts, summary(), freezing, errors.
#include "sluice/model/sequential.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sluice/core/random.h"
#include "sluice/model/conv2d.h"
#include "sluice/model/dense.h"
#include "sluice/model/presets.h"

namespace sluice {
namespace {

TEST(SequentialTest, FashionCnnCountsAndNames) {
  Sequential m = make_preset("fashion-cnn", 1);
  EXPECT_EQ(m.get_layer("conv2d").count_params(), 260);
  EXPECT_EQ(m.get_layer("conv2d_1").count_params(), 5020);
  EXPECT_EQ(m.get_layer("dense").count_params(), 16050);
  EXPECT_EQ(m.get_layer("dense_1").count_params(), 510);
  EXPECT_EQ(m.get_layer("batch_normalization").count_params(), 40);
  EXPECT_EQ(m.get_layer("batch_normalization_1").count_params(), 80);
  EXPECT_EQ(m.count_params(), 260 + 5020 + 16050 + 510 + 40 + 80);
  EXPECT_EQ(m.count_trainable_params(), m.count_params() - 60);
  EXPECT_EQ(m.output_shape(), Shape({10}));
  const std::string s = m.summary();
  EXPECT_NE(s.find(" conv2d (Conv2D)             (None, 24, 24, 10)        260"), std::string::npos)
      << s;
  EXPECT_NE(s.find("Total params: 21,960"), std::string::npos) << s;
  EXPECT_NE(s.find("Trainable params: 21,900"), std::string::npos) << s;
  EXPECT_NE(s.find("Non-trainable params: 60"), std::string::npos) << s;
  EXPECT_EQ(preset_loss_name("fashion-cnn"), "nll_loss");
}

TEST(SequentialTest, FashionCnnWideIsFashionCnnWithWholeVectorsOfFilters) {
  Sequential m = make_preset("fashion-cnn-wide", 1);
  EXPECT_EQ(m.name(), "fashion-cnn-wide");
  EXPECT_EQ(m.get_layer("conv2d").output_shape(Shape({28, 28, 1})), Shape({24, 24, 16}));
  EXPECT_EQ(m.get_layer("conv2d").count_params(), 16 * 25 + 16);
  EXPECT_EQ(m.get_layer("conv2d_1").count_params(), 32 * 16 * 25 + 32);
  EXPECT_EQ(m.get_layer("dense").count_params(), 4 * 4 * 32 * 64 + 64);
  EXPECT_EQ(m.get_layer("dense_1").count_params(), 64 * 10 + 10);
  EXPECT_EQ(m.count_params() - m.count_trainable_params(), 16 * 2 + 32 * 2);
  EXPECT_EQ(m.output_shape(), Shape({10}));
  EXPECT_EQ(preset_loss_name("fashion-cnn-wide"), "nll_loss");
  EXPECT_FALSE(preset_from_logits("fashion-cnn-wide"));
  // The same layers in the same order as fashion-cnn, only wider.
  Sequential narrow = make_preset("fashion-cnn", 1);
  ASSERT_EQ(m.num_layers(), narrow.num_layers());
  for (size_t i = 0; i < m.num_layers(); ++i) {
    EXPECT_EQ(m.layer(i).class_name(), narrow.layer(i).class_name()) << i;
  }
}

TEST(SequentialTest, OtherPresets) {
  EXPECT_EQ(make_preset("estimator-convnet").count_params(), 93322);
  EXPECT_EQ(make_preset("cats-dogs-cnn").count_params(),
            896 + 18496 + 73856 + 32768 * 256 + 256 + 256 * 128 + 128 + 129);
  Sequential tpu = make_preset("tpu-guide-cnn");
  EXPECT_EQ(tpu.count_params(), 2560 + 590080 + 147456 * 256 + 256 + 32896 + 1290);
  EXPECT_EQ(tpu.get_layer("dense_2").parameters()[0]->l2, 1e-5f);
  EXPECT_TRUE(preset_from_logits("tpu-guide-cnn"));
  try {
    make_preset("resnet");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fashion-cnn"), std::string::npos);
  }
}

TEST(SequentialTest, SameSeedSameWeightsAndFreezing) {
  Sequential a = make_preset("fashion-cnn", 5);
  Sequential b = make_preset("fashion-cnn", 5);
  auto pa = a.parameters(), pb = b.parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(pa[i]->value.equals(pb[i]->value));
  a.get_layer("conv2d").set_trainable(false);
  EXPECT_EQ(a.count_trainable_params(), 21900 - 260);
  Sequential m;
  m.add(Input({4}));
  m.add(std::make_unique<Dense>(3, DenseOptions{.name = "hidden"}));
  EXPECT_THROW(m.add(std::make_unique<Dense>(2, DenseOptions{.name = "hidden"})), InvalidArgument);
  m.add(std::make_unique<Dense>(2));
  m.build(0);
  EXPECT_EQ(m.layer(1).name(), "dense");
  const Tensor y = m.forward(Tensor(DType::kFloat32, {5, 4}), true);
  EXPECT_EQ(y.shape(), Shape({5, 2}));
  EXPECT_EQ(m.backward(y, true).shape(), Shape({5, 4}));
  EXPECT_EQ(m.backward(y).num_elements(), 0);  // Training needs no dL/dinput.
}

Tensor uniform_tensor(const Shape& shape, uint64_t seed) {
  Tensor t(DType::kFloat32, shape);
  Random rng(seed);
  for (float& v : t.values<float>()) v = rng.uniform(-1.0f, 1.0f);
  return t;
}

// Skipping the first layer's dL/dinput (and frozen leading layers) must not change any gradient
// that training uses.
TEST(SequentialTest, TrainingBackwardSkipsOnlyUnusedWork) {
  for (const bool freeze_first : {false, true}) {
    Sequential full = make_preset("fashion-cnn", 3);
    Sequential lean = make_preset("fashion-cnn", 3);
    if (freeze_first) {
      full.get_layer("conv2d").set_trainable(false);
      lean.get_layer("conv2d").set_trainable(false);
    }
    const Tensor x = uniform_tensor({6, 28, 28, 1}, 1);
    const Tensor dy = uniform_tensor(full.forward(x, true).shape(), 2);
    lean.forward(x, true);
    EXPECT_EQ(full.backward(dy, true).shape(), x.shape());
    EXPECT_EQ(lean.backward(dy).num_elements(), 0);
    const auto pf = full.trainable_parameters(), pl = lean.trainable_parameters();
    ASSERT_EQ(pf.size(), pl.size());
    for (size_t i = 0; i < pf.size(); ++i) {
      EXPECT_TRUE(pf[i]->gradient.equals(pl[i]->gradient)) << pf[i]->path;
    }
    // A frozen first layer is not back-propagated through at all when training.
    const Parameter& frozen = *lean.get_layer("conv2d").parameters()[0];
    const auto g = frozen.gradient.values<float>();
    EXPECT_EQ(freeze_first, std::all_of(g.begin(), g.end(), [](float v) { return v == 0; }));
  }
}

}  // namespace
}  // namespace sluice
