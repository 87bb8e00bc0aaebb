// direct_conv.h's kernels, for the instruction set of the including file: compiled by gemm.cc
// for the baseline, by gemm_avx2.cc and by gemm_avx512.cc, like gemm_tiles.h and with its internal
// linkage. Their tiles are gemm_tiles.h's: each multiply-add a broadcast pixel times a vector of
// filters, so that a tile loads one vector per step and otherwise only pixels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "sluice/model/direct_conv.h"
#include "sluice/model/simd.h"

#if SLUICE_SIMD

namespace sluice::internal {
namespace {
namespace direct_conv {

using namespace simd;

// Tiles cover at most this many vectors of filters; more filters take several strips of them.
constexpr int64_t kMaxVectors = 4;
// The accumulators of a tile of `vectors` vectors: 12 leave room for the operands in the 16 vector
// registers of SSE and AVX2. AVX-512 has 32, and a tile of several vectors takes twice as many, so
// that each weight loaded and each pixel broadcast feed more multiply-adds (conv2 of fashion-cnn
// ran about 5% faster). A tile of one vector stays at 12: each of its multiply-adds needs a
// broadcast of its own whatever the tile's size, and 24 ran conv1 about a quarter slower.
constexpr int64_t accumulators(int64_t vectors) { return kLanes == 16 && vectors > 1 ? 24 : 12; }

template <int64_t N>
using Constant = std::integral_constant<int64_t, N>;

// Calls f(Constant<n>) for the runtime 1 <= n <= kMax: a tile's size as a compile-time constant.
template <int64_t kMax, typename F>
inline void with_size(int64_t n, F&& f) {
  if constexpr (kMax > 1) {
    if (n < kMax) return with_size<kMax - 1>(n, f);
  }
  f(Constant<kMax>{});
}

// Calls f(v0, Constant<vectors>) for each strip of at most kMaxVectors vectors of g's filters.
template <typename F>
inline void for_each_strip(const DirectConv& g, F&& f) {
  const int64_t vectors = (g.filters + kLanes - 1) / kLanes;
  for (int64_t v0 = 0; v0 < vectors; v0 += kMaxVectors) {
    with_size<kMaxVectors>(vectors - v0, [&](auto strip_vectors) { f(v0, strip_vectors); });
  }
}

// Calls f(first, Constant<size>) for [0, n) cut into tiles of at most kMax, of even sizes as
// gemm_tiles.h's strips cut them: a short last tile would leave too few independent sums to keep
// the multiply-adds busy.
template <int64_t kMax, typename F>
inline void for_each_tile(int64_t n, F&& f) {
  const int64_t tiles = (n + kMax - 1) / kMax;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t first = n * t / tiles;
    with_size<kMax>(n * (t + 1) / tiles - first, [&](auto size) { f(first, size); });
  }
}

// padded[padded_rows, padded_width, c] = the image with the windows' zeros around it.
void pad_image(const DirectConv& g, const float* image, float* padded) {
  const int64_t width = g.padded_width();
  const int64_t x0 = std::min(g.pad_left, width);
  const int64_t x1 = std::clamp(g.pad_left + g.w, x0, width);
  for (int64_t r = 0; r < g.padded_rows(); ++r) {
    float* dst = padded + r * width * g.c;
    const int64_t iy = r - g.pad_top;
    if (iy < 0 || iy >= g.h) {
      std::fill_n(dst, width * g.c, 0.0f);
      continue;
    }
    std::fill_n(dst, x0 * g.c, 0.0f);
    const float* src = image + (iy * g.w + x0 - g.pad_left) * g.c;
    std::copy(src, src + (x1 - x0) * g.c, dst + x0 * g.c);
    std::fill_n(dst + x1 * g.c, (width - x1) * g.c, 0.0f);
  }
}

// A forward tile's sums plus the bias, stored. Unless `exact`, a position's last vector is stored
// whole even past its filters, onto the positions after it, which are stored later.
template <int64_t kTileRows, int64_t kTileVectors>
inline void store_tile(const DirectConv& g, const float* kernel,
                       const Vec (&acc)[kTileRows][kTileVectors], int64_t oy, int64_t ox,
                       int64_t v0, bool exact, float* out) {
  const float* bias = kernel + g.taps() * g.filters_stride() + v0 * kLanes;
  const int64_t last_lanes = g.filters - (v0 + kTileVectors - 1) * kLanes;
  // Unrolled, or GCC keeps a tile of many rows' sums in memory throughout.
#pragma GCC unroll 24
  for (int64_t r = 0; r < kTileRows; ++r) {
    float* to = out + (oy * g.ow + ox + r) * g.filters + v0 * kLanes;
    for (int64_t v = 0; v < kTileVectors; ++v) {
      const Vec sum = add(acc[r][v], load(bias + v * kLanes));
      if (exact && v == kTileVectors - 1 && last_lanes < kLanes) {
        store_part(to + v * kLanes, sum, last_lanes);
      } else {
        store(to + v * kLanes, sum);
      }
    }
  }
}

// Output positions (oy, ox .. ox + kTileRows), filter vectors [v0, v0 + kTileVectors): the sum over
// the taps, then the bias.
template <int64_t kTileRows, int64_t kTileVectors>
inline void forward_tile(const DirectConv& g, const float* padded, const float* kernel, int64_t oy,
                         int64_t ox, int64_t v0, bool exact, float* out) {
  const int64_t stride = g.filters_stride();
  const int64_t row_floats = g.padded_width() * g.c;
  const int64_t step = g.sw * g.c;  // From one position's window to the next.
  const int64_t run = g.kw * g.c;   // A window's row: its taps of one ky, contiguous.
  Vec acc[kTileRows][kTileVectors];
  for (int64_t r = 0; r < kTileRows; ++r) {
    for (int64_t v = 0; v < kTileVectors; ++v) acc[r][v] = broadcast(0.0f);
  }
  const float* window = padded + oy * g.sh * row_floats + ox * step;
  const float* k = kernel + v0 * kLanes;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    for (int64_t j = 0; j < run; ++j, k += stride) {
      Vec weights[kTileVectors];
      for (int64_t v = 0; v < kTileVectors; ++v) weights[v] = load(k + v * kLanes);
      const float* pixels = window + ky * row_floats + j;
      for (int64_t r = 0; r < kTileRows; ++r) {
        const Vec x = broadcast(pixels[r * step]);
        for (int64_t v = 0; v < kTileVectors; ++v) {
          acc[r][v] = multiply_add(x, weights[v], acc[r][v]);
        }
      }
    }
  }
  store_tile<kTileRows, kTileVectors>(g, kernel, acc, oy, ox, v0, exact, out);
}

// forward_tile for one input channel and a unit horizontal stride (a first layer of grey images),
// with the kernel's width kKw a constant: the tile's pixels of a window row are one run, each
// broadcast once and multiplied by every tap it meets, the row's weights held in registers. Each
// position still adds its taps in the kernel's order, so the sums are forward_tile's bit for bit;
// but forward_tile broadcasts a pixel per tap and position, and spends more time finding the
// pixels of a row of kKw taps than multiplying them.
template <int64_t kTileRows, int64_t kTileVectors, int64_t kKw>
inline void single_channel_tile(const DirectConv& g, const float* padded, const float* kernel,
                                int64_t oy, int64_t ox, int64_t v0, bool exact, float* out) {
  const int64_t stride = g.filters_stride();
  const int64_t width = g.padded_width();
  Vec acc[kTileRows][kTileVectors];
  for (int64_t r = 0; r < kTileRows; ++r) {
    for (int64_t v = 0; v < kTileVectors; ++v) acc[r][v] = broadcast(0.0f);
  }
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    Vec weights[kKw][kTileVectors];
    for (int64_t kx = 0; kx < kKw; ++kx) {
      for (int64_t v = 0; v < kTileVectors; ++v) {
        weights[kx][v] = load(kernel + (ky * kKw + kx) * stride + (v0 + v) * kLanes);
      }
    }
    const float* pixels = padded + (oy * g.sh + ky) * width + ox;
    // Unrolled whole, so that every accumulator's index is a constant and it stays in a register.
#pragma GCC unroll 32
    for (int64_t j = 0; j < kTileRows + kKw - 1; ++j) {
      const Vec x = broadcast(pixels[j]);
#pragma GCC unroll 8
      for (int64_t kx = 0; kx < kKw; ++kx) {
        const int64_t r = j - kx;  // The position whose tap kx this pixel is.
        if (r < 0 || r >= kTileRows) continue;
        for (int64_t v = 0; v < kTileVectors; ++v) {
          acc[r][v] = multiply_add(x, weights[kx][v], acc[r][v]);
        }
      }
    }
  }
  store_tile<kTileRows, kTileVectors>(g, kernel, acc, oy, ox, v0, exact, out);
}

