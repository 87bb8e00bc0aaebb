// The bodies of the affine warp kernels (ops/affine_warp.h). A source file includes this once per
// instruction set it is compiled for: everything here has internal linkage, so each build keeps
// its own copy, and the file's `kAffineWarpKernels` gathers that copy's entry points.
// (No include guard: only those source files include it, once each.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sluice/ops/affine_warp.h"

namespace sluice::internal {
namespace {

// A coordinate along one axis resolved to the two neighbours of a bilinear blend, as scipy's
// order-1 interpolation with its boundary modes does (checked against scipy point by point).
struct Axis {
  int64_t i0 = 0;
  int64_t i1 = 0;
  double f = 0;  // Weight of i1.
  bool valid = true;
};

// scipy decides "outside" on coordinates it computes itself; a hair of tolerance keeps a point
// that lands on the edge up to rounding inside, as it is in exact arithmetic.
constexpr double kEdgeTolerance = 1e-9;

Axis clamped(double c, int64_t n) {
  c = std::clamp(c, 0.0, static_cast<double>(n - 1));
  Axis a;
  a.i0 = static_cast<int64_t>(c);
  a.f = c - static_cast<double>(a.i0);
  a.i1 = std::min(a.i0 + 1, n - 1);
  return a;
}

int64_t symmetric(int64_t i, int64_t n) {
  const int64_t period = 2 * n;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - 1 - i;
}

Axis resolve(double c, int64_t n, FillMode mode) {
  switch (mode) {
    case FillMode::kNearest:
      return clamped(c, n);
    case FillMode::kConstant:
      if (c < -kEdgeTolerance || c > static_cast<double>(n - 1) + kEdgeTolerance) {
        return Axis{0, 0, 0, false};
      }
      return clamped(c, n);
    case FillMode::kReflect: {
      const double floor_c = std::floor(c);
      const auto i = static_cast<int64_t>(floor_c);
      return Axis{symmetric(i, n), symmetric(i + 1, n), c - floor_c, true};
    }
    case FillMode::kWrap: {
      if (n <= 1) return Axis{0, 0, 0, true};
      // scipy's "wrap": period n - 1, so the first and the last sample coincide.
      const auto size = static_cast<double>(n - 1);
      if (c < 0) {
        c += size * (std::trunc(-c / size) + 1);
      } else if (c > size) {
        c -= size * std::trunc(c / size);
      }
      return clamped(c, n);
    }
  }
  return clamped(c, n);
}

// Fixed-point weights of the uint8 path: 11 bits, so the two-stage blend of 8-bit values stays
// within 31 bits (255 · 2^11 · 2^11 < 2^31).
constexpr int kBits = 11;
constexpr int kOne = 1 << kBits;
constexpr int kShift = 2 * kBits;

int fixed_weight(double f) { return static_cast<int>(f * kOne + 0.5); }

// Blends the four neighbours of `channels` values each into `out`.
template <int kC, class Out>
inline void blend(const uint8_t* p00, const uint8_t* p01, const uint8_t* p10, const uint8_t* p11,
                  double fx, double fy, int64_t channels, float scale, Out* out) {
  const int wx = fixed_weight(fx);
  const int wy = fixed_weight(fy);
  const int64_t n = kC > 0 ? kC : channels;
  for (int64_t k = 0; k < n; ++k) {
    const int top = p00[k] * (kOne - wx) + p01[k] * wx;
    const int bottom = p10[k] * (kOne - wx) + p11[k] * wx;
    const int v = top * (kOne - wy) + bottom * wy;
    if constexpr (std::is_same_v<Out, uint8_t>) {
      out[k] = static_cast<uint8_t>((v + (1 << (kShift - 1))) >> kShift);
    } else {
      out[k] = static_cast<float>(v) * scale;  // scale includes 2^-kShift.
    }
  }
}

template <int kC, class Out>
inline void blend(const float* p00, const float* p01, const float* p10, const float* p11, double fx,
                  double fy, int64_t channels, float scale, Out* out) {
  const auto wx = static_cast<float>(fx);
  const auto wy = static_cast<float>(fy);
  const int64_t n = kC > 0 ? kC : channels;
  for (int64_t k = 0; k < n; ++k) {
    const float top = p00[k] + wx * (p01[k] - p00[k]);
    const float bottom = p10[k] + wx * (p11[k] - p10[k]);
    out[k] = (top + wy * (bottom - top)) * scale;
  }
}

// One image: every output pixel's input position is found incrementally along its row; pixels
// whose four neighbours are inside the input (nearly all) take the direct path, the rest resolve
// each axis with the fill mode.
template <int kC, class In, class Out>
void resample(const In* src, int64_t height, int64_t width, int64_t channels,
              const AffineMatrix& matrix, FillMode mode, Out fill, float scale, Out* dst) {
  const double* m = matrix.m;
  const int64_t c = kC > 0 ? kC : channels;
  const int64_t row_stride = width * c;
  const auto last_row = static_cast<double>(height - 1);
  const auto last_col = static_cast<double>(width - 1);
  for (int64_t r = 0; r < height; ++r) {
    const double y0 = m[0] * static_cast<double>(r) + m[2];
    const double x0 = m[3] * static_cast<double>(r) + m[5];
    Out* out = dst + r * row_stride;
    for (int64_t col = 0; col < width; ++col, out += c) {
      const double y = y0 + m[1] * static_cast<double>(col);
      const double x = x0 + m[4] * static_cast<double>(col);
      if (y >= 0 && y < last_row && x >= 0 && x < last_col) {
        const auto i = static_cast<int64_t>(y);
        const auto j = static_cast<int64_t>(x);
        const In* p = src + i * row_stride + j * c;
        blend<kC>(p, p + c, p + row_stride, p + row_stride + c, x - static_cast<double>(j),
                  y - static_cast<double>(i), c, scale, out);
        continue;
      }
      const Axis ay = resolve(y, height, mode);
      const Axis ax = resolve(x, width, mode);
      if (!ay.valid || !ax.valid) {
        for (int64_t k = 0; k < c; ++k) out[k] = fill;
        continue;
      }
      const In* r0 = src + ay.i0 * row_stride;
      const In* r1 = src + ay.i1 * row_stride;
      blend<kC>(r0 + ax.i0 * c, r0 + ax.i1 * c, r1 + ax.i0 * c, r1 + ax.i1 * c, ax.f, ay.f, c,
                scale, out);
    }
  }
}

constexpr double kFixedOne = 4294967296.0;  // 2^32.

// The columns col in [begin, end) with 0 <= x0 + col * dx < limit (a run, as x is linear).
void interior_columns(int64_t x0, int64_t dx, int64_t limit, int64_t width, int64_t& begin,
                      int64_t& end) {
  auto inside = [&](int64_t col) {
    const int64_t x = x0 + col * dx;
    return x >= 0 && x < limit;
  };
  // The run is short to find by stepping from a close analytic guess; the guess only has to be
  // near, the checks make it exact.
  if (dx == 0) {
    begin = 0;
    end = inside(0) ? width : 0;
    return;
  }
  const double lo = -static_cast<double>(x0) / static_cast<double>(dx);
  const double hi = static_cast<double>(limit - x0) / static_cast<double>(dx);
  const double first = std::clamp(std::ceil(std::min(lo, hi)) - 1, 0.0, static_cast<double>(width));
  const double last = std::clamp(std::floor(std::max(lo, hi)) + 1, 0.0, static_cast<double>(width));
  begin = static_cast<int64_t>(first);
  end = static_cast<int64_t>(last);
  while (begin < end && !inside(begin)) ++begin;
  while (end > begin && !inside(end - 1)) --end;
}

// Where warped float pixels go: interleaved [height, width, channels] as they are computed, or
// channels-first [channels, height, width] (PyTorch's layout), and with a one-channel image's
// channel repeated `channels` times (a grey image as RGB, each value computed once). Those rows
// are computed in a scratch buffer in cache and then written out, so the image is written once.
struct FloatImageOut {
  float* dst;
  int64_t height, width;
  int64_t in_channels;  // Of the computed rows.
  int64_t channels;     // Of `dst`: in_channels, or more when in_channels is 1.
  bool channels_first;

