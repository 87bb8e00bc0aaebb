#include "sluice/model/presets.h"

#include <string>
#include <string_view>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/model/activation_layer.h"
#include "sluice/model/batch_normalization.h"
#include "sluice/model/conv2d.h"
#include "sluice/model/dense.h"
#include "sluice/model/dropout.h"
#include "sluice/model/flatten.h"
#include "sluice/model/pooling.h"

namespace sluice {
namespace {

using AF = ActivationFunction;

// What tells fashion-cnn's variants apart: the widths, and how much of each batch's statistics
// the batch normalisations' moving averages take (PyTorch's momentum).
struct FashionCnnSpec {
  int64_t conv1_filters, conv2_filters, dense_units;
  float batch_norm_momentum;
};

// The PyTorch/XLA MNIST tutorial on Fashion-MNIST: conv → pool → relu → BN twice, so its
// BatchNorm layers follow PyTorch's conventions. The tutorial's widths are 10 and 20 filters and
// 50 units, and its momentum PyTorch's 0.1.
Sequential fashion_cnn(std::string_view name, const PresetInput& in, const FashionCnnSpec& spec) {
  Sequential m{std::string(name)};
  BatchNormalizationOptions batch_norm = BatchNormalizationOptions::pytorch();
  batch_norm.momentum = spec.batch_norm_momentum;
  m.add(Input({in.height, in.width, in.channels}));
  m.add(std::make_unique<Conv2D>(spec.conv1_filters, 5));
  m.add(std::make_unique<MaxPooling2D>(2));
  m.add(std::make_unique<Activation>(AF::kRelu));
  m.add(std::make_unique<BatchNormalization>(batch_norm));
  m.add(std::make_unique<Conv2D>(spec.conv2_filters, 5));
  m.add(std::make_unique<MaxPooling2D>(2));
  m.add(std::make_unique<Activation>(AF::kRelu));
  m.add(std::make_unique<BatchNormalization>(batch_norm));
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(spec.dense_units, DenseOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<Dense>(in.classes));
  m.add(std::make_unique<Activation>(AF::kLogSoftmax));
  return m;
}

// The tf.estimator / Keras CNN tutorial's convnet on 28×28×1 images.
Sequential estimator_convnet(const PresetInput& in) {
  Sequential m("estimator-convnet");
  m.add(Input({in.height, in.width, in.channels}));
  m.add(std::make_unique<Conv2D>(32, 3, Conv2DOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<MaxPooling2D>(2));
  m.add(std::make_unique<Conv2D>(64, 3, Conv2DOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<MaxPooling2D>(2));
  m.add(std::make_unique<Conv2D>(64, 3, Conv2DOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(64, DenseOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<Dense>(in.classes, DenseOptions{.activation = AF::kSoftmax}));
  return m;
}

// The Colab TPU cats-vs-dogs tutorial: he_uniform relu layers, a sigmoid head.
Sequential cats_dogs_cnn(const PresetInput& in) {
  Sequential m("cats-dogs-cnn");
  m.add(Input({in.height, in.width, in.channels}));
  for (int64_t filters : {32, 64, 128}) {
    m.add(std::make_unique<Conv2D>(filters, 3,
                                   Conv2DOptions{.padding = Padding::kSame,
                                                 .activation = AF::kRelu,
                                                 .kernel_initializer = Initializer::kHeUniform}));
    m.add(std::make_unique<MaxPooling2D>(2));
  }
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(
      256, DenseOptions{.activation = AF::kRelu, .kernel_initializer = Initializer::kHeUniform}));
  m.add(std::make_unique<Dropout>(0.2f));
  m.add(std::make_unique<Dense>(
      128, DenseOptions{.activation = AF::kRelu, .kernel_initializer = Initializer::kHeUniform}));
  m.add(std::make_unique<Dropout>(0.2f));
  m.add(std::make_unique<Dense>(1, DenseOptions{.activation = AF::kSigmoid}));
  return m;
}

// TensorFlow's TPU guide model: every kernel L2(1e-5), logits out.
Sequential tpu_guide_cnn(const PresetInput& in) {
  constexpr float kL2 = 1e-5f;
  Sequential m("tpu-guide-cnn");
  m.add(Input({in.height, in.width, in.channels}));
  m.add(std::make_unique<Conv2D>(
      256, 3, Conv2DOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  m.add(std::make_unique<Conv2D>(
      256, 3, Conv2DOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(
      256, DenseOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  m.add(std::make_unique<Dense>(
      128, DenseOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  m.add(std::make_unique<Dense>(in.classes, DenseOptions{.kernel_regularizer_l2 = kL2}));
  return m;
}

[[noreturn]] void unknown(std::string_view name) {
  throw InvalidArgument(
      str_cat("unknown model preset '", name, "' (known: ", str_join(preset_names(), ", "), ")"));
}

}  // namespace

std::vector<std::string> preset_names() {
  return {"cats-dogs-cnn", "estimator-convnet", "fashion-cnn", "fashion-cnn-wide", "tpu-guide-cnn"};
}

Sequential make_preset(std::string_view name, uint64_t seed, const PresetInput& input) {
  const bool binary = name == "cats-dogs-cnn";
  PresetInput in = input;
  const PresetInput own = binary ? PresetInput{128, 128, 3, 2} : PresetInput{28, 28, 1, 10};
  if (in.height <= 0) in.height = own.height;
  if (in.width <= 0) in.width = own.width;
  if (in.channels <= 0) in.channels = own.channels;
  if (in.classes <= 0) in.classes = own.classes;
  if (binary && in.classes != 2) {
    throw InvalidArgument(str_cat("model preset ", name, " has one sigmoid output for 2 classes; ",
                                  in.classes, " classes need a model with a softmax head"));
  }
  if (in.classes < 2) {
    throw InvalidArgument(
        str_cat("model preset ", name, " needs at least 2 classes, got ", in.classes));
  }
  Sequential model = name == "fashion-cnn"         ? fashion_cnn(name, in, {10, 20, 50, 0.1f})
                     : name == "fashion-cnn-wide"  ? fashion_cnn(name, in, {16, 32, 64, 0.3f})
                     : name == "estimator-convnet" ? estimator_convnet(in)
                     : binary                      ? cats_dogs_cnn(in)
                     : name == "tpu-guide-cnn"     ? tpu_guide_cnn(in)
                                                   : (unknown(name), Sequential());
  try {
    model.build(seed);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(str_cat("model preset ", name, " cannot take ", in.height, "x", in.width,
                                  "x", in.channels, " images: ", e.what()));
  }
  return model;
}

std::string preset_loss_name(std::string_view name) {
  if (name == "fashion-cnn" || name == "fashion-cnn-wide") return "nll_loss";
  if (name == "estimator-convnet" || name == "tpu-guide-cnn") {
    return "sparse_categorical_crossentropy";
  }
  if (name == "cats-dogs-cnn") return "binary_crossentropy";
  unknown(name);
}

bool preset_from_logits(std::string_view name) {
  preset_loss_name(name);  // Validates the name.
  return name == "tpu-guide-cnn";
}

}  // namespace sluice
