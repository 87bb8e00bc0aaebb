#include "sluice/model/conv2d.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/model/column_sums.h"
#include "sluice/model/direct_conv.h"
#include "sluice/model/gemm.h"

namespace sluice {
namespace {

// Where the windows of one image fall: shared by im2col and its adjoint col2im.
struct ConvGeometry {
  int64_t h, w, c;  // input
  int64_t kh, kw;   // kernel
  int64_t sh, sw;   // strides
  int64_t oh, ow;   // output
  int64_t pad_top, pad_left;
  int64_t patch() const { return kh * kw * c; }
  int64_t positions() const { return oh * ow; }
  int64_t image_size() const { return h * w * c; }
  // With one input channel and unit horizontal stride, the patches are built transposed
  // ([patch, positions]): each of their rows is then a run of whole output rows copied from one
  // input row, instead of kh·kw copies of a single float per position.
  bool transposed() const { return c == 1 && sw == 1; }
  // The kernel columns [kx0, kx1) that fall inside the image at output column ox.
  std::pair<int64_t, int64_t> columns(int64_t ox) const {
    const int64_t ix0 = ox * sw - pad_left;
    return {std::clamp<int64_t>(-ix0, 0, kw), std::clamp<int64_t>(w - ix0, 0, kw)};
  }
  // The output columns [ox0, ox1) whose kernel column kx falls inside the image (stride 1).
  std::pair<int64_t, int64_t> outputs(int64_t kx) const {
    const int64_t ox0 = std::clamp<int64_t>(pad_left - kx, 0, ow);
    return {ox0, std::clamp<int64_t>(w + pad_left - kx, ox0, ow)};
  }
};

// The runs im2col and col2im move are a window row or an output row: tens of floats, for which a
// call to memmove or memset costs more than the copy. These loops stay inline (CMakeLists.txt keeps
// GCC from turning them back into those calls).
inline void copy_run(const float* src, int64_t n, float* dst) {
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j];
}
inline void zero_run(float* dst, int64_t n) {
  for (int64_t j = 0; j < n; ++j) dst[j] = 0.0f;
}
inline void add_run(const float* src, int64_t n, float* dst) {
  for (int64_t j = 0; j < n; ++j) dst[j] += src[j];
}

// patches[count·oh·ow, kh·kw·c] for `count` consecutive images: row (image, oy, ox) holds the
// window at that output position in the kernel's (ky, kx, channel) order, zeros where it hangs
// over the padding. A window row (fixed ky) is one contiguous run of the NHWC image.
void im2col(const ConvGeometry& g, const float* images, int64_t count, float* patches) {
  const int64_t run = g.kw * g.c;
  for (int64_t i = 0; i < count; ++i) {
    const float* image = images + i * g.image_size();
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        float* row = patches + ((i * g.oh + oy) * g.ow + ox) * g.patch();
        const auto [kx0, kx1] = g.columns(ox);
        const int64_t ix0 = ox * g.sw - g.pad_left;
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int64_t iy = oy * g.sh - g.pad_top + ky;
          float* dst = row + ky * run;
          if (iy < 0 || iy >= g.h || kx0 >= kx1) {
            zero_run(dst, run);
            continue;
          }
          zero_run(dst, kx0 * g.c);
          copy_run(image + (iy * g.w + ix0 + kx0) * g.c, (kx1 - kx0) * g.c, dst + kx0 * g.c);
          zero_run(dst + kx1 * g.c, run - kx1 * g.c);
        }
      }
    }
  }
}

// images += the patches scattered back to where im2col read them (padding dropped).
void col2im(const ConvGeometry& g, const float* patches, int64_t count, float* images) {
  const int64_t run = g.kw * g.c;
  for (int64_t i = 0; i < count; ++i) {
    float* image = images + i * g.image_size();
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const float* row = patches + ((i * g.oh + oy) * g.ow + ox) * g.patch();
        const auto [kx0, kx1] = g.columns(ox);
        const int64_t ix0 = ox * g.sw - g.pad_left;
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int64_t iy = oy * g.sh - g.pad_top + ky;
          if (iy < 0 || iy >= g.h || kx0 >= kx1) continue;
          add_run(row + ky * run + kx0 * g.c, (kx1 - kx0) * g.c,
                  image + (iy * g.w + ix0 + kx0) * g.c);
        }
      }
    }
  }
}

