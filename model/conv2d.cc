#include "model/conv2d.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/errors.h"
#include "core/strings.h"
#include "model/gemm.h"

namespace sluice {
namespace {

// Where the windows of one image fall: shared by im2col and its adjoint col2im.
struct ConvGeometry {
  int64_t h, w, c;          // input
  int64_t kh, kw;           // kernel
  int64_t sh, sw;           // strides
  int64_t oh, ow;           // output
  int64_t pad_top, pad_left;
  int64_t patch() const { return kh * kw * c; }
  int64_t positions() const { return oh * ow; }
};

// patches[oh·ow, kh·kw·c]: row (oy, ox) holds the window at that output position in the kernel's
// (ky, kx, channel) order, zeros where it hangs over the padding.
void im2col(const ConvGeometry& g, const float* image, float* patches) {
  const size_t run = static_cast<size_t>(g.c) * sizeof(float);
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      float* row = patches + (oy * g.ow + ox) * g.patch();
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = oy * g.sh - g.pad_top + ky;
        float* dst = row + ky * g.kw * g.c;
        if (iy < 0 || iy >= g.h) {
          std::memset(dst, 0, run * g.kw);
          continue;
        }
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t ix = ox * g.sw - g.pad_left + kx;
          if (ix < 0 || ix >= g.w) {
            std::memset(dst + kx * g.c, 0, run);
          } else {
            std::memcpy(dst + kx * g.c, image + (iy * g.w + ix) * g.c, run);
          }
        }
      }
    }
  }
}

// image += the patches scattered back to where im2col read them (padding dropped).
void col2im(const ConvGeometry& g, const float* patches, float* image) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const float* row = patches + (oy * g.ow + ox) * g.patch();
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = oy * g.sh - g.pad_top + ky;
        if (iy < 0 || iy >= g.h) continue;
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t ix = ox * g.sw - g.pad_left + kx;
          if (ix < 0 || ix >= g.w) continue;
          const float* src = row + (ky * g.kw + kx) * g.c;
          float* dst = image + (iy * g.w + ix) * g.c;
          for (int64_t ch = 0; ch < g.c; ++ch) dst[ch] += src[ch];
        }
      }
    }
  }
}

ConvGeometry geometry(const Shape& in, Size2D kernel, const Conv2DOptions& options) {
  const WindowGeometry y =
      window_geometry(in.dim(0), kernel.height, options.strides.height, options.padding);
  const WindowGeometry x =
      window_geometry(in.dim(1), kernel.width, options.strides.width, options.padding);
  return {in.dim(0),      in.dim(1),      in.dim(2), kernel.height, kernel.width,
          options.strides.height, options.strides.width, y.output, x.output,
          y.pad_before,   x.pad_before};
}

}  // namespace

Conv2D::Conv2D(int64_t filters, Size2D kernel_size, Conv2DOptions options)
    : Layer("conv2d", options.name),
      filters_(filters),
      kernel_size_(kernel_size),
      options_(std::move(options)) {
  if (filters <= 0 || kernel_size.height <= 0 || kernel_size.width <= 0 ||
      options_.strides.height <= 0 || options_.strides.width <= 0) {
    throw InvalidArgument(str_cat("Conv2D needs positive filters, kernel size and strides, got ",
                                  filters, " filters, kernel ", kernel_size.height, "x",
                                  kernel_size.width, ", strides ", options_.strides.height, "x",
                                  options_.strides.width));
  }
}

Shape Conv2D::output_shape(const Shape& input_shape) const {
  if (input_shape.rank() != 3) {
    throw InvalidArgument(str_cat("Conv2D '", name(), "' takes [height, width, channels] images, got ",
                                  input_shape.to_string()));
  }
  const ConvGeometry g = geometry(input_shape, kernel_size_, options_);
  if (g.oh <= 0 || g.ow <= 0) {
    throw InvalidArgument(str_cat("Conv2D '", name(), "': kernel ", kernel_size_.height, "x",
                                  kernel_size_.width, " does not fit inputs of shape ",
                                  input_shape.to_string(), " with valid padding"));
  }
  return {g.oh, g.ow, filters_};
}

void Conv2D::build_parameters(const Shape& input_shape, Random& rng) {
  kernel_ = make_parameter("kernel",
                           {kernel_size_.height, kernel_size_.width, input_shape.dim(2), filters_});
  kernel_.l2 = options_.kernel_regularizer_l2;
  Random kernel_rng = rng.split(0);
  initialize(options_.kernel_initializer, kernel_.value, kernel_rng);
  if (options_.use_bias) {
    bias_ = make_parameter("bias", {filters_});
    Random bias_rng = rng.split(1);
    initialize(options_.bias_initializer, bias_.value, bias_rng);
  }
}

