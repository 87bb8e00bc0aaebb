#include "sluice/model/pooling.h"

#include <emmintrin.h>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"

namespace sluice {
namespace {

// A max-pooling window: rows [y0, y1) × columns [x0, x1) of an image `w` pixels wide with `c`
// channels.
struct Window {
  int64_t y0, y1, x0, x1;
  int64_t w, c;
  int64_t offset(int64_t y, int64_t x) const { return (y * w + x) * c; }
};

// Whether v replaces the running maximum m: strictly greater keeps the first maximum, and a NaN
// wins so that it propagates.
inline bool takes(float v, float m) { return (v > m) || (std::isnan(v) && !std::isnan(m)); }

// Channel ch's maximum over the window, and the index within the image of its first occurrence.
void max_over_window(const float* image, const Window& win, int64_t ch, float* out, int32_t* arg) {
  float m = image[win.offset(win.y0, win.x0) + ch];
  int64_t a = win.offset(win.y0, win.x0) + ch;
  for (int64_t iy = win.y0; iy < win.y1; ++iy) {
    for (int64_t ix = win.x0; ix < win.x1; ++ix) {
      const int64_t i = win.offset(iy, ix) + ch;
      if (takes(image[i], m)) m = image[i], a = i;
    }
  }
  out[ch] = m;
  arg[ch] = static_cast<int32_t>(a);
}

// Lanes of `b` where `mask` is set, else of `a`.
inline __m128 select(__m128 mask, __m128 a, __m128 b) {
#if defined(__SSE4_1__)
  return _mm_blendv_ps(a, b, mask);
#else
  return _mm_or_ps(_mm_and_ps(mask, b), _mm_andnot_ps(mask, a));
#endif
}

// Four channels' running maxima m and their indices a take the values at `place` (the index of
// the first of the four) where takes() says so, in SSE registers without a branch on the data:
// mispredicted branches on random activations were most of the pooling time. takes() as two
// comparisons: v > m or v is NaN is "not v <= m" (true when unordered), over a maximum that is
// not NaN.
inline void take_max4(const float* image, int64_t place, __m128& m, __m128i& a) {
  const __m128i lanes = _mm_set_epi32(3, 2, 1, 0);
  const __m128 v = _mm_loadu_ps(image + place);
  const __m128 take = _mm_and_ps(_mm_cmpnle_ps(v, m), _mm_cmpord_ps(m, m));
  m = select(take, m, v);
  const __m128i index = _mm_add_epi32(_mm_set1_epi32(static_cast<int32_t>(place)), lanes);
  a = _mm_castps_si128(select(take, _mm_castsi128_ps(a), _mm_castsi128_ps(index)));
}

// max_over_window for channels [ch, ch + 4) at once.
void max_over_window4(const float* image, const Window& win, int64_t ch, float* out, int32_t* arg) {
  const int64_t first = win.offset(win.y0, win.x0) + ch;
  __m128 m = _mm_loadu_ps(image + first);
  __m128i a = _mm_add_epi32(_mm_set1_epi32(static_cast<int32_t>(first)), _mm_set_epi32(3, 2, 1, 0));
  if (win.y1 - win.y0 == 2 && win.x1 - win.x0 == 2) {
    // The common 2×2 window, unrolled: the same comparisons in the same order, without the loops'
    // bookkeeping.
    take_max4(image, first + win.c, m, a);
    take_max4(image, first + win.w * win.c, m, a);
    take_max4(image, first + (win.w + 1) * win.c, m, a);
  } else {
    for (int64_t iy = win.y0; iy < win.y1; ++iy) {
      for (int64_t ix = win.x0; ix < win.x1; ++ix) {
        const int64_t place = win.offset(iy, ix) + ch;
        if (place != first) take_max4(image, place, m, a);
      }
    }
  }
  _mm_storeu_ps(out + ch, m);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(arg + ch), a);
}

// Every channel of one output pixel: groups of four, the last group overlapping the one before
// (storing the same values again) when c is not a multiple of four.
void max_pool_pixel(const float* image, const Window& win, float* out, int32_t* arg) {
  if (win.c < 4) {
    for (int64_t ch = 0; ch < win.c; ++ch) max_over_window(image, win, ch, out, arg);
    return;
  }
  for (int64_t ch = 0; ch < win.c; ch += 4) {
    max_over_window4(image, win, std::min(ch, win.c - 4), out, arg);
  }
}

}  // namespace

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
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, batch, 1), [&](const auto& range) {
        for (int64_t n = range.begin(); n != range.end(); ++n) {
          const float* image = x + n * h * w * c;
          for (int64_t oy = 0; oy < oh; ++oy) {
            const auto [y0, y1] = gy.span(oy);
            for (int64_t ox = 0; ox < ow; ++ox) {
              const auto [x0, x1] = gx.span(ox);
              const int64_t out_base = ((n * oh + oy) * ow + ox) * c;
              float* out = y + out_base;
              if (max_) {
                max_pool_pixel(image, {y0, y1, x0, x1, w, c}, out, argmax_.data() + out_base);
              } else {
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
