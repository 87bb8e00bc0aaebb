#include "sluice/model/batch_normalization.h"

#include <cmath>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/model/column_sums.h"

namespace sluice {

BatchNormalization::BatchNormalization(BatchNormalizationOptions options)
    : Layer("batch_normalization", options.name), options_(std::move(options)) {
  if (!(options_.momentum >= 0.0f && options_.momentum <= 1.0f) || !(options_.epsilon > 0.0f)) {
    throw InvalidArgument(
        str_cat("BatchNormalization needs momentum in [0, 1] and epsilon > 0, got ",
                options_.momentum, " and ", options_.epsilon));
  }
}

Shape BatchNormalization::output_shape(const Shape& input_shape) const {
  if (input_shape.rank() < 1) {
    throw InvalidArgument(str_cat("BatchNormalization '", name(), "' needs a channel axis"));
  }
  return input_shape;
}

void BatchNormalization::build_parameters(const Shape& input_shape, Random& rng) {
  (void)rng;
  const int64_t channels = input_shape.dim(input_shape.rank() - 1);
  if (options_.scale) {
    gamma_ = make_parameter("gamma", {channels});
    gamma_.value.flat<float>().setConstant(1.0f);
  }
  if (options_.center) beta_ = make_parameter("beta", {channels});
  moving_mean_ = make_parameter("moving_mean", {channels}, /*statistic=*/true);
  moving_variance_ = make_parameter("moving_variance", {channels}, /*statistic=*/true);
  moving_variance_.value.flat<float>().setConstant(1.0f);
}

std::vector<Parameter*> BatchNormalization::parameters() {
  if (!built()) return {};
  std::vector<Parameter*> params;
  if (options_.scale) params.push_back(&gamma_);
  if (options_.center) params.push_back(&beta_);
  params.push_back(&moving_mean_);
  params.push_back(&moving_variance_);
  return params;
}

Tensor BatchNormalization::forward(const Tensor& input, bool training) {
  prepare(input);
  const int64_t channels = input.dim(input.rank() - 1);
  const int64_t rows = input.num_elements() / channels;
  const float* x = input.data<float>();
  // A frozen layer runs in inference mode, as Keras does since TF 2.0 (fine-tuning keeps the
  // statistics learned on the original data).
  used_batch_statistics_ = training && trainable() && rows > 0;
  inv_std_.assign(static_cast<size_t>(channels), 0.0f);
  std::vector<float> mean(static_cast<size_t>(channels));
  // Per-channel values are read through arrays repeated to a column-sums group (column_sums.h), so
  // the loops over elements run over whole groups of rows.
  const int64_t group = internal::column_sums_group(channels);
  float* moving_mean = moving_mean_.value.data<float>();
  float* moving_var = moving_variance_.value.data<float>();
  if (used_batch_statistics_) {
    // Two passes in double: the one-pass E[x²] − E[x]² loses everything for large offsets.
    std::vector<double> sum = internal::column_sums_in_chunks(
        rows, channels, [x](int64_t i, int64_t) { return double{x[i]}; });
    for (int64_t c = 0; c < channels; ++c) sum[c] /= double(rows);
    const std::vector<double> mean_at = internal::repeat_to_group(sum, group);
    const std::vector<double> sq =
        internal::column_sums_in_chunks(rows, channels, [&](int64_t i, int64_t j) {
          const double d = x[i] - mean_at[j];
          return d * d;
        });
    const bool unbiased = options_.convention == BatchNormConvention::kPyTorch || input.rank() == 4;
    const double bessel = unbiased && rows > 1 ? double(rows) / double(rows - 1) : 1.0;
    // Both conventions as new = old·keep + batch·(1 − keep).
    const double keep = options_.convention == BatchNormConvention::kKeras
                            ? options_.momentum
                            : 1.0 - double(options_.momentum);
    for (int64_t c = 0; c < channels; ++c) {
      const double var = sq[c] / double(rows);
      mean[c] = static_cast<float>(sum[c]);
      inv_std_[c] = static_cast<float>(1.0 / std::sqrt(var + double(options_.epsilon)));
      moving_mean[c] = static_cast<float>(moving_mean[c] * keep + sum[c] * (1.0 - keep));
      moving_var[c] = static_cast<float>(moving_var[c] * keep + var * bessel * (1.0 - keep));
    }
  } else {
    for (int64_t c = 0; c < channels; ++c) {
      mean[c] = moving_mean[c];
      inv_std_[c] = 1.0f / std::sqrt(moving_var[c] + options_.epsilon);
    }
  }
  Tensor output = pool_.take(input.shape());
  normalized_ = pool_.take(input.shape());
  float* xhat = normalized_.data<float>();
  float* y = output.data<float>();
  const float* gamma = options_.scale ? gamma_.value.data<float>() : nullptr;
  const float* beta = options_.center ? beta_.value.data<float>() : nullptr;
  std::vector<float> scale(static_cast<size_t>(channels));
  std::vector<float> shift(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    scale[c] = gamma ? gamma[c] : 1.0f;
    shift[c] = beta ? beta[c] : 0.0f;
  }
  const std::vector<float> mean_at = internal::repeat_to_group(mean, group);
  const std::vector<float> inv_std_at = internal::repeat_to_group(inv_std_, group);
  const std::vector<float> scale_at = internal::repeat_to_group(scale, group);
  const std::vector<float> shift_at = internal::repeat_to_group(shift, group);
  // Two loops, each storing through one pointer: a loop storing both would need more run-time
  // checks that its arrays do not overlap than GCC makes, and would not vectorise.
  internal::for_each_in_groups(rows * channels, group,
                               [x, xhat, m = mean_at.data(), s = inv_std_at.data()](
                                   int64_t i, int64_t j) { xhat[i] = (x[i] - m[j]) * s[j]; });
  internal::for_each_in_groups(rows * channels, group,
                               [xhat, y, a = scale_at.data(), b = shift_at.data()](
                                   int64_t i, int64_t j) { y[i] = xhat[i] * a[j] + b[j]; });
  return output;
}

Tensor BatchNormalization::backward(const Tensor& grad_output) {
  if (grad_output.shape() != normalized_.shape()) {
    throw InvalidArgument(str_cat("BatchNormalization '", name(), "' backward: gradient of shape ",
                                  grad_output.shape().to_string(), " for an output of shape ",
                                  normalized_.shape().to_string()));
  }
  const int64_t channels = static_cast<int64_t>(inv_std_.size());
  const int64_t rows = grad_output.num_elements() / channels;
  const float* g = grad_output.data<float>();
  const float* xhat = normalized_.data<float>();
  const int64_t group = internal::column_sums_group(channels);
  const std::vector<double> sum_g = internal::column_sums_in_chunks(
      rows, channels, [g](int64_t i, int64_t) { return double{g[i]}; });
  const std::vector<double> sum_g_xhat = internal::column_sums_in_chunks(
      rows, channels, [&](int64_t i, int64_t) { return double{g[i]} * xhat[i]; });
  if (options_.scale) {
    float* dgamma = gamma_.gradient.data<float>();
    for (int64_t c = 0; c < channels; ++c) dgamma[c] = static_cast<float>(sum_g_xhat[c]);
  }
  if (options_.center) {
    float* dbeta = beta_.gradient.data<float>();
    for (int64_t c = 0; c < channels; ++c) dbeta[c] = static_cast<float>(sum_g[c]);
  }
  Tensor grad_input = pool_.take(grad_output.shape());
  float* dx = grad_input.data<float>();
  const float* gamma = options_.scale ? gamma_.value.data<float>() : nullptr;
  // With batch statistics the mean and variance depend on x too:
  // dx = γ·inv_std·(g − mean(g) − x̂·mean(g·x̂)).
  std::vector<float> scale(static_cast<size_t>(channels));
  std::vector<float> mean_g(static_cast<size_t>(channels), 0.0f);
  std::vector<float> mean_gx(static_cast<size_t>(channels), 0.0f);
  for (int64_t c = 0; c < channels; ++c) {
    scale[c] = (gamma ? gamma[c] : 1.0f) * inv_std_[c];
    if (used_batch_statistics_) {
      mean_g[c] = static_cast<float>(sum_g[c] / double(rows));
      mean_gx[c] = static_cast<float>(sum_g_xhat[c] / double(rows));
    }
  }
  const std::vector<float> scale_at = internal::repeat_to_group(scale, group);
  const std::vector<float> mean_g_at = internal::repeat_to_group(mean_g, group);
  const std::vector<float> mean_gx_at = internal::repeat_to_group(mean_gx, group);
  internal::for_each_in_groups(
      rows * channels, group,
      [dx, g, xhat, s = scale_at.data(), mg = mean_g_at.data(), mgx = mean_gx_at.data()](
          int64_t i, int64_t j) { dx[i] = s[j] * (g[i] - mg[j] - xhat[i] * mgx[j]); });
  return grad_input;
}

}  // namespace sluice
