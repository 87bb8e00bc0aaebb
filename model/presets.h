// The tutorial models sluice trains by name (`sluice train --model NAME`), built and initialised
// from a seed. Each preset's head matches the loss preset_loss_name() gives for it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/sequential.h"

namespace sluice {

// "cats-dogs-cnn", "estimator-convnet", "fashion-cnn", "tpu-guide-cnn".
std::vector<std::string> preset_names();

// The built model. Throws InvalidArgument naming the known presets for an unknown name.
Sequential make_preset(std::string_view name, uint64_t seed = 0);

// The loss each preset trains with (a model/losses.h name): fashion-cnn "nll_loss" on its
// log_softmax output, estimator-convnet "sparse_categorical_crossentropy" on probabilities,
// cats-dogs-cnn "binary_crossentropy" on its sigmoid, tpu-guide-cnn
// "sparse_categorical_crossentropy" with from_logits (reported by preset_from_logits).
std::string preset_loss_name(std::string_view name);
bool preset_from_logits(std::string_view name);

}  // namespace sluice
