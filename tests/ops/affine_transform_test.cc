// ops/affine_transform against golden values from Keras' own construction run through
// scipy.ndimage.affine_transform (tests/ops/fixtures/make_affine_fixtures.py), plus the random
// draw's order and ranges.
#include "sluice/ops/affine_transform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/core/random.h"
#include "sluice/ops/affine_warp.h"

namespace sluice {
namespace {

struct GoldenCase {
  std::string name;
  FillMode mode = FillMode::kNearest;
  float cval = 0;
  bool uint8 = false;
  AffineTransformParams params;
  int64_t h = 0, w = 0, c = 0;
  std::vector<double> input;
  std::vector<double> output;
};

FillMode parse_mode(const std::string& s) {
  if (s == "nearest") return FillMode::kNearest;
  if (s == "constant") return FillMode::kConstant;
  if (s == "reflect") return FillMode::kReflect;
  if (s == "wrap") return FillMode::kWrap;
  throw InvalidArgument("unknown mode " + s);
}

std::vector<GoldenCase> load_cases() {
  std::ifstream in(std::string(SLUICE_OPS_FIXTURES_DIR) + "/affine_cases.txt");
  EXPECT_TRUE(in) << "missing fixture file";
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "case") {
      cases.emplace_back();
      words >> cases.back().name;
      continue;
    }
    GoldenCase& g = cases.back();
    if (key == "mode") {
      std::string mode, cval_key, dtype_key, dtype;
      words >> mode >> cval_key >> g.cval >> dtype_key >> dtype;
      g.mode = parse_mode(mode);
      g.uint8 = dtype == "uint8";
    } else if (key == "params") {
      int fh = 0, fv = 0;
      words >> g.params.theta >> g.params.tx >> g.params.ty >> g.params.shear >> g.params.zx >>
          g.params.zy >> fh >> fv;
      g.params.flip_horizontal = fh != 0;
      g.params.flip_vertical = fv != 0;
    } else if (key == "shape") {
      words >> g.h >> g.w >> g.c;
    } else {
      std::vector<double>& values = key == "input" ? g.input : g.output;
      double v;
      while (words >> v) values.push_back(v);
    }
  }
  return cases;
}

Tensor make_image(const GoldenCase& g) {
  Tensor t(g.uint8 ? DType::kUInt8 : DType::kFloat32, Shape{g.h, g.w, g.c});
  for (size_t i = 0; i < g.input.size(); ++i) {
    if (g.uint8) {
      t.data<uint8_t>()[i] = static_cast<uint8_t>(g.input[i]);
    } else {
      t.data<float>()[i] = static_cast<float>(g.input[i]);
    }
  }
  return t;
}

TEST(AffineTransformGolden, MatchesKerasAndScipy) {
  const std::vector<GoldenCase> cases = load_cases();
  ASSERT_GE(cases.size(), 20u);
  for (const GoldenCase& g : cases) {
    SCOPED_TRACE(g.name);
    ASSERT_EQ(g.input.size(), static_cast<size_t>(g.h * g.w * g.c));
    ASSERT_EQ(g.output.size(), g.input.size());
    const Tensor image = make_image(g);
    const Tensor out = apply_affine_transform(image, g.params, g.mode, g.cval);
    ASSERT_EQ(out.dtype(), image.dtype());
    ASSERT_EQ(out.shape(), image.shape());
    for (size_t i = 0; i < g.output.size(); ++i) {
      if (g.uint8) {
        // Fixed-point weights against scipy's double arithmetic: at most one step apart.
        ASSERT_NEAR(out.data<uint8_t>()[i], g.output[i], 1.0) << "at " << i;
      } else {
        ASSERT_NEAR(out.data<float>()[i], g.output[i], 2e-3) << "at " << i;
      }
    }
  }
}