// Calls single(Constant<kw>) where the single-channel tiles take g (one channel, a unit horizontal
// stride, a kernel 3 or 5 wide), and any() where they do not.
template <typename Single, typename Any>
inline void with_single_channel_width(const DirectConv& g, Single&& single, Any&& any) {
  if (g.c == 1 && g.sw == 1 && g.kw == 3) return single(Constant<3>{});
  if (g.c == 1 && g.sw == 1 && g.kw == 5) return single(Constant<5>{});
  any();
}

// The vector registers of the instruction set, and the rows of single_channel_tile that leave room
// in them for its weights and the broadcast pixel beside the accumulators. Fewer rows than the
// least it takes (wide strips of filters on SSE and AVX2) leave forward_tile the strip.
constexpr int64_t kRegisters = kLanes == 16 ? 32 : 16;
constexpr int64_t kMinSingleChannelRows = 4;
constexpr int64_t single_channel_rows(int64_t vectors, int64_t kw) {
  return std::min(accumulators(vectors), kRegisters - 1 - kw * vectors) / vectors;
}

void forward(const DirectConv& g, const float* image, const float* padded_kernel, float* scratch,
             float* out) {
  pad_image(g, image, scratch);
  const int64_t vectors = (g.filters + kLanes - 1) / kLanes;
  // With several strips of vectors, a later strip's last vector would spill onto the next
  // position's first strip, stored before it. The last tiles could spill past the image's end.
  const bool one_strip = vectors <= kMaxVectors;
  const int64_t image_floats = g.oh * g.ow * g.filters;
  const auto exact = [&](int64_t oy, int64_t ox, int64_t rows) {
    return !one_strip || (oy * g.ow + ox + rows - 1) * g.filters + vectors * kLanes > image_floats;
  };
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    for_each_strip(g, [&](int64_t v0, auto strip_vectors) {
      constexpr int64_t kTileVectors = strip_vectors();
      const auto any_channels = [&] {
        for_each_tile<accumulators(kTileVectors) / kTileVectors>(g.ow, [&](int64_t ox, auto rows) {
          forward_tile<rows(), kTileVectors>(g, scratch, padded_kernel, oy, ox, v0,
                                             exact(oy, ox, rows()), out);
        });
      };
      // single_channel_tile where the registers hold its weights beside the sums.
      const auto single_channel = [&](auto kw) {
        if constexpr (single_channel_rows(kTileVectors, kw()) >= kMinSingleChannelRows) {
          for_each_tile<single_channel_rows(kTileVectors, kw())>(g.ow, [&](int64_t ox, auto rows) {
            single_channel_tile<rows(), kTileVectors, kw()>(g, scratch, padded_kernel, oy, ox, v0,
                                                            exact(oy, ox, rows()), out);
          });
        } else {
          any_channels();
        }
      };
      with_single_channel_width(g, single_channel, any_channels);
    });
  }
}