std::vector<Parameter*> Conv2D::parameters() {
  if (!built()) return {};
  if (options_.use_bias) return {&kernel_, &bias_};
  return {&kernel_};
}

Tensor Conv2D::forward(const Tensor& input, bool training) {
  (void)training;
  prepare(input);
  const ConvGeometry g = geometry(input_shape(), kernel_size_, options_);
  const int64_t batch = input.dim(0);
  Tensor output(DType::kFloat32, {batch, g.oh, g.ow, filters_});
  const float* x = input.data<float>();
  const float* kernel = kernel_.value.data<float>();
  const float* bias = options_.use_bias ? bias_.value.data<float>() : nullptr;
  float* y = output.data<float>();
  const int64_t in_size = g.h * g.w * g.c;
  const int64_t out_size = g.positions() * filters_;
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, batch, 1), [&](const auto& range) {
    std::vector<float> patches(static_cast<size_t>(g.positions() * g.patch()));
    for (int64_t n = range.begin(); n != range.end(); ++n) {
      im2col(g, x + n * in_size, patches.data());
      float* out = y + n * out_size;
      internal::gemm(false, false, g.positions(), filters_, g.patch(), patches.data(), kernel, out,
                     false);
      if (bias) {
        for (int64_t p = 0; p < g.positions(); ++p) {
          for (int64_t f = 0; f < filters_; ++f) out[p * filters_ + f] += bias[f];
        }
      }
      std::span<float> values(out, static_cast<size_t>(out_size));
      activation_forward(options_.activation, values, filters_, values);
    }
  });
  input_ = input;
  output_ = output;
  return output;
}

Tensor Conv2D::backward(const Tensor& grad_output) {
  if (grad_output.shape() != output_.shape()) {
    throw InvalidArgument(str_cat("Conv2D '", name(), "' backward: gradient of shape ",
                                  grad_output.shape().to_string(), " for an output of shape ",
                                  output_.shape().to_string()));
  }
  const ConvGeometry g = geometry(input_shape(), kernel_size_, options_);
  const int64_t batch = output_.dim(0);
  const int64_t in_size = g.h * g.w * g.c;
  const int64_t out_size = g.positions() * filters_;
  const int64_t kernel_size = g.patch() * filters_;

  Tensor dz(DType::kFloat32, output_.shape());
  activation_backward(options_.activation, output_.values<float>(), grad_output.values<float>(),
                      filters_, dz.values<float>());
  Tensor grad_input(DType::kFloat32, input_.shape());
  const float* x = input_.data<float>();
  const float* dz_data = dz.data<float>();
  const float* kernel = kernel_.value.data<float>();
  float* dx = grad_input.data<float>();

  // Kernel gradients are summed per fixed chunk of images and the chunks added in order, so the
  // result does not depend on how many threads ran them.
  const int64_t chunks = std::min<int64_t>(batch, 8);
  std::vector<float> partial(static_cast<size_t>(std::max<int64_t>(chunks, 1) * kernel_size), 0.0f);
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, chunks, 1), [&](const auto& range) {
    std::vector<float> patches(static_cast<size_t>(g.positions() * g.patch()));
    std::vector<float> dpatches(patches.size());
    for (int64_t chunk = range.begin(); chunk != range.end(); ++chunk) {
      float* dk = partial.data() + chunk * kernel_size;
      const int64_t begin = batch * chunk / chunks;
      const int64_t end = batch * (chunk + 1) / chunks;
      for (int64_t n = begin; n < end; ++n) {
        const float* dz_n = dz_data + n * out_size;
        im2col(g, x + n * in_size, patches.data());
        // dK += patchesᵀ · dz; dpatches = dz · Kᵀ, scattered back onto the image.
        internal::gemm(true, false, g.patch(), filters_, g.positions(), patches.data(), dz_n, dk,
                       true);
        internal::gemm(false, true, g.positions(), g.patch(), filters_, dz_n, kernel,
                       dpatches.data(), false);
        col2im(g, dpatches.data(), dx + n * in_size);
      }
    }
  });
  float* dk = kernel_.gradient.data<float>();
  std::fill(dk, dk + kernel_size, 0.0f);
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const float* part = partial.data() + chunk * kernel_size;
    for (int64_t i = 0; i < kernel_size; ++i) dk[i] += part[i];
  }
  if (options_.use_bias) {
    float* db = bias_.gradient.data<float>();
    std::fill(db, db + filters_, 0.0f);
    const int64_t rows = batch * g.positions();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < filters_; ++f) db[f] += dz_data[r * filters_ + f];
    }
  }
  return grad_input;
}

}  // namespace sluice