TEST(AffineTransformGolden, FusedFloatOutputMatchesWithScale) {
  for (const GoldenCase& g : load_cases()) {
    SCOPED_TRACE(g.name);
    const Tensor image = make_image(g);
    std::vector<float> out(g.output.size());
    apply_affine_transform_to_float(image, g.params, g.mode, g.cval, 0.5f, out.data());
    // uint8 inputs: scipy rounded its output to integers, the fused path does not.
    const double tolerance = g.uint8 ? 0.5 * 0.65 : 1e-3;
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_NEAR(out[i], 0.5 * g.output[i], tolerance) << "at " << i;
    }
  }
}

TEST(AffineTransform, IdentityReturnsTheInput) {
  Tensor image(DType::kUInt8, Shape{4, 5, 3});
  image.data<uint8_t>()[7] = 9;
  const Tensor out = apply_affine_transform(image, AffineTransformParams{});
  EXPECT_TRUE(out.shares_buffer_with(image));
}

TEST(AffineTransform, FlipIsExactPermutation) {
  Tensor image(DType::kUInt8, Shape{3, 4, 1});
  for (int i = 0; i < 12; ++i) image.data<uint8_t>()[i] = static_cast<uint8_t>(i * 10);
  const Tensor out = apply_affine_transform(image, {.flip_horizontal = true});
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(out.data<uint8_t>()[r * 4 + c], image.data<uint8_t>()[r * 4 + (3 - c)]);
    }
  }
}

TEST(AffineTransform, BatchGetsTheSameTransformPerImage) {
  Tensor one(DType::kFloat32, Shape{6, 6, 2});
  for (int i = 0; i < 72; ++i) one.data<float>()[i] = static_cast<float>(i);
  Tensor batch(DType::kFloat32, Shape{2, 6, 6, 2});
  for (int i = 0; i < 144; ++i) batch.data<float>()[i] = static_cast<float>(i % 72);
  const AffineTransformParams p{.theta = 10, .zx = 1.2};
  const Tensor a = apply_affine_transform(one, p);
  const Tensor b = apply_affine_transform(batch, p);
  for (int i = 0; i < 144; ++i) EXPECT_FLOAT_EQ(b.data<float>()[i], a.data<float>()[i % 72]);
}

TEST(AffineTransform, RejectsBadInputs) {
  EXPECT_THROW(apply_affine_transform(Tensor(DType::kUInt8, Shape{4, 4}), {.theta = 3}),
               InvalidArgument);
  EXPECT_THROW(apply_affine_transform(Tensor(DType::kInt32, Shape{4, 4, 1}), {.theta = 3}),
               InvalidArgument);
  EXPECT_THROW(check_random_transform_options({.zoom_range = {1.2, 0.8}}), InvalidArgument);
  EXPECT_THROW(check_random_transform_options({.shear_range = -1}), InvalidArgument);
  EXPECT_NO_THROW(check_random_transform_options({.shear_range = 0.2, .zoom_range = 0.2}));
}

// Keras' shear_range is in degrees: 0.2 moves a vertical line by under one pixel over 64 rows
// (acceptance check 8 of the reference).
TEST(AffineTransform, ShearRangeIsInDegrees) {
  Tensor image(DType::kFloat32, Shape{64, 64, 1});
  for (int r = 0; r < 64; ++r) image.data<float>()[r * 64 + 32] = 255;
  Random random(7);
  for (int trial = 0; trial < 20; ++trial) {
    const AffineTransformParams p = random_transform_params({.shear_range = 0.2}, 64, 64, random);
    ASSERT_LE(std::abs(p.shear), 0.2);
    const Tensor out = apply_affine_transform(image, p);
    for (int r = 0; r < 64; ++r) {
      for (int c = 0; c < 64; ++c) {
        if (out.data<float>()[r * 64 + c] > 1) {
          EXPECT_LE(std::abs(c - 32), 1) << r << "," << c;
        }
      }
    }
  }
}