// Taps [t0, t0 + kTileTaps), filter vectors [v0, v0 + kTileVectors): gradient += each tap's pixel
// times the upstream gradient, over the output positions in order. A position's vectors are loaded
// whole, past its filters: what they add to lanes past the filters is never read.
template <int64_t kTileTaps, int64_t kTileVectors>
inline void gradient_tile(const DirectConv& g, const float* padded, const float* dout, int64_t t0,
                          int64_t v0, float* gradient) {
  const int64_t stride = g.filters_stride();
  const int64_t row_floats = g.padded_width() * g.c;
  const int64_t step = g.sw * g.c;
  const int64_t run = g.kw * g.c;
  // Where each tap lies in a window: at (ky, j) of its run of taps, stepped rather than divided
  // out for each tap, a division by a runtime length being slow.
  int64_t tap_offset[kTileTaps];
  int64_t ky = t0 / run, j = t0 % run;
  for (int64_t t = 0; t < kTileTaps; ++t) {
    tap_offset[t] = ky * row_floats + j;
    if (++j == run) j = 0, ++ky;
  }
  Vec acc[kTileTaps][kTileVectors];
  for (int64_t t = 0; t < kTileTaps; ++t) {
    for (int64_t v = 0; v < kTileVectors; ++v) {
      acc[t][v] = load(gradient + (t0 + t) * stride + (v0 + v) * kLanes);
    }
  }
  const auto add_position = [&](const float* window, const Vec(&upstream)[kTileVectors]) {
    for (int64_t t = 0; t < kTileTaps; ++t) {
      const Vec x = broadcast(window[tap_offset[t]]);
      for (int64_t v = 0; v < kTileVectors; ++v) {
        acc[t][v] = multiply_add(x, upstream[v], acc[t][v]);
      }
    }
  };
  // Positions [0, whole) load whole vectors; the last few stop at the end of the image's dout. Two
  // loops, not a test per position: with it, the compiler kept the accumulators in memory.
  const int64_t image_floats = g.oh * g.ow * g.filters;
  const int64_t reach = (v0 + kTileVectors) * kLanes;
  const int64_t whole = image_floats >= reach ? (image_floats - reach) / g.filters + 1 : 0;
  const float* d = dout + v0 * kLanes;
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const float* window = padded + oy * g.sh * row_floats;
    const int64_t first = oy * g.ow;
    const int64_t whole_here = std::clamp<int64_t>(whole - first, 0, g.ow);
    int64_t ox = 0;
    for (; ox < whole_here; ++ox, window += step, d += g.filters) {
      Vec upstream[kTileVectors];
      for (int64_t v = 0; v < kTileVectors; ++v) upstream[v] = load(d + v * kLanes);
      add_position(window, upstream);
    }
    for (; ox < g.ow; ++ox, window += step, d += g.filters) {
      Vec upstream[kTileVectors];
      for (int64_t v = 0; v < kTileVectors; ++v) {
        const int64_t left = image_floats - ((first + ox) * g.filters + (v0 + v) * kLanes);
        upstream[v] = load_part(d + v * kLanes, std::clamp<int64_t>(left, 0, kLanes));
      }
      add_position(window, upstream);
    }
  }
  for (int64_t t = 0; t < kTileTaps; ++t) {
    for (int64_t v = 0; v < kTileVectors; ++v) {
      store(gradient + (t0 + t) * stride + (v0 + v) * kLanes, acc[t][v]);
    }
  }
}

