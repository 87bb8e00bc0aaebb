#include "sluice/model/pooling.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/model/max_pool.h"

namespace sluice {

Pooling2D::Pooling2D(bool max, std::string default_name, Size2D pool_size, Pool2DOptions options)
    : Layer(std::move(default_name), options.name),
      max_(max),
      pool_size_(pool_size),
      strides_(options.strides.value_or(pool_size)),
      padding_(options.padding) {
  if (pool_size.height <= 0 || pool_size.width <= 0 || strides_.height <= 0 ||
      strides_.width <= 0) {
    throw InvalidArgument("pooling needs a positive pool size and strides");
  }
}

Shape Pooling2D::output_shape(const Shape& input_shape) const {
  if (input_shape.rank() != 3) {
    throw InvalidArgument(str_cat(class_name(), " '", name(),
                                  "' takes [height, width, channels] images, got ",
                                  input_shape.to_string()));
  }
  const WindowGeometry y =
      window_geometry(input_shape.dim(0), pool_size_.height, strides_.height, padding_);
  const WindowGeometry x =
      window_geometry(input_shape.dim(1), pool_size_.width, strides_.width, padding_);
  if (y.output <= 0 || x.output <= 0) {
    throw InvalidArgument(str_cat(class_name(), " '", name(), "': pool ", pool_size_.height, "x",
                                  pool_size_.width, " does not fit inputs of shape ",
                                  input_shape.to_string()));
  }
  return {y.output, x.output, input_shape.dim(2)};
}

Tensor Pooling2D::forward(const Tensor& input, bool training) {
  (void)training;
  prepare(input);
  const int64_t batch = input.dim(0), h = input.dim(1), w = input.dim(2), c = input.dim(3);
  if (max_ && h * w * c > std::numeric_limits<int32_t>::max()) {
    throw InvalidArgument(str_cat(class_name(), " '", name(), "': images of shape ",
                                  input_shape().to_string(), " are too large"));
  }
  const WindowGeometry gy = window_geometry(h, pool_size_.height, strides_.height, padding_);
  const WindowGeometry gx = window_geometry(w, pool_size_.width, strides_.width, padding_);
  const int64_t oh = gy.output, ow = gx.output;
  Tensor output = pool_.take({batch, oh, ow, c});
  if (max_) argmax_.resize(static_cast<size_t>(output.num_elements()));
  const float* x = input.data<float>();
  float* y = output.data<float>();
  const internal::MaxPool windows{gy, gx, c};
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, batch, 1), [&](const auto& range) {
        for (int64_t n = range.begin(); n != range.end(); ++n) {
          const float* image = x + n * h * w * c;
          const int64_t out_base = n * oh * ow * c;
          if (max_) {
            internal::max_pool(windows, image, y + out_base, argmax_.data() + out_base);
            continue;
          }
          for (int64_t oy = 0; oy < oh; ++oy) {
            const auto [y0, y1] = gy.span(oy);
            for (int64_t ox = 0; ox < ow; ++ox) {
              const auto [x0, x1] = gx.span(ox);
              float* out = y + out_base + (oy * ow + ox) * c;
              std::fill(out, out + c, 0.0f);
              for (int64_t iy = y0; iy < y1; ++iy) {
                for (int64_t ix = x0; ix < x1; ++ix) {
                  const float* in = image + (iy * w + ix) * c;
                  for (int64_t ch = 0; ch < c; ++ch) out[ch] += in[ch];
                }
              }
              const float inv = 1.0f / static_cast<float>((y1 - y0) * (x1 - x0));
              for (int64_t ch = 0; ch < c; ++ch) out[ch] *= inv;
            }
          }
        }
      });
  batch_input_shape_ = input.shape();
  batch_output_shape_ = output.shape();
  return output;
}