TEST(RandomTransformParams, DrawsInKerasOrder) {
  const RandomTransformOptions o{.rotation_range = 30,
                                 .width_shift_range = 0.1,
                                 .height_shift_range = 3,
                                 .shear_range = 0.2,
                                 .zoom_range = {0.5, 1.5},
                                 .horizontal_flip = true,
                                 .vertical_flip = true};
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Random a(seed);
    Random b(seed);
    const AffineTransformParams p = random_transform_params(o, 20, 40, a);
    EXPECT_DOUBLE_EQ(p.theta, -30 + 60 * b.uniform_double());
    EXPECT_DOUBLE_EQ(p.tx, -3 + 6 * b.uniform_double());             // >= 1: pixels.
    EXPECT_DOUBLE_EQ(p.ty, (-0.1 + 0.2 * b.uniform_double()) * 40);  // < 1: fraction of width.
    EXPECT_DOUBLE_EQ(p.shear, -0.2 + 0.4 * b.uniform_double());
    EXPECT_DOUBLE_EQ(p.zx, 0.5 + 1.0 * b.uniform_double());
    EXPECT_DOUBLE_EQ(p.zy, 0.5 + 1.0 * b.uniform_double());
    EXPECT_EQ(p.flip_horizontal, b.uniform_double() < 0.5);
    EXPECT_EQ(p.flip_vertical, b.uniform_double() < 0.5);
  }
}

TEST(RandomTransformParams, SkipsZeroRangesButAlwaysDrawsFlips) {
  Random a(3);
  Random b(3);
  const AffineTransformParams p = random_transform_params({.zoom_range = 0.2}, 10, 10, a);
  EXPECT_EQ(p.theta, 0);
  EXPECT_EQ(p.tx, 0);
  EXPECT_EQ(p.shear, 0);
  EXPECT_DOUBLE_EQ(p.zx, 0.8 + 0.4 * b.uniform_double());
  EXPECT_DOUBLE_EQ(p.zy, 0.8 + 0.4 * b.uniform_double());
  EXPECT_FALSE(p.flip_horizontal);  // Drawn, but disabled.
  b.uniform_double();
  b.uniform_double();
  EXPECT_EQ(a.next_u64(), b.next_u64());  // Both flip draws were consumed.
}

TEST(RandomTransformParams, FlipsAboutHalfTheTime) {
  Random random(11);
  int flips = 0;
  for (int i = 0; i < 2000; ++i) {
    flips += random_transform_params({.horizontal_flip = true}, 8, 8, random).flip_horizontal;
  }
  EXPECT_GT(flips, 900);
  EXPECT_LT(flips, 1100);
}