// The output positions single_channel_gradient_tile takes at a time, and the window rows of taps
// it sums with them: as many as the registers hold beside the upstream gradients.
constexpr int64_t kSingleChannelPositions = 8;
constexpr int64_t single_channel_gradient_rows(int64_t kw) {
  return std::min<int64_t>(4, (kRegisters - 1 - kSingleChannelPositions) / kw);
}

// gradient_tile for one input channel, a unit horizontal stride and one vector of filters, with
// the kernel's width kKw a constant: the taps of window rows [ky0, ky0 + kRows). The upstream
// gradients of kSingleChannelPositions positions along an output row are loaded once, and each
// pixel of the window rows they cover broadcast once for every tap it meets there. Each tap still
// sums the positions in order, so the gradient is gradient_tile's bit for bit.
template <int64_t kRows, int64_t kKw>
inline void single_channel_gradient_tile(const DirectConv& g, const float* padded,
                                         const float* dout, int64_t ky0, int64_t v0,
                                         float* gradient) {
  constexpr int64_t kPositions = kSingleChannelPositions;
  const int64_t stride = g.filters_stride();
  const int64_t width = g.padded_width();
  const int64_t image_floats = g.oh * g.ow * g.filters;
  Vec acc[kRows][kKw];
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t kx = 0; kx < kKw; ++kx) {
      acc[i][kx] = load(gradient + ((ky0 + i) * kKw + kx) * stride + v0 * kLanes);
    }
  }
  // Positions [ox0, ox0 + count) of output row oy; a row's last few (count < kPositions) take the
  // checked loop, which reads no pixel past the padded row.
  const auto add_positions = [&](int64_t oy, int64_t ox0, int64_t count, auto whole) {
    Vec upstream[kPositions];
#pragma GCC unroll 16
    for (int64_t p = 0; p < kPositions; ++p) {
      // Whole vectors past the filters, except at the end of the image's upstream gradient.
      const int64_t at = (oy * g.ow + ox0 + p) * g.filters + v0 * kLanes;
      const int64_t left = p < count ? std::clamp<int64_t>(image_floats - at, 0, kLanes) : 0;
      upstream[p] = left == kLanes ? load(dout + at)
                    : left > 0     ? load_part(dout + at, left)
                                   : broadcast(0.0f);
    }
    for (int64_t i = 0; i < kRows; ++i) {
      const float* pixels = padded + (oy * g.sh + ky0 + i) * width + ox0;
#pragma GCC unroll 32
      for (int64_t j = 0; j < kPositions + kKw - 1; ++j) {
        if (!whole() && j >= count + kKw - 1) break;
        const Vec x = broadcast(pixels[j]);
#pragma GCC unroll 8
        for (int64_t kx = 0; kx < kKw; ++kx) {
          const int64_t p = j - kx;  // The position whose tap kx this pixel is.
          if (p < 0 || p >= kPositions || (!whole() && p >= count)) continue;
          acc[i][kx] = multiply_add(x, upstream[p], acc[i][kx]);
        }
      }
    }
  };
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    int64_t ox0 = 0;
    for (; ox0 + kPositions <= g.ow; ox0 += kPositions) {
      add_positions(oy, ox0, kPositions, std::true_type{});
    }
    if (ox0 < g.ow) add_positions(oy, ox0, g.ow - ox0, std::false_type{});
  }
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t kx = 0; kx < kKw; ++kx) {
      store(gradient + ((ky0 + i) * kKw + kx) * stride + v0 * kLanes, acc[i][kx]);
    }
  }
}

