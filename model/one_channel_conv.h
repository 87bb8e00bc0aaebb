// A direct convolution for images of one channel with unit horizontal stride, such as a grayscale
// model's first layer. As im2col + GEMM it spends as long building the patches (kh·kw copies of
// every pixel) as multiplying them. These kernels read the window's pixels straight from the
// image, padded once, and do what the register-tile GEMM kernel does with the patches: each
// multiply-add takes one pixel, broadcast, times a vector of the kernel's filters. The sums run in
// the same order as that kernel's, so both paths give the same results bit for bit wherever
// im2col + GEMM takes it (for the kernel gradient, up to 32 filters).
//
// The kernels are compiled per instruction set like the GEMM kernels (one_channel_conv_kernels.h)
// and chosen with them (gemm.cc), so force_gemm_kernel() chooses these too.
#pragma once

#include <cstdint>

namespace sluice::internal {

struct OneChannelConv {
  int64_t h, w;        // the input image
  int64_t kh, kw, sh;  // the kernel and its vertical stride
  int64_t oh, ow;      // the output
  int64_t pad_top, pad_left;
  int64_t filters;

  int64_t taps() const { return kh * kw; }
  // The padded image: the rows and columns that windows read, zeros outside the input.
  int64_t padded_rows() const { return (oh - 1) * sh + kh; }
  int64_t padded_width() const { return ow + kw - 1; }
  int64_t padded_floats() const { return padded_rows() * padded_width(); }
  // A row of filters padded with zeros to whole vectors of every instruction set.
  int64_t filters_stride() const { return (filters + 15) / 16 * 16; }
  // The padded kernel: taps() rows of filters_stride(), then the bias.
  int64_t padded_kernel_floats() const { return (taps() + 1) * filters_stride(); }
};

// Whether the direct kernels run for `g`: on CPUs with SIMD, for a padded image that stays within
// the caches (a larger one takes im2col + GEMM), unless forced off.
bool one_channel_conv_runs(const OneChannelConv& g);
// For tests and benchmarks: makes Conv2D take im2col + GEMM where these kernels would run (false
// restores the automatic choice). Not meant to be called while layers run.
void force_one_channel_im2col(bool force);

// padded[padded_kernel_floats()] = the kernel [kh, kw, 1, filters] and the bias (zeros without
// one), each row of filters padded to filters_stride().
void pad_kernel(const OneChannelConv& g, const float* kernel, const float* bias, float* padded);

// out[oh, ow, filters] = the convolution of one image [h, w], its taps summed in (ky, kx) order,
// plus the bias. `scratch` holds g.padded_floats().
void one_channel_conv_forward(const OneChannelConv& g, const float* image,
                              const float* padded_kernel, float* scratch, float* out);

// gradient[taps(), filters_stride()] += the kernel gradient of one image for the upstream gradient
// dout[oh, ow, filters], each element summed over the output positions in order. Lanes past
// `filters` hold anything: fold_kernel_gradient() reads only the filters.
void one_channel_kernel_gradient(const OneChannelConv& g, const float* image, const float* dout,
                                 float* scratch, float* gradient);

// dkernel[taps(), filters] += the filters of gradient[taps(), filters_stride()].
void fold_kernel_gradient(const OneChannelConv& g, const float* gradient, float* dkernel);

}  // namespace sluice::internal
