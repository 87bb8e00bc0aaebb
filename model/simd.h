// The vector operations of the model's own kernels (gemm_tiles.h, direct_conv_kernels.h), for
// the instruction set the including file is compiled for: 16-float AVX-512 vectors, 8-float AVX2 +
// FMA vectors, or the baseline's 4-float SSE vectors. Like the kernels, they have internal linkage,
// so that the builds for different instruction sets never stand in for one another at link time.
// Without SSE2 (other architectures) SLUICE_SIMD is 0 and nothing is defined.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#define SLUICE_SIMD 1
#else
#define SLUICE_SIMD 0
#endif

#if SLUICE_SIMD
namespace sluice::internal {
namespace {
namespace simd {

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int64_t kLanes = 16;
inline Vec load(const float* p) { return _mm512_loadu_ps(p); }
inline Vec broadcast(float x) { return _mm512_set1_ps(x); }
inline Vec multiply_add(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
inline void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
inline void stream(float* p, Vec v) { _mm512_stream_ps(p, v); }
inline __mmask16 first_lanes(int64_t lanes) { return static_cast<__mmask16>((1u << lanes) - 1); }
inline Vec load_part(const float* p, int64_t lanes) {
  return _mm512_maskz_loadu_ps(first_lanes(lanes), p);
}
inline void store_part(float* p, Vec v, int64_t lanes) {
  _mm512_mask_storeu_ps(p, first_lanes(lanes), v);
}
#else
#if defined(__AVX2__) && defined(__FMA__)
using Vec = __m256;
constexpr int64_t kLanes = 8;
inline Vec load(const float* p) { return _mm256_loadu_ps(p); }
inline Vec broadcast(float x) { return _mm256_set1_ps(x); }
inline Vec multiply_add(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
inline void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
inline void stream(float* p, Vec v) { _mm256_stream_ps(p, v); }
#else
using Vec = __m128;
constexpr int64_t kLanes = 4;
inline Vec load(const float* p) { return _mm_loadu_ps(p); }
inline Vec broadcast(float x) { return _mm_set1_ps(x); }
inline Vec multiply_add(Vec a, Vec b, Vec c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
inline Vec add(Vec a, Vec b) { return _mm_add_ps(a, b); }
inline void store(float* p, Vec v) { _mm_storeu_ps(p, v); }
inline void stream(float* p, Vec v) { _mm_stream_ps(p, v); }
#endif
// Without masked moves, a part of a vector goes through a whole one on the stack.
inline Vec load_part(const float* p, int64_t lanes) {
  alignas(64) float whole[kLanes] = {};
  std::memcpy(whole, p, static_cast<size_t>(lanes) * sizeof(float));
  return load(whole);
}
inline void store_part(float* p, Vec v, int64_t lanes) {
  alignas(64) float whole[kLanes];
  store(whole, v);
  std::memcpy(p, whole, static_cast<size_t>(lanes) * sizeof(float));
}
#endif

}  // namespace simd
}  // namespace
}  // namespace sluice::internal
#endif  // SLUICE_SIMD