// The AVX2 build of the warp kernels gives the baseline's bits, for every path (identity, rows
// without rotation, the general one), fill mode, channel count, dtype, and edge columns on both
// sides (zoom out, flips), so an augmented pipeline's output does not depend on the machine.
TEST(AffineWarpKernels, Avx2MatchesTheBaselineBitForBit) {
  const internal::AffineWarpKernels* avx2 = internal::avx2_affine_warp_kernels();
  if (avx2 == nullptr || !__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 build or CPU";
  const internal::AffineWarpKernels& base = internal::baseline_affine_warp_kernels();
  const RandomTransformOptions options{.rotation_range = 0,
                                       .width_shift_range = 0.2,
                                       .height_shift_range = 0.2,
                                       .shear_range = 20,
                                       .zoom_range = {0.6, 1.4},
                                       .horizontal_flip = true,
                                       .vertical_flip = true};
  Random random(7, 0);
  int checked = 0;
  for (const int64_t c : {1, 2, 3, 4}) {
    for (const auto& [h, w] : {std::pair<int64_t, int64_t>{37, 53}, {16, 16}, {5, 130}}) {
      std::vector<uint8_t> u8(static_cast<size_t>(h * w * c));
      std::vector<float> f32(u8.size());
      for (size_t i = 0; i < u8.size(); ++i) {
        u8[i] = static_cast<uint8_t>(random.next_u64() >> 56);
        f32[i] = static_cast<float>(u8[i]) * 0.37f - 11.0f;
      }
      for (const FillMode mode :
           {FillMode::kNearest, FillMode::kConstant, FillMode::kReflect, FillMode::kWrap}) {
        for (int draw = 0; draw < 6; ++draw) {
          RandomTransformOptions o = options;
          if (draw == 1) o.rotation_range = 30;    // The general path.
          if (draw == 2) o.zoom_range = {2.2, 3};  // Input columns more than 2 apart.
          AffineTransformParams params = random_transform_params(o, h, w, random);
          if (draw == 0) params = {};  // The identity.
          const AffineMatrix m = keras_affine_matrix(params, h, w);
          const size_t n = u8.size();
          std::vector<float> a(n), b(n);
          base.warp_u8_to_float(u8.data(), h, w, c, m, mode, 3, 1 / 255.0f, {}, a.data());
          avx2->warp_u8_to_float(u8.data(), h, w, c, m, mode, 3, 1 / 255.0f, {}, b.data());
          ASSERT_EQ(0, std::memcmp(a.data(), b.data(), n * sizeof(float))) << c << " " << draw;
          base.warp_float_to_float(f32.data(), h, w, c, m, mode, 3, 0.5f, {.channels_first = true},
                                   a.data());
          avx2->warp_float_to_float(f32.data(), h, w, c, m, mode, 3, 0.5f, {.channels_first = true},
                                    b.data());
          ASSERT_EQ(0, std::memcmp(a.data(), b.data(), n * sizeof(float))) << c << " " << draw;
          base.warp_float(f32.data(), h, w, c, m, mode, 3, a.data());
          avx2->warp_float(f32.data(), h, w, c, m, mode, 3, b.data());
          ASSERT_EQ(0, std::memcmp(a.data(), b.data(), n * sizeof(float))) << c << " " << draw;
          if (c == 1) {
            // A grey image written as RGB, to a 32-byte aligned place (streamed) and not.
            std::vector<float> rgb_a(3 * n + 16), rgb_b(3 * n + 16);
            const auto aligned = [](std::vector<float>& v) {
              return v.data() + (32 - reinterpret_cast<uintptr_t>(v.data()) % 32) % 32 / 4;
            };
            for (const int64_t shift : {0, 1}) {
              for (const bool first : {false, true}) {
                const FloatImageLayout rgb{.channels_first = first, .channels = 3};
                base.warp_u8_to_float(u8.data(), h, w, c, m, mode, 3, 1 / 255.0f, rgb,
                                      aligned(rgb_a) + shift);
                avx2->warp_u8_to_float(u8.data(), h, w, c, m, mode, 3, 1 / 255.0f, rgb,
                                       aligned(rgb_b) + shift);
                ASSERT_EQ(0, std::memcmp(aligned(rgb_a) + shift, aligned(rgb_b) + shift,
                                         3 * n * sizeof(float)))
                    << draw << " " << shift << " " << first;
              }
            }
          }
          std::vector<uint8_t> x(n), y(n);
          base.warp_u8(u8.data(), h, w, c, m, mode, 3, x.data());
          avx2->warp_u8(u8.data(), h, w, c, m, mode, 3, y.data());
          ASSERT_EQ(x, y) << c << " " << draw;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 4 * 3 * 4 * 6);
}

// Channels-first output is the interleaved output transposed, exactly, on every path.
TEST(AffineTransform, ChannelsFirstOutputIsTheInterleavedOneTransposed) {
  const RandomTransformOptions options{
      .shear_range = 20, .zoom_range = 0.3, .horizontal_flip = true};
  Random random(3, 0);
  for (const int64_t c : {1, 3, 4}) {
    const int64_t h = 19, w = 23;
    Tensor u8 = Tensor::uninitialized(DType::kUInt8, Shape{h, w, c});
    Tensor f32 = Tensor::uninitialized(DType::kFloat32, Shape{h, w, c});
    for (int64_t i = 0; i < h * w * c; ++i) {
      u8.data<uint8_t>()[i] = static_cast<uint8_t>(random.next_u64() >> 56);
      f32.data<float>()[i] = static_cast<float>(u8.data<uint8_t>()[i]) - 7.5f;
    }
    for (int draw = 0; draw < 3; ++draw) {
      RandomTransformOptions o = options;
      if (draw == 1) o.rotation_range = 25;  // The general path.
      AffineTransformParams params = random_transform_params(o, h, w, random);
      if (draw == 0) params = {};  // The identity.
      for (const Tensor* image : {&u8, &f32}) {
        const auto n = static_cast<size_t>(h * w * c);
        std::vector<float> hwc(n), chw(n);
        apply_affine_transform_to_float(*image, params, FillMode::kReflect, 0, 0.25f, hwc.data());
        apply_affine_transform_to_float(*image, params, FillMode::kReflect, 0, 0.25f, chw.data(),
                                        {.channels_first = true});
        for (int64_t p = 0; p < h * w; ++p) {
          for (int64_t k = 0; k < c; ++k) {
            ASSERT_EQ(hwc[static_cast<size_t>(p * c + k)], chw[static_cast<size_t>(k * h * w + p)])
                << "channels " << c << ", draw " << draw << ", pixel " << p;
          }
        }
      }
    }
  }
}

// A grey image written as three channels is, bit for bit, the warp of its RGB conversion (the
// channel repeated), in both layouts and on every path.
TEST(AffineTransform, GreyWrittenAsRgbIsTheWarpOfItsRgbConversion) {
  const int64_t h = 17, w = 29;
  Random random(11, 0);
  Tensor grey = Tensor::uninitialized(DType::kUInt8, Shape{h, w, 1});
  Tensor rgb = Tensor::uninitialized(DType::kUInt8, Shape{h, w, 3});
  for (int64_t p = 0; p < h * w; ++p) {
    grey.data<uint8_t>()[p] = static_cast<uint8_t>(random.next_u64() >> 56);
    for (int k = 0; k < 3; ++k) rgb.data<uint8_t>()[3 * p + k] = grey.data<uint8_t>()[p];
  }
  const RandomTransformOptions options{
      .shear_range = 20, .zoom_range = 0.3, .horizontal_flip = true};
  for (int draw = 0; draw < 3; ++draw) {
    RandomTransformOptions o = options;
    if (draw == 1) o.rotation_range = 25;  // The general path.
    AffineTransformParams params = random_transform_params(o, h, w, random);
    if (draw == 0) params = {};  // The identity.
    for (const bool channels_first : {false, true}) {
      const auto n = static_cast<size_t>(h * w * 3);
      std::vector<float> expected(n), actual(n, -1);
      apply_affine_transform_to_float(rgb, params, FillMode::kConstant, 9, 0.5f, expected.data(),
                                      {.channels_first = channels_first});
      apply_affine_transform_to_float(grey, params, FillMode::kConstant, 9, 0.5f, actual.data(),
                                      {.channels_first = channels_first, .channels = 3});
      ASSERT_EQ(0, std::memcmp(expected.data(), actual.data(), n * sizeof(float)))
          << "draw " << draw << ", channels_first " << channels_first;
    }
  }
  std::vector<float> out(static_cast<size_t>(h * w * 3));
  EXPECT_THROW(apply_affine_transform_to_float(rgb, {}, FillMode::kNearest, 0, 1, out.data(),
                                               {.channels = 1}),
               InvalidArgument);
}

// The chosen kernels are the AVX2 build's wherever the CPU runs it.
TEST(AffineWarpKernels, ChoosesTheAvx2BuildOnCpusThatHaveIt) {
  const internal::AffineWarpKernels* avx2 = internal::avx2_affine_warp_kernels();
  const bool expect_avx2 = avx2 != nullptr && __builtin_cpu_supports("avx2");
  EXPECT_STREQ(internal::affine_warp_kernels().name, expect_avx2 ? "avx2" : "baseline");
}

}  // namespace
}  // namespace sluice