// The transposed layout (ConvGeometry::transposed): patches[kh·kw, count·oh·ow], row (ky, kx)
// holding that kernel tap's input pixel for every output position of the `count` images.
void im2col_transposed(const ConvGeometry& g, const float* images, int64_t count, float* patches) {
  const int64_t columns = count * g.positions();
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      float* row = patches + (ky * g.kw + kx) * columns;
      const auto [ox0, ox1] = g.outputs(kx);
      for (int64_t i = 0; i < count; ++i) {
        const float* image = images + i * g.image_size();
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          float* dst = row + i * g.positions() + oy * g.ow;
          const int64_t iy = oy * g.sh - g.pad_top + ky;
          if (iy < 0 || iy >= g.h || ox0 >= ox1) {
            zero_run(dst, g.ow);
            continue;
          }
          zero_run(dst, ox0);
          copy_run(image + iy * g.w + ox0 - g.pad_left + kx, ox1 - ox0, dst + ox0);
          zero_run(dst + ox1, g.ow - ox1);
        }
      }
    }
  }
}

// The adjoint of im2col_transposed: images += the patches scattered back.
void col2im_transposed(const ConvGeometry& g, const float* patches, int64_t count, float* images) {
  const int64_t columns = count * g.positions();
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const float* row = patches + (ky * g.kw + kx) * columns;
      const auto [ox0, ox1] = g.outputs(kx);
      if (ox0 >= ox1) continue;
      for (int64_t i = 0; i < count; ++i) {
        float* image = images + i * g.image_size();
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t iy = oy * g.sh - g.pad_top + ky;
          if (iy < 0 || iy >= g.h) continue;
          add_run(row + i * g.positions() + oy * g.ow + ox0, ox1 - ox0,
                  image + iy * g.w + ox0 - g.pad_left + kx);
        }
      }
    }
  }
}

// Images per block: enough rows for an efficient product, patches small enough for L2.
int64_t images_per_block(const ConvGeometry& g) {
  constexpr int64_t kPatchFloats = 64 * 1024;
  return std::clamp<int64_t>(kPatchFloats / std::max<int64_t>(1, g.positions() * g.patch()), 1, 16);
}

// Kernel and bias gradients are summed per fixed chunk of images and the chunks added in order,
// so the result does not depend on how many threads ran them.
constexpr int64_t kGradientChunks = 8;

ConvGeometry geometry(const Shape& in, Size2D kernel, const Conv2DOptions& options) {
  const WindowGeometry y =
      window_geometry(in.dim(0), kernel.height, options.strides.height, options.padding);
  const WindowGeometry x =
      window_geometry(in.dim(1), kernel.width, options.strides.width, options.padding);
  return {in.dim(0),
          in.dim(1),
          in.dim(2),
          kernel.height,
          kernel.width,
          options.strides.height,
          options.strides.width,
          y.output,
          x.output,
          y.pad_before,
          x.pad_before};
}

