// Optimizer updates against hand-computed steps, schedules, state round trips.
#include "sluice/model/optimizers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "sluice/core/errors.h"

namespace sluice {
namespace {

Parameter scalar_parameter(float value, float grad) {
  Parameter p;
  p.name = "w";
  p.path = "layer/w";
  p.value = Tensor::from_vector<float>({value});
  p.gradient = Tensor::from_vector<float>({grad});
  return p;
}

TEST(OptimizersTest, AdamKerasStep) {
  Parameter p = scalar_parameter(0, 1);
  Adam adam;
  adam.apply_gradients({&p});
  const double alpha = 0.001 * std::sqrt(0.001) / 0.1;
  EXPECT_NEAR(p.value.data<float>()[0], -alpha * 0.1 / (std::sqrt(0.001) + 1e-7), 1e-9);
  EXPECT_EQ(adam.iterations(), 1);
  auto state = adam.state();
  EXPECT_NEAR(state.at("layer/w/m").data<float>()[0], 0.1f, 1e-7);
  // 1 − β2 rounds in float32, as in Keras.
  EXPECT_NEAR(state.at("layer/w/v").data<float>()[0], 0.001f, 2e-8);
  // Restoring the state into a fresh optimizer continues identically.
  Parameter q = scalar_parameter(p.value.data<float>()[0], 0.5f);
  p.gradient.data<float>()[0] = 0.5f;
  Adam restored;
  restored.load_state(state);
  adam.apply_gradients({&p});
  restored.apply_gradients({&q});
  EXPECT_EQ(p.value.data<float>()[0], q.value.data<float>()[0]);
  EXPECT_EQ(restored.iterations(), 2);
}

// load_state() copies the slots, so that the updates leave the given tensors as they were;
// take_state() makes them the slots themselves.
TEST(OptimizersTest, LoadStateCopiesTheSlotsAndTakeStateTakesThem) {
  // More elements than a tensor holds inline, whose copies are values of their own.
  const auto parameter = [] {
    Parameter p;
    p.path = "layer/w";
    p.value = Tensor::from_vector<float>(std::vector<float>(64, 0.5f));
    p.gradient = Tensor::from_vector<float>(std::vector<float>(64, 1.0f));
    return p;
  };
  Parameter p = parameter();
  Adam trained;
  trained.apply_gradients({&p});
  const std::map<std::string, Tensor> given = trained.state();
  const Tensor m = given.at("layer/w/m").clone();
  Adam loaded, taken;
  loaded.load_state(given);
  taken.take_state(given);
  Parameter q = parameter();
  loaded.apply_gradients({&q});
  EXPECT_TRUE(given.at("layer/w/m").equals(m));
  EXPECT_FALSE(loaded.state().at("layer/w/m").equals(m));
  taken.apply_gradients({&q});
  EXPECT_FALSE(given.at("layer/w/m").equals(m));
  EXPECT_EQ(taken.shared_state().at("layer/w/m").data<float>(),
            given.at("layer/w/m").data<float>());
}

// build() makes the slots the first update would, zeroed and ahead of it, so that update is the
// same; it skips parameters that do not train and keeps the slots a state restored.
TEST(OptimizersTest, BuildMakesTheFirstUpdatesSlotsAhead) {
  Parameter p = scalar_parameter(0.5f, 1);
  Parameter frozen = scalar_parameter(0.5f, 1);
  frozen.path = "frozen/w";
  frozen.trainable = false;
  Adam built;
  built.build({&p, &frozen});
  auto state = built.state();
  EXPECT_EQ(state.size(), 3u);  // iterations, layer/w/m, layer/w/v
  EXPECT_EQ(state.at("layer/w/m").data<float>()[0], 0.0f);
  EXPECT_EQ(state.at("layer/w/v").data<float>()[0], 0.0f);
  EXPECT_EQ(built.iterations(), 0);

  Parameter q = scalar_parameter(0.5f, 1);
  Adam lazy;
  built.apply_gradients({&p});
  lazy.apply_gradients({&q});
  EXPECT_EQ(p.value.data<float>()[0], q.value.data<float>()[0]);
  EXPECT_EQ(built.state().at("layer/w/v").data<float>()[0],
            lazy.state().at("layer/w/v").data<float>()[0]);

  Adam restored;
  restored.load_state(lazy.state());
  restored.build({&q});
  EXPECT_EQ(restored.state().at("layer/w/m").data<float>()[0],
            lazy.state().at("layer/w/m").data<float>()[0]);
  EXPECT_NE(restored.state().at("layer/w/m").data<float>()[0], 0.0f);
}

// Updating two ranges that together cover a parameter, one after the other, equals the whole
// update: the same values, slots and callbacks' slices; a range's outside stays untouched, and a
// range that cuts a slice is refused before anything changes.
TEST(OptimizersTest, AnUpdateOfRangesEqualsTheWholeUpdateThere) {
  constexpr int64_t kSlice = Optimizer::kSliceElements;
  const int64_t n = 3 * kSlice + 100;
  auto parameter = [&] {
    Parameter p;
    p.name = "w";
    p.path = "layer/w";
    p.value = Tensor(DType::kFloat32, Shape{n});
    p.gradient = Tensor(DType::kFloat32, Shape{n});
    for (int64_t i = 0; i < n; ++i) {
      p.value.data<float>()[i] = 0.001f * float(i % 997);
      p.gradient.data<float>()[i] = 0.01f * float(i % 89) - 0.4f;
    }
    return p;
  };
  using Slices = std::vector<std::pair<int64_t, int64_t>>;
  auto recording = [](Slices& slices) {
    Optimizer::SliceCallbacks callbacks;
    callbacks.updated = [&slices](size_t, int64_t begin, int64_t end) {
      slices.emplace_back(begin, end);
    };
    return callbacks;
  };
  Parameter whole = parameter();
  Adam adam;
  Slices whole_slices;
  adam.apply_gradients({&whole}, recording(whole_slices));

  Parameter parts = parameter();
  Adam by_ranges;
  Slices range_slices;
  by_ranges.apply_gradients({&parts}, recording(range_slices), {{kSlice, n}});
  // Before the first range is updated, its values are as they were.
  EXPECT_EQ(parts.value.data<float>()[kSlice - 1], parameter().value.data<float>()[kSlice - 1]);
  EXPECT_NE(parts.value.data<float>()[kSlice], parameter().value.data<float>()[kSlice]);
  // The second update of the same step (the optimizer's count restored, as each worker counts
  // once per step).
  std::map<std::string, Tensor> state = by_ranges.state();
  state["iterations"] = Tensor::scalar<int64_t>(0);
  by_ranges.load_state(state);
  by_ranges.apply_gradients({&parts}, recording(range_slices), {{0, kSlice}});
  std::sort(range_slices.begin(), range_slices.end());
  std::sort(whole_slices.begin(), whole_slices.end());
  EXPECT_EQ(range_slices, whole_slices);
  EXPECT_EQ(std::memcmp(parts.value.raw_data(), whole.value.raw_data(), whole.value.byte_size()),
            0);
  const std::map<std::string, Tensor> got = by_ranges.state();
  for (const auto& [key, slot] : adam.state()) {
    const Tensor& other = got.at(key);
    EXPECT_EQ(std::memcmp(other.raw_data(), slot.raw_data(), slot.byte_size()), 0) << key;
  }

  Parameter untouched = parameter();
  for (const ElementRange bad : {ElementRange{1, n}, ElementRange{0, kSlice + 1},
                                 ElementRange{2 * kSlice, kSlice}, ElementRange{0, n + 1}}) {
    EXPECT_THROW(Adam().apply_gradients({&untouched}, {}, {bad}), InvalidArgument)
        << bad.begin << ", " << bad.end;
  }
  EXPECT_THROW(Adam().apply_gradients({&untouched}, {}, {}), InvalidArgument);
  EXPECT_EQ(std::memcmp(untouched.value.raw_data(), parameter().value.raw_data(),
                        untouched.value.byte_size()),
            0);
}

TEST(OptimizersTest, AdamEpsilonPlacements) {
  Parameter p = scalar_parameter(0, 1e-4f);
  Adam tf1(AdamOptions::tf1());
  tf1.apply_gradients({&p});
  const double alpha = 0.001 * std::sqrt(0.001) / 0.1;
  const double m = 1e-5, v = 1e-11;
  EXPECT_NEAR(p.value.data<float>()[0], -alpha * m / (std::sqrt(v) + 1e-8), 1e-10);
  Parameter q = scalar_parameter(0, 1e-4f);
  Adam torch(AdamOptions::pytorch());
  torch.apply_gradients({&q});
  // PyTorch: lr · m̂ / (sqrt(v̂) + ε).
  EXPECT_NEAR(q.value.data<float>()[0], -0.001 * (m / 0.1) / (std::sqrt(v / 0.001) + 1e-8), 1e-10);
}

TEST(OptimizersTest, SGDMomentumAndNesterov) {
  Parameter p = scalar_parameter(0, 1);
  SGD sgd({.learning_rate = 0.1f, .momentum = 0.9f});
  sgd.apply_gradients({&p});
  EXPECT_NEAR(p.value.data<float>()[0], -0.1f, 1e-7);
  sgd.apply_gradients({&p});
  EXPECT_NEAR(p.value.data<float>()[0], -0.29f, 1e-6);
  Parameter n = scalar_parameter(0, 1);
  SGD nesterov({.learning_rate = 0.1f, .momentum = 0.9f, .nesterov = true});
  nesterov.apply_gradients({&n});
  EXPECT_NEAR(n.value.data<float>()[0], 0.9f * -0.1f - 0.1f, 1e-7);
  Parameter frozen = scalar_parameter(1, 1);
  frozen.trainable = false;
  SGD plain;
  plain.apply_gradients({&frozen});
  EXPECT_EQ(frozen.value.data<float>()[0], 1.0f);
}

TEST(OptimizersTest, RMSpropStep) {
  Parameter p = scalar_parameter(1, 2);
  RMSprop rms;
  rms.apply_gradients({&p});
  const double ms = 0.1 * 4;
  EXPECT_NEAR(p.value.data<float>()[0], 1 - 0.001 * 2 / std::sqrt(ms + 1e-7), 1e-7);
}

TEST(OptimizersTest, Schedules) {
  auto exp = exponential_decay(0.1f, 10, 0.5f);
  EXPECT_NEAR((*exp)(5), 0.1 * std::pow(0.5, 0.5), 1e-7);
  auto stairs = exponential_decay(0.1f, 10, 0.5f, true);
  EXPECT_NEAR((*stairs)(15), 0.05f, 1e-8);
  auto cosine = cosine_decay(1.0f, 100, 0.1f);
  EXPECT_NEAR((*cosine)(0), 1.0f, 1e-7);
  EXPECT_NEAR((*cosine)(50), 0.55f, 1e-6);
  EXPECT_NEAR((*cosine)(200), 0.1f, 1e-7);
  Parameter p = scalar_parameter(0, 1);
  SGD sgd({.learning_rate = stairs});
  for (int i = 0; i < 11; ++i) sgd.apply_gradients({&p});
  EXPECT_NEAR(p.value.data<float>()[0], -(10 * 0.1f + 0.05f), 1e-6);
}

}  // namespace
}  // namespace sluice
