// Conv2D: 2-D cross-correlation over NHWC inputs with kernel [kh, kw, in, filters] (Keras layout),
// bias [filters], TensorFlow's `same`/`valid` padding (model/conv_utils.h), fused activation.
// Computed as im2col + GEMM per image, images spread over oneTBB tasks in the caller's arena.
// forward keeps the input and the activated output; backward rebuilds the patches from the input.
#pragma once

#include <string>

#include "model/activations.h"
#include "model/conv_utils.h"
#include "model/initializers.h"
#include "model/layer.h"

namespace sluice {

struct Conv2DOptions {
  Size2D strides = 1;
  Padding padding = Padding::kValid;
  ActivationFunction activation = ActivationFunction::kLinear;
  bool use_bias = true;
  Initializer kernel_initializer = Initializer::kGlorotUniform;
  Initializer bias_initializer = Initializer::kZeros;
  float kernel_regularizer_l2 = 0.0f;  // keras.regularizers.L2 factor; 0 = none.
  std::string name;
};

class Conv2D final : public Layer {
 public:
  Conv2D(int64_t filters, Size2D kernel_size, Conv2DOptions options = {});

  std::string_view class_name() const override { return "Conv2D"; }
  Shape output_shape(const Shape& input_shape) const override;
  Tensor forward(const Tensor& input, bool training) override;
  Tensor backward(const Tensor& grad_output) override;
  std::vector<Parameter*> parameters() override;

  int64_t filters() const { return filters_; }
  Size2D kernel_size() const { return kernel_size_; }
  const Conv2DOptions& options() const { return options_; }
  // REQUIRES: built() (and use_bias for bias()).
  Parameter& kernel() { return kernel_; }
  Parameter& bias() { return bias_; }

 private:
  void build_parameters(const Shape& input_shape, Random& rng) override;

  int64_t filters_;
  Size2D kernel_size_;
  Conv2DOptions options_;
  Parameter kernel_;
  Parameter bias_;
  Tensor input_;
  Tensor output_;
};

}  // namespace sluice
