#include "bench/fma_peak.h"

#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace sluice::bench {
namespace {

// Enough independent sums to cover the multiply-add's latency on both of a core's pipes (4 cycles
// by 2 on recent x86), with room to spare.
constexpr int kChains = 16;

// Each runs `rounds` rounds of kChains vector multiply-adds and returns a lane of the sums, so the
// compiler keeps the work. Written out per instruction set: a helper shared by both would be
// compiled without the target's instructions.
__attribute__((target("avx512f"))) float chains_avx512(int64_t rounds) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * float(c));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  float sum = 0.0f;
  for (int c = 0; c < kChains; ++c) sum += _mm512_cvtss_f32(acc[c]);
  return sum;
}

__attribute__((target("avx2,fma"))) float chains_avx2(int64_t rounds) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(0.001f * float(c));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  float sum = 0.0f;
  for (int c = 0; c < kChains; ++c) sum += _mm256_cvtss_f32(acc[c]);
  return sum;
}

}  // namespace

double fma_peak_gflops(const std::string& kernel, int threads, double seconds) {
  float (*run)(int64_t) = nullptr;
  int lanes = 0;
  if (kernel == "avx512" && __builtin_cpu_supports("avx512f")) {
    run = chains_avx512, lanes = 16;
  } else if (kernel == "avx2" && __builtin_cpu_supports("fma")) {
    run = chains_avx2, lanes = 8;
  } else {
    return 0.0;
  }
  // Rounds for about `seconds` at two multiply-adds a cycle near 3 GHz; the time is measured, not
  // assumed.
  const auto rounds = static_cast<int64_t>(seconds * 3e9 * 2 / kChains);
  std::atomic<int> ready{0};
  std::atomic<float> sink{0.0f};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      sink.fetch_add(run(rounds));
    });
  }
  while (ready.load() < threads) {
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  for (std::thread& w : workers) w.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const double flops = 2.0 * lanes * kChains * double(rounds) * threads;
  return flops / elapsed / 1e9;
}

}  // namespace sluice::bench
