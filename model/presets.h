// The tutorial models sluice trains by name (`sluice train --model NAME`), built and initialised
// from a seed. Each preset's head matches the loss preset_loss_name() gives for it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sluice/model/sequential.h"

namespace sluice {

// "cats-dogs-cnn", "estimator-convnet", "fashion-cnn", "fashion-cnn-wide", "tpu-guide-cnn".
// fashion-cnn-wide is fashion-cnn with 16 and 32 filters and 64 units instead of 10, 20 and 50:
// whole AVX-512 vectors of filters, and room to pass 0.91 on Fashion-MNIST, where fashion-cnn
// levels off near 0.910 however long it trains. Its batch normalisations' moving statistics take
// 0.3 of each batch instead of PyTorch's 0.1, so that they keep up with its weights in a short
// run: in 24 to 40 steps on a small folder, 0.1 left them so far behind that the model, right on
// every training batch, evaluated near chance. On Fashion-MNIST both give the same accuracy.
std::vector<std::string> preset_names();

// The images and classes a preset is built for. A zero field takes the preset's own: 28×28×1
// images and 10 classes, cats-dogs-cnn 128×128×3 images and 2 classes (one sigmoid unit).
struct PresetInput {
  int64_t height = 0;
  int64_t width = 0;
  int64_t channels = 0;
  int64_t classes = 0;
};

// The built model, its input and head sized by `input`. Throws InvalidArgument naming the known
// presets for an unknown name, and for a binary preset (cats-dogs-cnn) asked for other than 2
// classes, or a size too small for its convolutions.
Sequential make_preset(std::string_view name, uint64_t seed = 0, const PresetInput& input = {});

// The loss each preset trains with (a model/losses.h name): fashion-cnn(-wide) "nll_loss" on its
// log_softmax output, estimator-convnet "sparse_categorical_crossentropy" on probabilities,
// cats-dogs-cnn "binary_crossentropy" on its sigmoid, tpu-guide-cnn
// "sparse_categorical_crossentropy" with from_logits (reported by preset_from_logits).
std::string preset_loss_name(std::string_view name);
bool preset_from_logits(std::string_view name);

}  // namespace sluice