  // Whether rows are written as computed.
  bool direct() const { return !channels_first && channels == in_channels; }
  // Where row r is to be computed: its place in `dst`, or `scratch`.
  float* row(int64_t r, float* scratch) const {
    return direct() ? dst + r * width * channels : scratch;
  }
  // `rows` rows from row r are computed at `at` (as In, times `scale`): unless direct, they go to
  // their places now.
  template <class In>
  void finish(int64_t r, const In* at, int64_t rows = 1, float scale = 1) const {
    if (direct()) return;
    const int64_t n = rows * width;
    const auto value = [&](int64_t i) { return static_cast<float>(at[i]) * scale; };
    if (!channels_first) {  // A grey row repeated.
      float* base = dst + r * width * channels;
      if (channels == 3) {  // RGB, with the count known, in vector stores.
        for (int64_t p = 0; p < n; ++p) {
          const float v = value(p);
          base[3 * p] = v;
          base[3 * p + 1] = v;
          base[3 * p + 2] = v;
        }
        return;
      }
      for (int64_t p = 0; p < n; ++p) {
        const float v = value(p);
        for (int64_t k = 0; k < channels; ++k) base[p * channels + k] = v;
      }
      return;
    }
    const int64_t plane = height * width;
    float* base = dst + r * width;
    if (in_channels == 3) {  // With the count known, the compiler vectorises the three streams.
      for (int64_t p = 0; p < n; ++p) {
        base[p] = value(3 * p);
        base[plane + p] = value(3 * p + 1);
        base[2 * plane + p] = value(3 * p + 2);
      }
      return;
    }
    for (int64_t k = 0; k < channels; ++k) {
      float* to = base + k * plane;
      if (in_channels == 1) {
        for (int64_t p = 0; p < n; ++p) to[p] = value(p);
      } else {
        for (int64_t p = 0; p < n; ++p) to[p] = value(p * in_channels + k);
      }
    }
  }
};

// The common Keras case without rotation (shear, zoom, shift, flips): the input row of an output
// row does not depend on the column (m[1] == 0). Each output row then blends its two input rows
// once into a float row, already scaled, and each pixel is a single linear blend along that row.
template <int kC, class In>
void resample_rows_to_float(const In* src, int64_t height, int64_t width, int64_t channels,
                            const AffineMatrix& matrix, FillMode mode, float fill, float scale,
                            const FloatImageOut& target) {
  const double* m = matrix.m;
  const int64_t c = kC > 0 ? kC : channels;
  const int64_t row_stride = width * c;
  // One blended row (+ padding for the four-lane reads) and two input rows converted to float:
  // with a zoom near 1, consecutive output rows read mostly the same input rows, so each is
  // converted about once instead of twice. Reused, so no allocation per image.
  const auto padded = static_cast<size_t>(row_stride) + 4;
  thread_local std::vector<float> rows;
  rows.resize(4 * padded);
  float* t = rows.data();
  float* const converted[2] = {t + padded, t + 2 * padded};
  float* const scratch = t + 3 * padded;
  int64_t converted_row[2] = {-1, -1};
  // Input row i as float (exact for uint8), converting it into the slot not holding `keep`.
  const auto float_row = [&](int64_t i, int64_t keep) -> const float* {
    const In* in = src + i * row_stride;
    if constexpr (std::is_same_v<In, float>) {
      return in;
    } else {
      for (int k = 0; k < 2; ++k) {
        if (converted_row[k] == i) return converted[k];
      }
      const int k = converted_row[0] == keep ? 1 : 0;
      for (int64_t j = 0; j < row_stride; ++j) converted[k][j] = static_cast<float>(in[j]);
      converted_row[k] = i;
      return converted[k];
    }
  };
  for (int64_t r = 0; r < height; ++r) {
    float* out = target.row(r, scratch);
    const Axis ay = resolve(m[0] * static_cast<double>(r) + m[2], height, mode);
    if (!ay.valid) {
      std::fill(out, out + row_stride, fill);
      target.finish(r, out);
      continue;
    }
    const float* r0 = float_row(ay.i0, ay.i1);
    const float* r1 = float_row(ay.i1, ay.i0);
    const auto wy = static_cast<float>(ay.f);
    const float s0 = scale * (1 - wy);
    const float s1 = scale * wy;
    for (int64_t k = 0; k < row_stride; ++k) t[k] = r0[k] * s0 + r1[k] * s1;
    // Column positions in 32.32 fixed point: exact integer steps, so the columns whose two
    // neighbours are inside ([begin, end)) follow from integer arithmetic and need no test.
    const int64_t x0 = std::llround((m[3] * static_cast<double>(r) + m[5]) * kFixedOne);
    const int64_t dx = std::llround(m[4] * kFixedOne);
    const int64_t limit = (width - 1) << 32;  // Interior: 0 <= x < limit.
    int64_t begin = 0, end = 0;
    interior_columns(x0, dx, limit, width, begin, end);
    // A column outside the interior: x < 0 or x >= width - 1. Under kNearest (Keras' default)
    // that clamps to the first or the last column with weight 0, as resolve() would find.
    auto edge = [&](int64_t col) {
      float* o = out + col * c;
      const int64_t x = x0 + col * dx;
      const Axis ax = mode == FillMode::kNearest
                          ? Axis{x < 0 ? 0 : width - 1,
                                 x < 0 ? std::min<int64_t>(1, width - 1) : width - 1, 0, true}
                          : resolve(static_cast<double>(x) / kFixedOne, width, mode);
      if (!ax.valid) {
        for (int64_t k = 0; k < c; ++k) o[k] = fill;
        return;
      }
      const auto wx = static_cast<float>(ax.f);
      const float* p0 = t + ax.i0 * c;
      const float* p1 = t + ax.i1 * c;
      for (int64_t k = 0; k < c; ++k) o[k] = p0[k] + wx * (p1[k] - p0[k]);
    };
    for (int64_t col = 0; col < begin; ++col) edge(col);
    int64_t x = x0 + begin * dx;
    float* o = out + begin * c;
    int64_t col = begin;
#if defined(__SSE2__)
    if constexpr (kC == 3) {
      // Four lanes per pixel: the fourth is the next pixel's first channel, written again (with
      // its right value) by the next pixel; the run stops one pixel early so the last store
      // stays inside the row. The blended row has padding for the fourth lane of the reads.
      const auto lerp = [&](__m128 wx) {
        const float* p0 = t + (x >> 32) * 3;
        const __m128 a = _mm_loadu_ps(p0);
        const __m128 b = _mm_loadu_ps(p0 + 3);
        _mm_storeu_ps(o, _mm_add_ps(a, _mm_mul_ps(wx, _mm_sub_ps(b, a))));
        x += dx;
        o += 3;
      };
      // The weights of four columns at once: a weight is the top 24 bits of the fraction (the low
      // 32 bits of x), which four 32-bit lanes step exactly, wrapping as the fractions do.
      const auto f = static_cast<uint32_t>(x), step = static_cast<uint32_t>(dx);
      __m128i fractions =
          _mm_set_epi32(static_cast<int>(f + 3 * step), static_cast<int>(f + 2 * step),
                        static_cast<int>(f + step), static_cast<int>(f));
      const __m128i step4 = _mm_set1_epi32(static_cast<int>(4 * step));
      const __m128 unit = _mm_set1_ps(1.0f / (1 << 24));
      for (; col + 4 < end; col += 4) {
        const __m128 w = _mm_mul_ps(_mm_cvtepi32_ps(_mm_srli_epi32(fractions, 8)), unit);
        fractions = _mm_add_epi32(fractions, step4);
        lerp(_mm_shuffle_ps(w, w, 0x00));
        lerp(_mm_shuffle_ps(w, w, 0x55));
        lerp(_mm_shuffle_ps(w, w, 0xAA));
        lerp(_mm_shuffle_ps(w, w, 0xFF));
      }
      for (; col + 1 < end; ++col) {
        lerp(_mm_set1_ps(static_cast<float>(static_cast<uint32_t>(x) >> 8) * (1.0f / (1 << 24))));
      }
    }
#endif
#if defined(__AVX2__)
    if constexpr (kC == 1) {
      // Eight columns at once. Their input columns lie within 16 of the least of them while
      // |dx| <= 2, so two loads and permutes fetch both neighbours of each; positions, weights
      // and blends are the loop's below, so are the values.
      if ((dx < 0 ? -dx : dx) <= (int64_t{2} << 32) && width >= 16) {
        __m256i xa = _mm256_set_epi64x(x + 3 * dx, x + 2 * dx, x + dx, x);
        __m256i xb = _mm256_add_epi64(xa, _mm256_set1_epi64x(4 * dx));
        const __m256i advance = _mm256_set1_epi64x(8 * dx);
        const __m256i halves = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        const __m256i one = _mm256_set1_epi32(1);
        const __m256i seven = _mm256_set1_epi32(7);
        const __m256 unit = _mm256_set1_ps(1.0f / (1 << 24));
        for (; col + 8 <= end; col += 8) {
          // The positions' fractions (low halves) and input columns (high halves), in order.
          const __m256i a = _mm256_permutevar8x32_epi32(xa, halves);
          const __m256i b = _mm256_permutevar8x32_epi32(xb, halves);
          const __m256i fractions = _mm256_permute2x128_si256(a, b, 0x20);
          const __m256i columns = _mm256_permute2x128_si256(a, b, 0x31);
          const int64_t least = std::min(x >> 32, (x + 7 * dx) >> 32);
          const __m256i offsets =
              _mm256_sub_epi32(columns, _mm256_set1_epi32(static_cast<int>(least)));
          const __m256 low = _mm256_loadu_ps(t + least);
          const __m256 high = _mm256_loadu_ps(t + least + 8);
          const auto fetch = [&](__m256i at) {
            return _mm256_blendv_ps(_mm256_permutevar8x32_ps(low, at),
                                    _mm256_permutevar8x32_ps(high, at),
                                    _mm256_castsi256_ps(_mm256_cmpgt_epi32(at, seven)));
          };
          const __m256 p0 = fetch(offsets);
          const __m256 p1 = fetch(_mm256_add_epi32(offsets, one));
          const __m256 w = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(fractions, 8)), unit);
          _mm256_storeu_ps(o, _mm256_add_ps(p0, _mm256_mul_ps(w, _mm256_sub_ps(p1, p0))));
          xa = _mm256_add_epi64(xa, advance);
          xb = _mm256_add_epi64(xb, advance);
          x += 8 * dx;
          o += 8;
        }
      }
    }
#endif
    for (; col < end; ++col, x += dx, o += c) {
      const float* p0 = t + (x >> 32) * c;
      const float wx = static_cast<float>(static_cast<uint32_t>(x) >> 8) * (1.0f / (1 << 24));
      for (int64_t k = 0; k < c; ++k) o[k] = p0[k] + wx * (p0[c + k] - p0[k]);
    }
    for (int64_t col = end; col < width; ++col) edge(col);
    target.finish(r, out);
  }
}