// The direct kernels' geometry where they run for this layer, instead of im2col + GEMM.
std::optional<internal::DirectConv> direct_geometry(const ConvGeometry& g, int64_t filters) {
  const internal::DirectConv direct{g.h,  g.w,  g.c,  g.kh,      g.kw,       g.sh,
                                    g.sw, g.oh, g.ow, g.pad_top, g.pad_left, filters};
  if (!internal::direct_conv_runs(direct)) return std::nullopt;
  return direct;
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
    throw InvalidArgument(str_cat("Conv2D '", name(),
                                  "' takes [height, width, channels] images, got ",
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
  build_kernel_and_bias({kernel_size_.height, kernel_size_.width, input_shape.dim(2), filters_},
                        options_.kernel_initializer, options_.kernel_regularizer_l2,
                        options_.use_bias, options_.bias_initializer, rng, kernel_, bias_);
}

std::vector<Parameter*> Conv2D::parameters() {
  if (!built()) return {};
  if (options_.use_bias) return {&kernel_, &bias_};
  return {&kernel_};
}

struct Conv2D::Workspace {
  struct Buffers {
    std::vector<float> patches;
    std::vector<float> dpatches;
    std::vector<float> dz;
    std::vector<float> padded;  // one padded image for the direct kernels
  };
  // Each task takes the buffers of the thread running it; sized on first use, then reused.
  oneapi::tbb::enumerable_thread_specific<Buffers> buffers;
  std::vector<float> partial;        // kGradientChunks × (kernel + bias) partial gradients.
  std::vector<float> padded_kernel;  // the direct kernels' kernel and bias
  std::vector<float> window_kernel;  // the direct input gradient's kernel
};

Conv2D::~Conv2D() = default;

Tensor Conv2D::forward(const Tensor& input, bool training) {
  (void)training;
  prepare(input);
  if (!workspace_) workspace_ = std::make_unique<Workspace>();
  const ConvGeometry g = geometry(input_shape(), kernel_size_, options_);
  const int64_t batch = input.dim(0);
  Tensor output = pool_.take({batch, g.oh, g.ow, filters_});
  // mixed_bfloat16: the products read bfloat16-rounded images and kernel (mixed_precision.h).
  const Tensor rounded = cast_(input);
  const float* x = rounded.data<float>();
  const float* kernel = cast_.kernel(kernel_.value);
  const float* bias = options_.use_bias ? bias_.value.data<float>() : nullptr;
  float* y = output.data<float>();
  const int64_t out_size = g.positions() * filters_;
  const int64_t per_block = images_per_block(g);
  const int64_t blocks = (batch + per_block - 1) / per_block;
  const std::optional<internal::DirectConv> direct = direct_geometry(g, filters_);
  if (direct) {
    workspace_->padded_kernel.resize(static_cast<size_t>(direct->padded_kernel_floats()));
    internal::pad_kernel(*direct, kernel, bias, workspace_->padded_kernel.data());
  }
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, blocks, 1), [&](const auto& range) {
        Workspace::Buffers& buffers = workspace_->buffers.local();
        std::vector<float>& patches = buffers.patches;
        for (int64_t block = range.begin(); block != range.end(); ++block) {
          const int64_t n0 = block * per_block;
          const int64_t count = std::min(per_block, batch - n0);
          const int64_t rows = count * g.positions();
          float* out = y + n0 * out_size;
          if (direct) {
            buffers.padded.resize(static_cast<size_t>(direct->padded_floats()));
            for (int64_t i = 0; i < count; ++i) {
              internal::direct_conv_forward(*direct, x + (n0 + i) * g.image_size(),
                                            workspace_->padded_kernel.data(), buffers.padded.data(),
                                            out + i * out_size);
            }
          } else {
            patches.resize(std::max<size_t>(patches.size(), static_cast<size_t>(rows * g.patch())));
            if (g.transposed()) {
              im2col_transposed(g, x + n0 * g.image_size(), count, patches.data());
              internal::gemm(true, false, rows, filters_, g.patch(), patches.data(), kernel, out,
                             false);
            } else {
              im2col(g, x + n0 * g.image_size(), count, patches.data());
              internal::gemm(false, false, rows, filters_, g.patch(), patches.data(), kernel, out,
                             false);
            }
            if (bias) {
              for (int64_t r = 0; r < rows; ++r) {
                float* o = out + r * filters_;
                for (int64_t f = 0; f < filters_; ++f) o[f] += bias[f];
              }
            }
          }
          std::span<float> values(out, static_cast<size_t>(rows * filters_));
          activation_forward(options_.activation, values, filters_, values);
          cast_.round(values);
        }
      });
  input_ = rounded;
  output_ = output;
  return output;
}

