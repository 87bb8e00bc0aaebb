// A direct convolution: the windows' pixels read straight from the image, padded once, instead of
// from im2col's patches, which copy every pixel kh·kw times and cost as long to build as to
// multiply. The kernels do what the register-tile GEMM kernel does with the patches: each
// multiply-add takes one pixel, broadcast, times a vector of the kernel's filters, and each
// element's sum runs over the taps (or, for the kernel gradient, the output positions) in the same
// order. So both paths give the same results bit for bit wherever im2col + GEMM takes the tile
// kernel, which is where these run (direct_conv_runs). The input gradient's kernel multiplies each
// upstream gradient, broadcast, by a vector of a window row's taps, and adds the sums straight onto
// the image instead of GEMM's patches and col2im's scatter; its sums over the filters run in order,
// where Eigen's GEMM may group them, so it matches that path to rounding.
//
// The kernels are compiled per instruction set like the GEMM kernels (direct_conv_kernels.h) and
// chosen with them (gemm.cc), so force_gemm_kernel() chooses these too.
#pragma once

#include <cstdint>

namespace sluice::internal {

struct DirectConv {
  int64_t h, w, c;         // the input image (NHWC)
  int64_t kh, kw, sh, sw;  // the kernel and its strides
  int64_t oh, ow;          // the output
  int64_t pad_top, pad_left;
  int64_t filters;

  // A tap is one (ky, kx, channel) of the kernel, in that order.
  int64_t taps() const { return kh * kw * c; }
  // The padded image: the rows and columns that windows read, zeros outside the input.
  int64_t padded_rows() const { return (oh - 1) * sh + kh; }
  int64_t padded_width() const { return (ow - 1) * sw + kw; }
  int64_t padded_floats() const { return padded_rows() * padded_width() * c; }
  // A row of filters padded with zeros to whole vectors of every instruction set.
  int64_t filters_stride() const { return (filters + 15) / 16 * 16; }
  // The padded kernel: taps() rows of filters_stride(), then the bias.
  int64_t padded_kernel_floats() const { return (taps() + 1) * filters_stride(); }
  // A window row's taps (kw · c of them) padded with zeros to whole vectors of every instruction
  // set, and the window-row kernel: for each ky and filter, that filter's weights of the row's
  // taps.
  int64_t run_stride() const { return (kw * c + 15) / 16 * 16; }
  int64_t window_kernel_floats() const { return kh * filters * run_stride(); }
};

// Whether the direct kernels run for `g`: on CPUs with SIMD, where im2col + GEMM would take the
// tile kernel (few taps or few filters), for a padded image that stays within the caches, unless
// forced off.
bool direct_conv_runs(const DirectConv& g);
// For tests and benchmarks: makes Conv2D take im2col + GEMM where these kernels would run (false
// restores the automatic choice). Not meant to be called while layers run.
void force_conv_im2col(bool force);

// padded[padded_kernel_floats()] = the kernel [kh, kw, c, filters] and the bias (zeros without
// one), each row of filters padded to filters_stride().
void pad_kernel(const DirectConv& g, const float* kernel, const float* bias, float* padded);

// out[oh, ow, filters] = the convolution of one image [h, w, c], its taps summed in order, plus the
// bias. `scratch` holds g.padded_floats().
void direct_conv_forward(const DirectConv& g, const float* image, const float* padded_kernel,
                         float* scratch, float* out);

// gradient[taps(), filters_stride()] += the kernel gradient of one image for the upstream gradient
// dout[oh, ow, filters], each element summed over the output positions in order. Lanes past
// `filters` hold anything: fold_kernel_gradient() reads only the filters.
void direct_conv_kernel_gradient(const DirectConv& g, const float* image, const float* dout,
                                 float* scratch, float* gradient);

// window[kh, filters, run_stride()] = the kernel [kh, kw, c, filters] with each window row's taps
// gathered per filter, zeros past them.
void window_kernel(const DirectConv& g, const float* kernel, float* window);

// dx[h, w, c] += the input gradient of one image for the upstream gradient dout[oh, ow, filters],
// given window_kernel(): each position's window times the filters' gradients summed over the
// filters in order, added onto the image in the order of the output positions, as im2col + GEMM +
// col2im add them.
void direct_conv_input_gradient(const DirectConv& g, const float* dout, const float* window_kernel,
                                float* dx);

// dkernel[taps(), filters] += the filters of gradient[taps(), filters_stride()].
void fold_kernel_gradient(const DirectConv& g, const float* gradient, float* dkernel);

}  // namespace sluice::internal
