// Random: a seeded, splittable counter-based generator (Philox4x32-10, as TensorFlow's stateless
// random ops). split(i) derives an independent stream from (this stream, i) alone, so work
// partitioned over threads can draw "the random numbers of element i" and get the same values
// whatever the thread count or the order in which elements are processed.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>

namespace sluice {

class Random {
 public:
  using result_type =
      uint32_t;  // A UniformRandomBitGenerator, usable with <random> and <algorithm>.

  explicit Random(uint64_t seed, uint64_t stream = 0);

  uint32_t next_u32();
  uint64_t next_u64();
  result_type operator()() { return next_u32(); }
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<uint32_t>::max(); }

  float uniform();                       // [0, 1)
  float uniform(float low, float high);  // [low, high)
  double uniform_double();               // [0, 1) with 53 random bits
  int64_t uniform_int(int64_t n);        // [0, n), unbiased. REQUIRES: n > 0.
  float normal();                        // standard normal (Box-Muller)
  bool bernoulli(double p);

  // An independent generator determined by this generator's seed and stream and by `index` (not by
  // how many numbers were drawn).
  Random split(uint64_t index) const;

  // Everything the generator is, as words: from_state(state()) draws exactly the numbers this
  // generator would draw next (how a shuffle's position is saved).
  static constexpr size_t kStateWords = 11;
  using State = std::array<uint32_t, kStateWords>;
  State state() const;
  // Throws InvalidArgument for words no generator has (a position past its block).
  static Random from_state(const State& state);

 private:
  Random() = default;
  void refill();

  std::array<uint32_t, 2> key_{};
  std::array<uint32_t, 4> counter_{};
  std::array<uint32_t, 4> block_{};
  int used_ = 4;  // Words of block_ already handed out.
};

// Combines two 64-bit values into a well-mixed seed (splitmix64 finaliser).
uint64_t mix_seed(uint64_t a, uint64_t b);

// `seed` when given, else a fresh nondeterministic one (as tf.data without a seed).
uint64_t seed_or_random(std::optional<uint64_t> seed);

}  // namespace sluice