Tensor Pooling2D::backward(const Tensor& grad_output) {
  if (grad_output.shape() != batch_output_shape_) {
    throw InvalidArgument(str_cat(class_name(), " '", name(), "' backward: gradient of shape ",
                                  grad_output.shape().to_string(), " for an output of shape ",
                                  batch_output_shape_.to_string()));
  }
  Tensor grad_input = pool_.take(batch_input_shape_);
  const float* g = grad_output.data<float>();
  float* dx = grad_input.data<float>();
  const int64_t batch = batch_input_shape_.dim(0), h = batch_input_shape_.dim(1),
                w = batch_input_shape_.dim(2), c = batch_input_shape_.dim(3);
  const WindowGeometry gy = window_geometry(h, pool_size_.height, strides_.height, padding_);
  const WindowGeometry gx = window_geometry(w, pool_size_.width, strides_.width, padding_);
  const int64_t oh = gy.output, ow = gx.output;
  const int64_t in_size = h * w * c, out_size = oh * ow * c;
  // Windows never span images, so images are independent; within one, windows may overlap
  // (strides < pool size) and the scatter adds up in output order.
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, batch, 1), [&](const auto& range) {
        for (int64_t n = range.begin(); n != range.end(); ++n) {
          float* d_image = dx + n * in_size;
          std::fill(d_image, d_image + in_size, 0.0f);
          const float* g_image = g + n * out_size;
          if (max_) {
            const int32_t* arg = argmax_.data() + n * out_size;
            for (int64_t i = 0; i < out_size; ++i) d_image[arg[i]] += g_image[i];
            continue;
          }
          for (int64_t oy = 0; oy < oh; ++oy) {
            const auto [y0, y1] = gy.span(oy);
            for (int64_t ox = 0; ox < ow; ++ox) {
              const auto [x0, x1] = gx.span(ox);
              const float* go = g_image + (oy * ow + ox) * c;
              const float inv = 1.0f / static_cast<float>((y1 - y0) * (x1 - x0));
              for (int64_t iy = y0; iy < y1; ++iy) {
                for (int64_t ix = x0; ix < x1; ++ix) {
                  float* d = d_image + (iy * w + ix) * c;
                  for (int64_t ch = 0; ch < c; ++ch) d[ch] += go[ch] * inv;
                }
              }
            }
          }
        }
      });
  return grad_input;
}

Shape GlobalAveragePooling2D::output_shape(const Shape& input_shape) const {
  if (input_shape.rank() != 3) {
    throw InvalidArgument(str_cat("GlobalAveragePooling2D '", name(),
                                  "' takes [height, width, channels] images, got ",
                                  input_shape.to_string()));
  }
  return {input_shape.dim(2)};
}

Tensor GlobalAveragePooling2D::forward(const Tensor& input, bool training) {
  (void)training;
  prepare(input);
  const int64_t batch = input.dim(0), pixels = input.dim(1) * input.dim(2), c = input.dim(3);
  Tensor output(DType::kFloat32, {batch, c});
  const float* x = input.data<float>();
  float* y = output.data<float>();
  const float inv = pixels > 0 ? 1.0f / static_cast<float>(pixels) : 0.0f;
  for (int64_t n = 0; n < batch; ++n) {
    float* out = y + n * c;
    for (int64_t p = 0; p < pixels; ++p) {
      const float* in = x + (n * pixels + p) * c;
      for (int64_t ch = 0; ch < c; ++ch) out[ch] += in[ch];
    }
    for (int64_t ch = 0; ch < c; ++ch) out[ch] *= inv;
  }
  batch_input_shape_ = input.shape();
  return output;
}

Tensor GlobalAveragePooling2D::backward(const Tensor& grad_output) {
  const int64_t batch = batch_input_shape_.dim(0);
  const int64_t pixels = batch_input_shape_.dim(1) * batch_input_shape_.dim(2);
  const int64_t c = batch_input_shape_.dim(3);
  if (grad_output.shape() != Shape({batch, c})) {
    throw InvalidArgument(str_cat("GlobalAveragePooling2D '", name(),
                                  "' backward: gradient of shape ", grad_output.shape().to_string(),
                                  ", expected [", batch, ", ", c, "]"));
  }
  Tensor grad_input(DType::kFloat32, batch_input_shape_);
  const float* g = grad_output.data<float>();
  float* dx = grad_input.data<float>();
  const float inv = pixels > 0 ? 1.0f / static_cast<float>(pixels) : 0.0f;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < pixels; ++p) {
      float* d = dx + (n * pixels + p) * c;
      for (int64_t ch = 0; ch < c; ++ch) d[ch] = g[n * c + ch] * inv;
    }
  }
  return grad_input;
}

}  // namespace sluice