template <class In>
void resample_rows_any(const In* src, int64_t height, int64_t width, int64_t channels,
                       const AffineMatrix& matrix, FillMode mode, float fill, float scale,
                       const FloatImageOut& dst) {
  switch (channels) {
    case 1:
      return resample_rows_to_float<1>(src, height, width, channels, matrix, mode, fill, scale,
                                       dst);
    case 3:
      return resample_rows_to_float<3>(src, height, width, channels, matrix, mode, fill, scale,
                                       dst);
    default:
      return resample_rows_to_float<0>(src, height, width, channels, matrix, mode, fill, scale,
                                       dst);
  }
}

template <class In, class Out>
void resample_any(const In* src, int64_t height, int64_t width, int64_t channels,
                  const AffineMatrix& matrix, FillMode mode, Out fill, float scale, Out* dst) {
  switch (channels) {
    case 1:
      return resample<1>(src, height, width, channels, matrix, mode, fill, scale, dst);
    case 3:
      return resample<3>(src, height, width, channels, matrix, mode, fill, scale, dst);
    case 4:
      return resample<4>(src, height, width, channels, matrix, mode, fill, scale, dst);
    default:
      return resample<0>(src, height, width, channels, matrix, mode, fill, scale, dst);
  }
}

// out = src * scale. The output (four bytes per pixel value) is usually a slot of a large batch
// that is not read again soon: streaming stores skip reading each cache line before writing it,
// which halves the memory traffic of this bandwidth-bound loop.
void convert_u8_to_float(const uint8_t* src, int64_t n, float scale, float* out) {
  int64_t i = 0;
#if defined(__SSE2__)
  while (i < n && (reinterpret_cast<uintptr_t>(out + i) & 15) != 0) {
    out[i] = static_cast<float>(src[i]) * scale;
    ++i;
  }
  const __m128 s = _mm_set1_ps(scale);
  const __m128i zero = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i lo = _mm_unpacklo_epi8(bytes, zero);
    const __m128i hi = _mm_unpackhi_epi8(bytes, zero);
    _mm_stream_ps(out + i, _mm_mul_ps(_mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, zero)), s));
    _mm_stream_ps(out + i + 4, _mm_mul_ps(_mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, zero)), s));
    _mm_stream_ps(out + i + 8, _mm_mul_ps(_mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, zero)), s));
    _mm_stream_ps(out + i + 12, _mm_mul_ps(_mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, zero)), s));
  }
  _mm_sfence();
