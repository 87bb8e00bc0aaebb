#include "sluice/model/dense.h"

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/model/column_sums.h"
#include "sluice/model/gemm.h"

namespace sluice {

Dense::Dense(int64_t units, DenseOptions options)
    : Layer("dense", options.name), units_(units), options_(std::move(options)) {
  if (units <= 0) throw InvalidArgument(str_cat("Dense units must be positive, got ", units));
}

Shape Dense::output_shape(const Shape& input_shape) const {
  if (input_shape.rank() < 1 || input_shape.dim(input_shape.rank() - 1) == 0) {
    throw InvalidArgument(str_cat("Dense '", name(),
                                  "' needs inputs with a non-empty last axis, got ",
                                  input_shape.to_string()));
  }
  Shape out = input_shape;
  out.set_dim(out.rank() - 1, units_);
  return out;
}

void Dense::build_parameters(const Shape& input_shape, Random& rng) {
  const int64_t in = input_shape.dim(input_shape.rank() - 1);
  build_kernel_and_bias({in, units_}, options_.kernel_initializer, options_.kernel_regularizer_l2,
                        options_.use_bias, options_.bias_initializer, rng, kernel_, bias_);
}

std::vector<Parameter*> Dense::parameters() {
  if (!built()) return {};
  if (options_.use_bias) return {&kernel_, &bias_};
  return {&kernel_};
}

Tensor Dense::forward(const Tensor& input, bool training) {
  (void)training;
  prepare(input);
  const int64_t in = kernel_.value.dim(0);
  const int64_t rows = input.num_elements() / in;
  Shape out_shape = input.shape();
  out_shape.set_dim(out_shape.rank() - 1, units_);
  Tensor output = pool_.take(out_shape);
  float* y = output.data<float>();
  const Tensor x = cast_(input);
  internal::gemm(false, false, rows, units_, in, x.data<float>(), cast_.kernel(kernel_.value), y,
                 /*accumulate=*/false, /*parallel=*/true);
  if (options_.use_bias) {
    const float* b = bias_.value.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      float* row = y + r * units_;
      for (int64_t j = 0; j < units_; ++j) row[j] += b[j];
    }
  }
  activation_forward(options_.activation, output.values<float>(), units_, output.values<float>());
  cast_.round(output.values<float>());
  input_ = x;
  output_ = output;
  return output;
}

Tensor Dense::backward(const Tensor& grad_output) {
  if (grad_output.shape() != output_.shape()) {
    throw InvalidArgument(str_cat("Dense '", name(), "' backward: gradient of shape ",
                                  grad_output.shape().to_string(), " for an output of shape ",
                                  output_.shape().to_string()));
  }
  const int64_t in = kernel_.value.dim(0);
  const int64_t rows = output_.num_elements() / units_;
  // dz = dL/d(pre-activation): the incoming gradient itself for a linear layer.
  const Tensor gy = cast_(grad_output);
  const float* g = gy.data<float>();
  if (options_.activation != ActivationFunction::kLinear) {
    dz_.resize(static_cast<size_t>(grad_output.num_elements()));
    activation_backward(options_.activation, output_.values<float>(), gy.values<float>(), units_,
                        dz_);
    cast_.round(dz_);
    g = dz_.data();
  }
  // dW = xᵀ · dz, db = Σ_rows dz, dx = dz · Wᵀ.
  internal::gemm(true, false, in, units_, rows, input_.data<float>(), g,
                 kernel_.gradient.data<float>(), false, true);
  if (options_.use_bias) {
    float* db = bias_.gradient.data<float>();
    std::fill(db, db + units_, 0.0f);
    internal::add_column_sums(g, rows, units_, db);
  }
  if (!input_gradient_needed()) return no_gradient();
  Tensor grad_input = pool_.take(input_.shape());
  internal::gemm(false, true, rows, in, units_, g, cast_.last_kernel(), grad_input.data<float>(),
                 false, true);
  return grad_input;
}

}  // namespace sluice
