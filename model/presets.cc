#include "model/presets.h"

#include "core/errors.h"
#include "core/strings.h"
#include "model/activation_layer.h"
#include "model/batch_normalization.h"
#include "model/conv2d.h"
#include "model/dense.h"
#include "model/dropout.h"
#include "model/flatten.h"
#include "model/pooling.h"

namespace sluice {
namespace {

using AF = ActivationFunction;

// The PyTorch/XLA MNIST tutorial on Fashion-MNIST: conv → pool → relu → BN twice, so its
// BatchNorm layers follow PyTorch's conventions.
Sequential fashion_cnn() {
  Sequential m("fashion-cnn");
  m.add(Input({28, 28, 1}));
  m.add(std::make_unique<Conv2D>(10, 5));
  m.add(std::make_unique<MaxPooling2D>(2));
  m.add(std::make_unique<Activation>(AF::kRelu));
  m.add(std::make_unique<BatchNormalization>(BatchNormalizationOptions::pytorch()));
  m.add(std::make_unique<Conv2D>(20, 5));
  m.add(std::make_unique<MaxPooling2D>(2));
  m.add(std::make_unique<Activation>(AF::kRelu));
  m.add(std::make_unique<BatchNormalization>(BatchNormalizationOptions::pytorch()));
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(50, DenseOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<Dense>(10));
  m.add(std::make_unique<Activation>(AF::kLogSoftmax));
  return m;
}

// The tf.estimator / Keras CNN tutorial's convnet on 28×28×1 images.
Sequential estimator_convnet() {
  Sequential m("estimator-convnet");
  m.add(Input({28, 28, 1}));
  m.add(std::make_unique<Conv2D>(32, 3, Conv2DOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<MaxPooling2D>(2));
  m.add(std::make_unique<Conv2D>(64, 3, Conv2DOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<MaxPooling2D>(2));
  m.add(std::make_unique<Conv2D>(64, 3, Conv2DOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(64, DenseOptions{.activation = AF::kRelu}));
  m.add(std::make_unique<Dense>(10, DenseOptions{.activation = AF::kSoftmax}));
  return m;
}

// The Colab TPU cats-vs-dogs tutorial: he_uniform relu layers, a sigmoid head.
Sequential cats_dogs_cnn() {
  Sequential m("cats-dogs-cnn");
  m.add(Input({128, 128, 3}));
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
Sequential tpu_guide_cnn() {
  constexpr float kL2 = 1e-5f;
  Sequential m("tpu-guide-cnn");
  m.add(Input({28, 28, 1}));
  m.add(std::make_unique<Conv2D>(
      256, 3, Conv2DOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  m.add(std::make_unique<Conv2D>(
      256, 3, Conv2DOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(
      256, DenseOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  m.add(std::make_unique<Dense>(
      128, DenseOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  m.add(std::make_unique<Dense>(10, DenseOptions{.kernel_regularizer_l2 = kL2}));
  return m;
}

[[noreturn]] void unknown(std::string_view name) {
  throw InvalidArgument(str_cat("unknown model preset '", name,
                                "' (known: ", str_join(preset_names(), ", "), ")"));
}

}  // namespace

std::vector<std::string> preset_names() {
  return {"cats-dogs-cnn", "estimator-convnet", "fashion-cnn", "tpu-guide-cnn"};
}

Sequential make_preset(std::string_view name, uint64_t seed) {
  Sequential model = name == "fashion-cnn"         ? fashion_cnn()
                     : name == "estimator-convnet" ? estimator_convnet()
                     : name == "cats-dogs-cnn"     ? cats_dogs_cnn()
                     : name == "tpu-guide-cnn"     ? tpu_guide_cnn()
                                                   : (unknown(name), Sequential());
  model.build(seed);
  return model;
}

std::string preset_loss_name(std::string_view name) {
  if (name == "fashion-cnn") return "nll_loss";
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