void kernel_gradient(const DirectConv& g, const float* image, const float* dout, float* scratch,
                     float* gradient) {
  pad_image(g, image, scratch);
  for_each_strip(g, [&](int64_t v0, auto strip_vectors) {
    constexpr int64_t kTileVectors = strip_vectors();
    const auto any_channels = [&] {
      constexpr int64_t kTileTaps = accumulators(kTileVectors) / kTileVectors;
      for_each_tile<kTileTaps>(g.taps(), [&](int64_t t0, auto taps) {
        gradient_tile<taps(), kTileVectors>(g, scratch, dout, t0, v0, gradient);
      });
    };
    // single_channel_gradient_tile for a strip of one vector of filters.
    const auto single_channel = [&](auto kw) {
      if constexpr (kTileVectors == 1) {
        for_each_tile<single_channel_gradient_rows(kw())>(g.kh, [&](int64_t ky0, auto rows) {
          single_channel_gradient_tile<rows(), kw()>(g, scratch, dout, ky0, v0, gradient);
        });
      } else {
        any_channels();
      }
    };
    with_single_channel_width(g, single_channel, any_channels);
  });
}

// Output rows (oy0 .. oy0 + kTileRows, ox), window row ky, vectors [v0, v0 + kTileVectors) of the
// window row's taps: each position's gradient of those taps, the filters' upstream gradients times
// the kernel summed over the filters in order, then added onto the image where the window row lies.
// The tile's positions are in different rows of the output, so they add onto different rows of the
// image: no add waits for the one before it to reach memory.
template <int64_t kTileRows, int64_t kTileVectors>
inline void input_gradient_tile(const DirectConv& g, const float* dout, const float* window_kernel,
                                int64_t oy0, int64_t ky, int64_t ox, int64_t v0, float* dx) {
  const int64_t run = g.kw * g.c;
  const int64_t run_stride = g.run_stride();
  // From one output row's upstream gradient to the next.
  const int64_t row_step = g.ow * g.filters;
  Vec acc[kTileRows][kTileVectors];
  for (int64_t r = 0; r < kTileRows; ++r) {
    for (int64_t v = 0; v < kTileVectors; ++v) acc[r][v] = broadcast(0.0f);
  }
  const float* w = window_kernel + ky * g.filters * run_stride + v0 * kLanes;
  const float* d = dout + (oy0 * g.ow + ox) * g.filters;
  for (int64_t f = 0; f < g.filters; ++f, w += run_stride) {
    Vec weights[kTileVectors];
    for (int64_t v = 0; v < kTileVectors; ++v) weights[v] = load(w + v * kLanes);
    for (int64_t r = 0; r < kTileRows; ++r) {
      const Vec x = broadcast(d[r * row_step + f]);
      for (int64_t v = 0; v < kTileVectors; ++v) {
        acc[r][v] = multiply_add(x, weights[v], acc[r][v]);
      }
    }
  }
  // The window row's taps [lo, hi) fall inside the image; the rest lie on the padding.
  const int64_t ix0 = ox * g.sw - g.pad_left;
  const int64_t lo = std::clamp<int64_t>(-ix0, 0, g.kw) * g.c;
  const int64_t hi = std::clamp<int64_t>(g.w - ix0, 0, g.kw) * g.c;
  for (int64_t r = 0; r < kTileRows; ++r) {
    const int64_t iy = (oy0 + r) * g.sh - g.pad_top + ky;
    if (iy < 0 || iy >= g.h) continue;
    // Tap j of the window row adds onto dx[origin + j].
    const int64_t origin = (iy * g.w + ix0) * g.c;
    for (int64_t v = 0; v < kTileVectors; ++v) {
      const int64_t first = (v0 + v) * kLanes;
      const int64_t lanes = std::min(hi, run) - first;
      float* to = dx + origin + std::max(first, lo);
      if (first >= lo && lanes >= kLanes) {
        store(to, add(load(to), acc[r][v]));
      } else if (first >= lo && lanes > 0) {
        store_part(to, add(load_part(to, lanes), acc[r][v]), lanes);
      } else if (lanes > 0) {  // Partly on the left padding: lane by lane.
        alignas(64) float part[kLanes];
        store(part, acc[r][v]);
        for (int64_t j = std::max(lo, first); j < first + std::min(lanes, kLanes); ++j) {
          dx[origin + j] += part[j - first];
        }
      }
    }
  }
}

