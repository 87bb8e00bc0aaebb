// Activation functions applied row by row to a row-major [rows, cols] block (softmax and
// log_softmax normalise over the last axis, the others are elementwise). The backward pass is
// written in terms of the forward *output* alone, so a layer with a fused activation only keeps its
// output for backward. Pure functions; safe to call from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace sluice {

enum class ActivationFunction { kLinear, kRelu, kSigmoid, kSoftmax, kLogSoftmax, kTanh, kElu };

// Keras names: "linear" (also ""), "relu", "sigmoid", "softmax", "log_softmax", "tanh", "elu".
// Throws Unimplemented for other names.
ActivationFunction activation_from_name(std::string_view name);
std::string_view activation_name(ActivationFunction activation);

// y = f(x) row by row; `y` may alias `x`. REQUIRES: sizes equal and a multiple of `cols`.
void activation_forward(ActivationFunction activation, std::span<const float> x, int64_t cols,
                        std::span<float> y);

// dx = dL/dx given y = f(x) and dy = dL/dy; `dx` may alias `dy`. ELU uses alpha = 1.
void activation_backward(ActivationFunction activation, std::span<const float> y,
                         std::span<const float> dy, int64_t cols, std::span<float> dx);

}  // namespace sluice
