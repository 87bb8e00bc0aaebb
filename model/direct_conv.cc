#include "sluice/model/direct_conv.h"

#include <algorithm>

namespace sluice::internal {

void pad_kernel(const DirectConv& g, const float* kernel, const float* bias, float* padded) {
  const int64_t stride = g.filters_stride();
  std::fill_n(padded, g.padded_kernel_floats(), 0.0f);
  for (int64_t t = 0; t < g.taps(); ++t) {
    std::copy_n(kernel + t * g.filters, g.filters, padded + t * stride);
  }
  if (bias) std::copy_n(bias, g.filters, padded + g.taps() * stride);
}

void window_kernel(const DirectConv& g, const float* kernel, float* window) {
  const int64_t run = g.kw * g.c;
  const int64_t stride = g.run_stride();
  std::fill_n(window, g.window_kernel_floats(), 0.0f);
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    for (int64_t j = 0; j < run; ++j) {
      const float* taps = kernel + (ky * run + j) * g.filters;
      for (int64_t f = 0; f < g.filters; ++f) window[(ky * g.filters + f) * stride + j] = taps[f];
    }
  }
}

void fold_kernel_gradient(const DirectConv& g, const float* gradient, float* dkernel) {
  const int64_t stride = g.filters_stride();
  for (int64_t t = 0; t < g.taps(); ++t) {
    for (int64_t f = 0; f < g.filters; ++f) dkernel[t * g.filters + f] += gradient[t * stride + f];
  }
}

}  // namespace sluice::internal