#endif
  for (; i < n; ++i) out[i] = static_cast<float>(src[i]) * scale;
}

// The entry points.

void warp_u8(const uint8_t* src, int64_t height, int64_t width, int64_t channels,
             const AffineMatrix& matrix, FillMode mode, uint8_t fill, uint8_t* dst) {
  resample_any(src, height, width, channels, matrix, mode, fill, 0.0f, dst);
}

void warp_float(const float* src, int64_t height, int64_t width, int64_t channels,
                const AffineMatrix& matrix, FillMode mode, float fill, float* dst) {
  resample_any(src, height, width, channels, matrix, mode, fill, 1.0f, dst);
}

// An image the identity or the general path makes for a target that is not direct is computed
// interleaved in a scratch image and then written out (the row path does it row by row).
float* scratch_image(const FloatImageOut& target) {
  thread_local std::vector<float> image;
  image.resize(static_cast<size_t>(target.height * target.width * target.in_channels));
  return image.data();
}

template <class In>
void warp_to_float(const In* src, int64_t height, int64_t width, int64_t channels,
                   const AffineMatrix& matrix, FillMode mode, float cval, float scale,
                   const FloatImageLayout& layout, float* dst) {
  const FloatImageOut target{dst,
                             height,
                             width,
                             channels,
                             layout.channels > 0 ? layout.channels : channels,
                             layout.channels_first};
  if (matrix.is_identity()) {
    if (!target.direct()) {
      target.finish(0, src, height, scale);
    } else if constexpr (std::is_same_v<In, uint8_t>) {
      convert_u8_to_float(src, height * width * channels, scale, dst);
    } else {
      const int64_t n = height * width * channels;
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i] * scale;
    }
  } else if (matrix.m[1] == 0) {
    resample_rows_any(src, height, width, channels, matrix, mode, cval * scale, scale, target);
  } else {
    float* out = target.direct() ? dst : scratch_image(target);
    // The uint8 general path blends in fixed point; its scale undoes the weights' scale.
    const float blend_scale =
        std::is_same_v<In, uint8_t> ? scale / static_cast<float>(int64_t{1} << kShift) : scale;
    resample_any(src, height, width, channels, matrix, mode, cval * scale, blend_scale, out);
    target.finish(0, out, height);
  }
}

void warp_u8_to_float(const uint8_t* src, int64_t height, int64_t width, int64_t channels,
                      const AffineMatrix& matrix, FillMode mode, float cval, float scale,
                      const FloatImageLayout& layout, float* dst) {
  warp_to_float(src, height, width, channels, matrix, mode, cval, scale, layout, dst);
}

void warp_float_to_float(const float* src, int64_t height, int64_t width, int64_t channels,
                         const AffineMatrix& matrix, FillMode mode, float cval, float scale,
                         const FloatImageLayout& layout, float* dst) {
  warp_to_float(src, height, width, channels, matrix, mode, cval, scale, layout, dst);
}

}  // namespace
}  // namespace sluice::internal