Tensor Conv2D::backward(const Tensor& grad_output) {
  if (!workspace_) {
    throw FailedPrecondition(str_cat("Conv2D '", name(), "' backward before any forward"));
  }
  if (grad_output.shape() != output_.shape()) {
    throw InvalidArgument(str_cat("Conv2D '", name(), "' backward: gradient of shape ",
                                  grad_output.shape().to_string(), " for an output of shape ",
                                  output_.shape().to_string()));
  }
  const ConvGeometry g = geometry(input_shape(), kernel_size_, options_);
  const int64_t batch = output_.dim(0);
  const int64_t out_size = g.positions() * filters_;
  const int64_t kernel_size = g.patch() * filters_;
  const bool linear = options_.activation == ActivationFunction::kLinear;

  const bool input_gradient = input_gradient_needed();
  // The direct kernels compute the kernel gradient and, where needed, the input gradient. Without
  // them the input gradient scatters the patches' gradient back onto the images.
  const std::optional<internal::DirectConv> direct = direct_geometry(g, filters_);
  // Each chunk's kernel gradient, its rows of filters padded where the direct kernels run.
  const int64_t partial_kernel = direct ? direct->taps() * direct->filters_stride() : kernel_size;
  const int64_t partial_size = partial_kernel + filters_;
  Tensor grad_input = input_gradient ? pool_.take(input_.shape()) : no_gradient();
  const float* x = input_.data<float>();
  const float* y = output_.data<float>();
  const Tensor rounded_dy = cast_(grad_output);
  const float* dy = rounded_dy.data<float>();
  const float* kernel = cast_.last_kernel();
  float* dx = input_gradient ? grad_input.data<float>() : nullptr;
  const int64_t per_block = images_per_block(g);
  const int64_t chunks = std::min(batch, kGradientChunks);
  if (direct && input_gradient) {
    workspace_->window_kernel.resize(static_cast<size_t>(direct->window_kernel_floats()));
    internal::window_kernel(*direct, kernel, workspace_->window_kernel.data());
  }
  std::vector<float>& partial = workspace_->partial;
  partial.assign(static_cast<size_t>(std::max<int64_t>(chunks, 1) * partial_size), 0.0f);

  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, chunks, 1), [&](const auto& range) {
        Workspace::Buffers& buffers = workspace_->buffers.local();
        for (int64_t chunk = range.begin(); chunk != range.end(); ++chunk) {
          float* dk = partial.data() + chunk * partial_size;
          float* db = dk + partial_kernel;
          const int64_t chunk_end = batch * (chunk + 1) / chunks;
          for (int64_t n0 = batch * chunk / chunks; n0 < chunk_end; n0 += per_block) {
            const int64_t count = std::min(per_block, chunk_end - n0);
            const int64_t rows = count * g.positions();
            // dz = dL/d(pre-activation) of this block.
            const float* dz = dy + n0 * out_size;
            if (!linear) {
              const size_t values = static_cast<size_t>(rows * filters_);
              buffers.dz.resize(std::max(buffers.dz.size(), values));
              activation_backward(options_.activation, {y + n0 * out_size, values}, {dz, values},
                                  filters_, {buffers.dz.data(), values});
              cast_.round({buffers.dz.data(), values});
              dz = buffers.dz.data();
            }
            internal::add_column_sums(dz, rows, filters_, db);
            const size_t patch_floats = static_cast<size_t>(rows * g.patch());
            if (direct) {
              buffers.padded.resize(static_cast<size_t>(direct->padded_floats()));
              for (int64_t i = 0; i < count; ++i) {
                internal::direct_conv_kernel_gradient(*direct, x + (n0 + i) * g.image_size(),
                                                      dz + i * out_size, buffers.padded.data(), dk);
              }
            } else {
              // dK += patchesᵀ · dz.
              buffers.patches.resize(std::max(buffers.patches.size(), patch_floats));
              float* patches = buffers.patches.data();
              if (g.transposed()) {
                im2col_transposed(g, x + n0 * g.image_size(), count, patches);
                internal::gemm(false, false, g.patch(), filters_, rows, patches, dz, dk, true);
              } else {
                im2col(g, x + n0 * g.image_size(), count, patches);
                internal::gemm(true, false, g.patch(), filters_, rows, patches, dz, dk, true);
              }
            }
            if (!input_gradient) continue;
            float* dx_block = dx + n0 * g.image_size();
            std::fill(dx_block, dx_block + count * g.image_size(), 0.0f);
            if (direct) {
              for (int64_t i = 0; i < count; ++i) {
                internal::direct_conv_input_gradient(*direct, dz + i * out_size,
                                                     workspace_->window_kernel.data(),
                                                     dx_block + i * g.image_size());
              }
              continue;
            }
            // dpatches = dz · Kᵀ, scattered back onto the images.
            buffers.dpatches.resize(std::max(buffers.dpatches.size(), patch_floats));
            float* dpatches = buffers.dpatches.data();
            if (g.transposed()) {
              internal::gemm(false, true, g.patch(), rows, filters_, kernel, dz, dpatches, false);
              col2im_transposed(g, dpatches, count, dx_block);
            } else {
              internal::gemm(false, true, rows, g.patch(), filters_, dz, kernel, dpatches, false);
              col2im(g, dpatches, count, dx_block);
            }
          }
        }
      });
  float* dk = kernel_.gradient.data<float>();
  std::fill(dk, dk + kernel_size, 0.0f);
  float* db = options_.use_bias ? bias_.gradient.data<float>() : nullptr;
  if (db) std::fill(db, db + filters_, 0.0f);
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const float* part = partial.data() + chunk * partial_size;
    if (direct) {
      internal::fold_kernel_gradient(*direct, part, dk);
    } else {
      for (int64_t i = 0; i < kernel_size; ++i) dk[i] += part[i];
    }
    if (db) {
      for (int64_t f = 0; f < filters_; ++f) db[f] += part[partial_kernel + f];
    }
  }
  return grad_input;
}

}  // namespace sluice
