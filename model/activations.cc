#include "sluice/model/activations.h"

#include <algorithm>
#include <cmath>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/model/vector_clones.h"

namespace sluice {

ActivationFunction activation_from_name(std::string_view name) {
  if (name.empty() || name == "linear") return ActivationFunction::kLinear;
  if (name == "relu") return ActivationFunction::kRelu;
  if (name == "sigmoid") return ActivationFunction::kSigmoid;
  if (name == "softmax") return ActivationFunction::kSoftmax;
  if (name == "log_softmax") return ActivationFunction::kLogSoftmax;
  if (name == "tanh") return ActivationFunction::kTanh;
  if (name == "elu") return ActivationFunction::kElu;
  throw Unimplemented(str_cat("activation '", name,
                              "' is not supported (known: linear, relu, sigmoid, softmax, "
                              "log_softmax, tanh, elu)"));
}

std::string_view activation_name(ActivationFunction activation) {
  switch (activation) {
    case ActivationFunction::kLinear:
      return "linear";
    case ActivationFunction::kRelu:
      return "relu";
    case ActivationFunction::kSigmoid:
      return "sigmoid";
    case ActivationFunction::kSoftmax:
      return "softmax";
    case ActivationFunction::kLogSoftmax:
      return "log_softmax";
    case ActivationFunction::kTanh:
      return "tanh";
    case ActivationFunction::kElu:
      return "elu";
  }
  return "linear";
}

SLUICE_VECTOR_CLONES void activation_forward(ActivationFunction activation,
                                             std::span<const float> x, int64_t cols,
                                             std::span<float> y) {
  const size_t n = x.size();
  switch (activation) {
    case ActivationFunction::kLinear:
      if (x.data() != y.data()) std::copy(x.begin(), x.end(), y.begin());
      return;
    case ActivationFunction::kRelu:
      for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      return;
    case ActivationFunction::kSigmoid:
      // Both branches keep exp() of a non-positive number, so nothing overflows.
      for (size_t i = 0; i < n; ++i) {
        const float v = x[i];
        if (v >= 0.0f) {
          y[i] = 1.0f / (1.0f + std::exp(-v));
        } else {
          const float e = std::exp(v);
          y[i] = e / (1.0f + e);
        }
      }
      return;
    case ActivationFunction::kTanh:
      for (size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
      return;
    case ActivationFunction::kElu:
      for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : std::expm1(x[i]);
      return;
    case ActivationFunction::kSoftmax:
    case ActivationFunction::kLogSoftmax: {
      const bool log = activation == ActivationFunction::kLogSoftmax;
      for (size_t row = 0; row < n; row += static_cast<size_t>(cols)) {
        const float* in = x.data() + row;
        float* out = y.data() + row;
        // Subtracting the row maximum keeps exp() in range (the result is shift invariant).
        const float max = *std::max_element(in, in + cols);
        double sum = 0.0;
        for (int64_t j = 0; j < cols; ++j) sum += std::exp(double{in[j]} - max);
        if (log) {
          const float log_sum = static_cast<float>(std::log(sum));
          for (int64_t j = 0; j < cols; ++j) out[j] = in[j] - max - log_sum;
        } else {
          const double inv = 1.0 / sum;
          for (int64_t j = 0; j < cols; ++j) {
            out[j] = static_cast<float>(std::exp(double{in[j]} - max) * inv);
          }
        }
      }
      return;
    }
  }
}

SLUICE_VECTOR_CLONES void activation_backward(ActivationFunction activation,
                                              std::span<const float> y, std::span<const float> dy,
                                              int64_t cols, std::span<float> dx) {
  const size_t n = y.size();
  switch (activation) {
    case ActivationFunction::kLinear:
      if (dy.data() != dx.data()) std::copy(dy.begin(), dy.end(), dx.begin());
      return;
    case ActivationFunction::kRelu:
      // y > 0 exactly when x > 0; the subgradient at 0 is 0 as in TensorFlow. dy is read whatever
      // y holds, which lets the compiler make the choice a vector select.
      for (size_t i = 0; i < n; ++i) {
        const float g = dy[i];
        dx[i] = y[i] > 0.0f ? g : 0.0f;
      }
      return;
    case ActivationFunction::kSigmoid:
      for (size_t i = 0; i < n; ++i) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
      return;
    case ActivationFunction::kTanh:
      for (size_t i = 0; i < n; ++i) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
      return;
    case ActivationFunction::kElu:
      // For x <= 0, d/dx (e^x - 1) = e^x = y + 1.
      for (size_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] : dy[i] * (y[i] + 1.0f);
      return;
    case ActivationFunction::kSoftmax:
      for (size_t row = 0; row < n; row += static_cast<size_t>(cols)) {
        double dot = 0.0;
        for (int64_t j = 0; j < cols; ++j) dot += double{dy[row + j]} * y[row + j];
        for (int64_t j = 0; j < cols; ++j) {
          dx[row + j] = y[row + j] * (dy[row + j] - static_cast<float>(dot));
        }
      }
      return;
    case ActivationFunction::kLogSoftmax:
      for (size_t row = 0; row < n; row += static_cast<size_t>(cols)) {
        double sum = 0.0;
        for (int64_t j = 0; j < cols; ++j) sum += dy[row + j];
        for (int64_t j = 0; j < cols; ++j) {
          dx[row + j] = dy[row + j] - std::exp(y[row + j]) * static_cast<float>(sum);
        }
      }
      return;
  }
}

}  // namespace sluice