// The input gradient's strips of a window row's taps, and the rows of its tiles. On AVX-512 a strip
// takes up to 6 vectors, so that a window row of 5 (16 channels, 5 wide) is one strip instead of a
// strip of 4 and one of 1, whose tile of a vector waited on its few sums: with 4 rows, 24
// accumulators, as for the other tiles, and 12 elsewhere.
constexpr int64_t kInputGradientVectors = kLanes == 16 ? 6 : kMaxVectors;
constexpr int64_t kInputGradientRows = accumulators(kInputGradientVectors) / kInputGradientVectors;

void input_gradient(const DirectConv& g, const float* dout, const float* window_kernel, float* dx) {
  const int64_t vectors = (g.kw * g.c + kLanes - 1) / kLanes;
  // An element of dx takes its terms in the order of the output positions, as col2im adds them:
  // from one tile of rows to the next; within a tile from its first row to its last, which for one
  // element of dx means from the last window row to the first; then along the row. A strip of the
  // window row does not change the order: an element's terms from one position lie in one strip.
  // Strips of even sizes, as tiles are cut, so that none is left with a vector or two.
  for_each_tile<kInputGradientRows>(g.oh, [&](int64_t oy0, auto rows) {
    for (int64_t ky = g.kh - 1; ky >= 0; --ky) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        for_each_tile<kInputGradientVectors>(vectors, [&](int64_t v0, auto strip_vectors) {
          input_gradient_tile<rows(), strip_vectors()>(g, dout, window_kernel, oy0, ky, ox, v0, dx);
        });
      }
    }
  });
}

}  // namespace direct_conv
}  // namespace
}  // namespace sluice::internal

#endif  // SLUICE_SIMD
