// The fast paths of the layers checked against plain reference loops: Conv2D's blocked im2col +
// GEMM (both patch layouts, padding, strides, batches spanning many blocks and gradient chunks)
// and its direct kernels, the GEMM kernel for every transpose combination
// and its own kernel for a small inner dimension, max pooling's per-image backward, the grouped
// column sums of bias and normalization gradients, results that do not depend on the thread
// count, and reused buffers never overwriting a tensor still held.
#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/model/activation_layer.h"
#include "sluice/model/batch_normalization.h"
#include "sluice/model/column_sums.h"
#include "sluice/model/conv2d.h"
#include "sluice/model/dense.h"
#include "sluice/model/direct_conv.h"
#include "sluice/model/gemm.h"
#include "sluice/model/losses.h"
#include "sluice/model/pooling.h"
#include "sluice/model/presets.h"
#include "sluice/model/tensor_pool.h"
#include "tests/model/testing.h"

namespace sluice {
namespace {

using testing::random_tensor;

void expect_near_all(const Tensor& actual, const std::vector<double>& expected,
                     const std::string& what) {
  ASSERT_EQ(actual.num_elements(), static_cast<int64_t>(expected.size())) << what;
  auto a = actual.values<float>();
  int failures = 0;
  for (size_t i = 0; i < expected.size() && failures < 10; ++i) {
    // Written so that a NaN fails too.
    if (!(std::abs(a[i] - expected[i]) <= 1e-4 + 1e-4 * std::abs(expected[i]))) {
      ADD_FAILURE() << what << "[" << i << "]: " << a[i] << ", expected " << expected[i];
      ++failures;
    }
  }
}

struct ConvCase {
  int64_t batch, h, w, cin, filters, kh, kw, sh, sw;
  Padding padding;
};

// Direct convolution in double with TensorFlow's padding: y, and for the upstream gradient dy
// the gradients dx, dkernel, dbias (linear activation).
struct ConvReference {
  std::vector<double> y, dx, dkernel, dbias;
};

ConvReference reference_conv(const ConvCase& c, const Tensor& x, const Tensor& kernel,
                             const Tensor& bias, const Tensor& dy) {
  const WindowGeometry gy = window_geometry(c.h, c.kh, c.sh, c.padding);
  const WindowGeometry gx = window_geometry(c.w, c.kw, c.sw, c.padding);
  const int64_t oh = gy.output, ow = gx.output;
  const float* xv = x.data<float>();
  const float* kv = kernel.data<float>();
  const float* dyv = dy.data<float>();
  ConvReference r;
  r.y.assign(static_cast<size_t>(c.batch * oh * ow * c.filters), 0.0);
  r.dx.assign(static_cast<size_t>(x.num_elements()), 0.0);
  r.dkernel.assign(static_cast<size_t>(kernel.num_elements()), 0.0);
  r.dbias.assign(static_cast<size_t>(c.filters), 0.0);
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        for (int64_t f = 0; f < c.filters; ++f) {
          const size_t o = static_cast<size_t>(((n * oh + oy) * ow + ox) * c.filters + f);
          double sum = bias.data<float>()[f];
          const double g = dyv[o];
          r.dbias[f] += g;
          for (int64_t ky = 0; ky < c.kh; ++ky) {
            const int64_t iy = oy * c.sh - gy.pad_before + ky;
            if (iy < 0 || iy >= c.h) continue;
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              const int64_t ix = ox * c.sw - gx.pad_before + kx;
              if (ix < 0 || ix >= c.w) continue;
              for (int64_t ch = 0; ch < c.cin; ++ch) {
                const size_t xi = static_cast<size_t>(((n * c.h + iy) * c.w + ix) * c.cin + ch);
                const size_t ki =
                    static_cast<size_t>(((ky * c.kw + kx) * c.cin + ch) * c.filters + f);
                sum += double{xv[xi]} * kv[ki];
                r.dx[xi] += g * kv[ki];
                r.dkernel[ki] += g * xv[xi];
              }
            }
          }
          r.y[o] = sum;
        }
      }
    }
  }
  return r;
}

void check_conv_case(const ConvCase& c, uint64_t seed) {
  SCOPED_TRACE(::testing::Message()
               << "batch " << c.batch << " " << c.h << "x" << c.w << "x" << c.cin << " -> "
               << c.filters << " kernel " << c.kh << "x" << c.kw << " strides " << c.sh << "x"
               << c.sw << " " << padding_name(c.padding));
  Conv2D conv(c.filters, {c.kh, c.kw}, {.strides = {c.sh, c.sw}, .padding = c.padding});
  conv.build({c.h, c.w, c.cin}, seed);
  conv.bias().value = random_tensor({c.filters}, seed + 1);
  const Tensor x = random_tensor({c.batch, c.h, c.w, c.cin}, seed + 2);
  const Tensor y = conv.forward(x, true);
  const Tensor dy = random_tensor(y.shape(), seed + 3);
  const ConvReference r = reference_conv(c, x, conv.kernel().value, conv.bias().value, dy);
  expect_near_all(y, r.y, "y");
  expect_near_all(conv.backward(dy), r.dx, "dx");
  expect_near_all(conv.kernel().gradient, r.dkernel, "dkernel");
  expect_near_all(conv.bias().gradient, r.dbias, "dbias");
}

TEST(KernelsTest, Conv2DMatchesDirectConvolution) {
  // One input channel with unit horizontal stride takes the transposed patch layout.
  check_conv_case({37, 12, 11, 1, 10, 5, 5, 1, 1, Padding::kValid}, 1);
  check_conv_case({9, 7, 6, 1, 3, 3, 4, 2, 1, Padding::kSame}, 2);
  check_conv_case({5, 6, 7, 1, 2, 3, 3, 1, 2, Padding::kSame}, 3);
  // Several channels: the row layout, with padding and strides.
  check_conv_case({19, 8, 8, 10, 20, 5, 5, 1, 1, Padding::kValid}, 4);
  check_conv_case({11, 7, 9, 3, 4, 3, 2, 2, 3, Padding::kSame}, 5);
  check_conv_case({3, 5, 5, 2, 3, 1, 1, 1, 1, Padding::kValid}, 6);
}

void reference_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                    const float* b, std::vector<double>& c) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = c[static_cast<size_t>(i * n + j)];
      for (int64_t p = 0; p < k; ++p) {
        s += double{ta ? a[p * m + i] : a[i * k + p]} * (tb ? b[j * k + p] : b[p * n + j]);
      }
      c[static_cast<size_t>(i * n + j)] = s;
    }
  }
}

// The instruction set a test parameter names: the parameter itself, or a tuple's first element.
const std::string& kernel_name(const std::string& param) { return param; }
template <typename... Rest>
const std::string& kernel_name(const std::tuple<std::string, Rest...>& param) {
  return std::get<0>(param);
}

// Runs each test on the kernels of the instruction set its parameter names, skipping those this
// CPU does not run.
template <typename Param>
class KernelTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const std::string& name = kernel_name(this->GetParam());
    const std::vector<std::string> names = internal::gemm_kernel_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      GTEST_SKIP() << "this CPU does not run the " << name << " kernel";
    }
    internal::force_gemm_kernel(name);
  }
  void TearDown() override { internal::force_gemm_kernel(""); }
};

// Every kernel this CPU runs: the baseline one, and the AVX2 and AVX-512 builds where it has them.
class GemmTest : public KernelTest<std::string> {};

TEST_P(GemmTest, MatchesReferenceForEveryLayout) {
  EXPECT_EQ(internal::gemm_kernel_name(), GetParam());
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (bool accumulate : {false, true}) {
        for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                               {7, 10, 25},
                               {300, 20, 33},
                               {129, 50, 320},
                               // Narrow C with k in several chunks, and tails of every width.
                               {70, 31, 200},
                               {65, 57, 40},
                               {3, 1, 130}}) {
          SCOPED_TRACE(::testing::Message() << "ta " << ta << " tb " << tb << " acc " << accumulate
                                            << " " << m << "x" << n << "x" << k);
          const Tensor a = random_tensor({m * k}, 10);
          const Tensor b = random_tensor({k * n}, 11);
          Tensor c = random_tensor({m, n}, 12);
          std::vector<double> expected(static_cast<size_t>(m * n), 0.0);
          if (accumulate) {
            for (size_t i = 0; i < expected.size(); ++i) expected[i] = c.values<float>()[i];
          }
          reference_gemm(ta, tb, m, n, k, a.data<float>(), b.data<float>(), expected);
          internal::gemm(ta, tb, m, n, k, a.data<float>(), b.data<float>(), c.data<float>(),
                         accumulate, /*parallel=*/true);
          expect_near_all(c, expected, "c");
        }
      }
    }
  }
}

// C = op(A) · B into C[m, n] at `offset` floats into a NaN-filled buffer, checked against the
// double reference; the NaN guards around C must survive, so C is written whole and only C.
void check_overwriting_gemm(bool ta, int64_t m, int64_t n, int64_t k, int64_t offset,
                            uint64_t seed) {
  SCOPED_TRACE(::testing::Message()
               << "ta " << ta << " " << m << "x" << n << "x" << k << " offset " << offset);
  const Tensor a = random_tensor({m * k}, seed);
  const Tensor b = random_tensor({k * n}, seed + 1);
  constexpr int64_t kGuard = 16;
  Tensor buffer(DType::kFloat32, {offset + m * n + kGuard});
  std::fill(buffer.values<float>().begin(), buffer.values<float>().end(), std::nanf(""));
  float* c = buffer.data<float>() + offset;
  std::vector<double> expected(static_cast<size_t>(m * n), 0.0);
  reference_gemm(ta, false, m, n, k, a.data<float>(), b.data<float>(), expected);
  internal::gemm(ta, false, m, n, k, a.data<float>(), b.data<float>(), c, false,
                 /*parallel=*/true);
  Tensor result(DType::kFloat32, {m * n});
  std::copy_n(c, m * n, result.data<float>());
  expect_near_all(result, expected, "c");
  for (int64_t i = 0; i < offset; ++i) EXPECT_TRUE(std::isnan(buffer.data<float>()[i])) << i;
  for (int64_t i = 0; i < kGuard; ++i) EXPECT_TRUE(std::isnan(c[m * n + i])) << "past C " << i;
}

// gemm's own kernel for small k (up to 64) when C is overwritten: rows off the 3-row tiles and
// 64-row blocks, columns off the 8-, 16- and 32-float tiles, k from 1 to just past the threshold,
// where Eigen takes over.
TEST_P(GemmTest, SmallInnerDimensionWritesEveryElementOfC) {
  uint64_t seed = 20;
  for (bool ta : {false, true}) {
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                           {2, 3, 1},
                           {5, 7, 2},
                           {71, 10, 9},
                           {130, 33, 16},
                           {200, 64, 25},
                           {129, 100, 63},
                           {257, 40, 64},
                           {131, 37, 65},
                           {64, 256, 32}}) {
      check_overwriting_gemm(ta, m, n, k, 0, seed++);
    }
  }
}

// A C larger than the caches takes streaming stores, which need C aligned to whole vectors: an
// aligned C (the Dense kernel-gradient layout), then one shifted by a float, and a row length
// that is not a whole number of vectors.
TEST_P(GemmTest, SmallInnerDimensionLargeC) {
  check_overwriting_gemm(true, 16411, 256, 16, 0, 40);
  check_overwriting_gemm(true, 16411, 256, 16, 1, 41);
  check_overwriting_gemm(false, 4100, 1027, 3, 0, 42);
}

// Fixed blocks and a fixed order over k: the register-tile kernel gives the same bits whether the
// rows run in one piece or in parallel blocks on any number of threads, for a small k and for a
// narrow C summed over k in several chunks, added to what C held.
TEST_P(GemmTest, TileKernelDoesNotDependOnTheThreadCount) {
  for (auto [m, n, k, accumulate] :
       {std::tuple<int64_t, int64_t, int64_t, bool>{1000, 72, 24, false}, {1000, 20, 600, true}}) {
    SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k);
    const Tensor a = random_tensor({k * m}, 50);
    const Tensor b = random_tensor({k * n}, 51);
    const Tensor c0 = random_tensor({m, n}, 52);
    auto product = [&](int threads, bool parallel) {
      Tensor c = c0.clone();
      oneapi::tbb::task_arena arena(threads);
      arena.execute([&] {
        internal::gemm(true, false, m, n, k, a.data<float>(), b.data<float>(), c.data<float>(),
                       accumulate, parallel);
      });
      return c;
    };
    const Tensor serial = product(1, false);
    EXPECT_TRUE(product(1, true).equals(serial));
    EXPECT_TRUE(product(2, true).equals(serial));
    EXPECT_TRUE(product(3, true).equals(serial));
  }
}

// Eigen's product, which gemm() can be made to run instead for benchmarks, agrees with it.
TEST_P(GemmTest, SmallInnerDimensionAgreesWithEigen) {
  constexpr int64_t m = 300, n = 50, k = 20;
  const Tensor a = random_tensor({k * m}, 60);
  const Tensor b = random_tensor({k * n}, 61);
  Tensor own(DType::kFloat32, {m, n});
  Tensor eigen(DType::kFloat32, {m, n});
  internal::gemm(true, false, m, n, k, a.data<float>(), b.data<float>(), own.data<float>(), false,
                 true);
  internal::force_eigen_gemm(true);
  internal::gemm(true, false, m, n, k, a.data<float>(), b.data<float>(), eigen.data<float>(), false,
                 true);
  internal::force_eigen_gemm(false);
  for (int64_t i = 0; i < m * n; ++i) {
    ASSERT_NEAR(own.data<float>()[i], eigen.data<float>()[i], 1e-5f) << i;
  }
}

// Where im2col + GEMM would take the register-tile kernel (few taps or at most kNarrowMax = 32
// filters), Conv2D takes the direct kernels of direct_conv.h. They match the direct reference, and
// their sums run in the order of im2col + GEMM's: the output bit for bit, and the kernel gradient
// too where that product takes the tile kernel (up to 32 filters; Eigen's, for more, sums in
// another order). The input gradient, for a layer that needs one, sums each window's terms over
// the filters in order where Eigen's GEMM sums them in its own: it matches the reference, and the
// path it replaces to float rounding. Cases: one channel (a first layer) and several; widths off
// the tiles' positions; filters within one vector, across several (17, 20, 40) and across several
// strips of vectors (70); window rows of one vector and of several strips (5x16 channels); padding
// and strides in both directions; more taps than one chunk of the GEMM's inner dimension; batches
// of many chunks.
TEST_P(GemmTest, DirectConvolutionMatchesIm2colBitForBit) {
  const ConvCase cases[] = {{37, 28, 28, 1, 10, 5, 5, 1, 1, Padding::kValid},
                            {9, 11, 13, 1, 3, 3, 4, 2, 1, Padding::kSame},
                            {5, 9, 7, 1, 17, 3, 3, 1, 1, Padding::kSame},
                            {3, 6, 25, 1, 40, 2, 5, 3, 1, Padding::kValid},
                            {2, 7, 6, 1, 70, 3, 3, 1, 1, Padding::kSame},
                            {4, 5, 5, 1, 1, 5, 5, 1, 1, Padding::kValid},
                            {19, 12, 12, 10, 20, 5, 5, 1, 1, Padding::kValid},
                            {5, 9, 8, 3, 17, 3, 3, 2, 2, Padding::kSame},
                            {4, 7, 10, 4, 32, 3, 2, 1, 3, Padding::kSame},
                            {3, 6, 6, 16, 8, 3, 3, 1, 1, Padding::kValid},
                            {6, 8, 11, 1, 5, 3, 3, 1, 2, Padding::kSame},
                            {3, 9, 10, 16, 12, 5, 5, 1, 1, Padding::kSame}};
  for (const ConvCase& c : cases) {
    for (const bool input_gradient : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << c.h << "x" << c.w << "x" << c.cin << " -> " << c.filters << " kernel " << c.kh
                   << "x" << c.kw << " strides " << c.sh << "," << c.sw
                   << (input_gradient ? " with" : " without") << " the input gradient");
      const WindowGeometry gy = window_geometry(c.h, c.kh, c.sh, c.padding);
      const WindowGeometry gx = window_geometry(c.w, c.kw, c.sw, c.padding);
      ASSERT_TRUE(internal::direct_conv_runs({c.h, c.w, c.cin, c.kh, c.kw, c.sh, c.sw, gy.output,
                                              gx.output, gy.pad_before, gx.pad_before, c.filters}));
      const Tensor x = random_tensor({c.batch, c.h, c.w, c.cin}, 7);
      const Tensor dy = random_tensor({c.batch, gy.output, gx.output, c.filters}, 5);
      struct Run {
        Tensor kernel, bias, y, dx, dkernel, dbias;
      };
      auto run = [&](bool im2col) {
        internal::force_conv_im2col(im2col);
        Conv2D conv(c.filters, {c.kh, c.kw}, {.strides = {c.sh, c.sw}, .padding = c.padding});
        conv.build({c.h, c.w, c.cin}, 3);
        conv.bias().value = random_tensor({c.filters}, 4);
        conv.set_input_gradient_needed(input_gradient);
        Run r{conv.kernel().value, conv.bias().value, conv.forward(x, true).clone(), {}, {}, {}};
        r.dx = conv.backward(dy).clone();
        r.dkernel = conv.kernel().gradient.clone();
        r.dbias = conv.bias().gradient.clone();
        internal::force_conv_im2col(false);
        return r;
      };
      const Run direct = run(false);
      const ConvReference reference = reference_conv(c, x, direct.kernel, direct.bias, dy);
      expect_near_all(direct.y, reference.y, "y");
      expect_near_all(direct.dkernel, reference.dkernel, "dkernel");
      expect_near_all(direct.dbias, reference.dbias, "dbias");
      if (input_gradient) expect_near_all(direct.dx, reference.dx, "dx");

      const Run im2col = run(true);
      auto expect_same_bits = [](const Tensor& a, const Tensor& b, const char* what) {
        ASSERT_EQ(a.shape(), b.shape()) << what;
        const auto av = a.values<float>();
        const auto bv = b.values<float>();
        int64_t differ = 0;
        for (size_t i = 0; i < av.size(); ++i) {
          differ += std::memcmp(&av[i], &bv[i], sizeof(float)) != 0;
        }
        EXPECT_EQ(differ, 0) << what << ": " << differ << " of " << av.size() << " differ";
      };
      expect_same_bits(direct.y, im2col.y, "y");
      if (c.filters <= 32) expect_same_bits(direct.dkernel, im2col.dkernel, "dkernel");
      if (input_gradient) {
        const auto replaced = im2col.dx.values<float>();
        expect_near_all(direct.dx, {replaced.begin(), replaced.end()}, "dx against im2col");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, GemmTest, ::testing::Values("baseline", "avx2", "avx512"),
                         [](const auto& info) { return info.param; });

TEST(GemmKernelsTest, TheWidestKernelRunsUnlessAnotherIsForced) {
  const std::vector<std::string> names = internal::gemm_kernel_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "baseline");
  EXPECT_EQ(internal::gemm_kernel_name(), names.back());
  internal::force_gemm_kernel("baseline");
  EXPECT_STREQ(internal::gemm_kernel_name(), "baseline");
  EXPECT_THROW(internal::force_gemm_kernel("sse9"), InvalidArgument);
  EXPECT_STREQ(internal::gemm_kernel_name(), "baseline");
  internal::force_gemm_kernel("");
  EXPECT_EQ(internal::gemm_kernel_name(), names.back());
}

// Each instruction set's kernel, for channel counts below, at and off its vectors' lanes (4, 8
// and 16), and pool sizes: 2×2 windows have a path of their own.
class MaxPoolingTest : public KernelTest<std::tuple<std::string, int64_t, int64_t>> {};

TEST_P(MaxPoolingTest, BackwardRoutesEachGradientToTheFirstMaximum) {
  const auto [kernel, c, size] = GetParam();
  constexpr int64_t kBatch = 6, kHeight = 4, kWidth = 5;
  // Overlapping windows (stride 1 < pool size) send several gradients to one input; with stride 2
  // and "same" padding, the windows at the far edges are cut short; with stride = pool size and
  // "valid" padding, windows are disjoint and the last rows and columns lie in none, so their
  // gradient must be zero. Values on a coarse grid make ties (the first maximum wins), and a few
  // NaNs must propagate.
  const std::pair<int64_t, Padding> cases[] = {
      {1, Padding::kValid}, {2, Padding::kSame}, {size, Padding::kValid}};
  for (const auto& [stride, padding] : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "stride " << stride << (padding == Padding::kSame ? ", same" : ", valid"));
    const WindowGeometry gy = window_geometry(kHeight, size, stride, padding);
    const WindowGeometry gx = window_geometry(kWidth, size, stride, padding);
    MaxPooling2D pool(size, {.strides = stride, .padding = padding});
    Tensor x = random_tensor({kBatch, kHeight, kWidth, c}, 20);
    float* xv = x.data<float>();
    for (int64_t i = 0; i < x.num_elements(); ++i) xv[i] = std::round(xv[i] * 2);
    for (int64_t i = 7; i < x.num_elements(); i += 53) xv[i] = std::nanf("");
    const Tensor y = pool.forward(x, true);
    ASSERT_EQ(y.shape(), Shape({kBatch, gy.output, gx.output, c}));
    const Tensor dy = random_tensor(y.shape(), 21);
    std::vector<double> dx(static_cast<size_t>(x.num_elements()), 0.0);
    for (int64_t n = 0; n < kBatch; ++n) {
      for (int64_t oy = 0; oy < gy.output; ++oy) {
        for (int64_t ox = 0; ox < gx.output; ++ox) {
          for (int64_t ch = 0; ch < c; ++ch) {
            int64_t best = -1;
            for (int64_t iy = gy.span(oy).begin; iy < gy.span(oy).end; ++iy) {
              for (int64_t ix = gx.span(ox).begin; ix < gx.span(ox).end; ++ix) {
                const int64_t i = ((n * kHeight + iy) * kWidth + ix) * c + ch;
                if (best < 0 || xv[i] > xv[best] || (std::isnan(xv[i]) && !std::isnan(xv[best]))) {
                  best = i;
                }
              }
            }
            const int64_t o = ((n * gy.output + oy) * gx.output + ox) * c + ch;
            const float got = y.data<float>()[o];
            EXPECT_TRUE(got == xv[best] || (std::isnan(got) && std::isnan(xv[best]))) << o;
            dx[static_cast<size_t>(best)] += dy.data<float>()[o];
          }
        }
      }
    }
    // The second pass takes the first one's buffer back, filled with garbage here: an input the
    // pass leaves unwritten shows.
    {
      Tensor first = pool.backward(dy);
      std::fill_n(first.data<float>(), first.num_elements(), 99.0f);
    }
    expect_near_all(pool.backward(dy), dx, "dx");
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, MaxPoolingTest,
                         ::testing::Combine(::testing::Values("baseline", "avx2", "avx512"),
                                            ::testing::Values(1, 3, 4, 7, 10, 16, 17, 20),
                                            ::testing::Values(2, 3)),
                         [](const auto& info) {
                           return str_cat(std::get<0>(info.param), "_", std::get<1>(info.param),
                                          "channels_", std::get<2>(info.param), "x",
                                          std::get<2>(info.param));
                         });

// One fashion-cnn training step's loss and first-layer kernel gradient under `threads` threads.
std::vector<float> fashion_step(int threads) {
  oneapi::tbb::task_arena arena(threads);
  std::vector<float> out;
  arena.execute([&] {
    Sequential model = make_preset("fashion-cnn", 3);
    const Tensor images = random_tensor({50, 28, 28, 1}, 30, 0.0f, 1.0f);
    Tensor labels(DType::kInt32, {50});
    for (int32_t i = 0; i < 50; ++i) labels.data<int32_t>()[i] = i % 10;
    const LossResult loss = nll_loss(labels, model.forward(images, true));
    model.backward(loss.gradient);
    out.push_back(loss.loss);
    for (Parameter* p : model.trainable_parameters()) {
      for (float v : p->gradient.values<float>()) out.push_back(v);
    }
  });
  return out;
}

TEST(KernelsTest, TrainingStepDoesNotDependOnTheThreadCount) {
  const std::vector<float> one = fashion_step(1);
  EXPECT_EQ(fashion_step(2), one);
}

// A layer reuses the buffers of the tensors it returned once they are released, never while the
// caller still holds them.
void expect_held_output_kept(Layer& layer, const Shape& shape) {
  SCOPED_TRACE(std::string(layer.class_name()));
  const Tensor x1 = random_tensor(shape, 40);
  const Tensor y1 = layer.forward(x1, true);
  const Tensor dx1 = layer.backward(random_tensor(y1.shape(), 41));
  const Tensor y1_copy = y1.clone();
  const Tensor dx1_copy = dx1.clone();
  for (int i = 0; i < 3; ++i) {
    const Tensor y2 = layer.forward(random_tensor(shape, 42 + i), true);
    const Tensor dx2 = layer.backward(random_tensor(y2.shape(), 50 + i));
    EXPECT_FALSE(y2.shares_buffer_with(y1));
    EXPECT_FALSE(dx2.shares_buffer_with(dx1));
  }
  EXPECT_TRUE(y1.equals(y1_copy));
  EXPECT_TRUE(dx1.equals(dx1_copy));
}

TEST(KernelsTest, ReusedBuffersNeverOverwriteHeldTensors) {
  Conv2D conv(4, 3, {.activation = ActivationFunction::kRelu});
  expect_held_output_kept(conv, {5, 6, 6, 2});
  MaxPooling2D pool(2);
  expect_held_output_kept(pool, {5, 6, 6, 2});
  BatchNormalization bn;
  expect_held_output_kept(bn, {5, 6, 6, 2});
  Dense dense(3, {.activation = ActivationFunction::kTanh});
  expect_held_output_kept(dense, {5, 7});
  Activation relu(ActivationFunction::kRelu);
  expect_held_output_kept(relu, {5, 7});
}

// Small integers sum exactly in any order, so the grouped sums must equal the plain ones exactly:
// a value counted in the wrong column, twice or not at all shows. Column counts cover a group of
// one row (16), of several (10, 20, 7), and too long for a group (50, 300); row counts leave a
// partial group.
TEST(KernelsTest, ColumnSumsEqualRowByRowSums) {
  for (const int64_t columns : {1, 7, 10, 16, 20, 50, 300}) {
    for (const int64_t rows : {0, 1, 3, 17, 1000}) {
      std::vector<float> x(static_cast<size_t>(rows * columns));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 23) - 11.0f;
      std::vector<float> expected(static_cast<size_t>(columns), 1.0f);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < columns; ++c) expected[c] += x[r * columns + c];
      }
      std::vector<float> sums(static_cast<size_t>(columns), 1.0f);  // Added to, not overwritten.
      internal::add_column_sums(x.data(), rows, columns, sums.data());
      EXPECT_EQ(sums, expected) << rows << "x" << columns;
      // Values that depend on their column, through arrays repeated to the group.
      std::vector<double> weight(static_cast<size_t>(columns));
      for (int64_t c = 0; c < columns; ++c) weight[c] = static_cast<double>(c + 1);
      const std::vector<double> weight_at =
          internal::repeat_to_group(weight, internal::column_sums_group(columns));
      std::vector<double> weighted(static_cast<size_t>(columns), 0.0);
      internal::add_column_sums(
          rows, columns, [&](int64_t i, int64_t j) { return x[i] * weight_at[j]; },
          weighted.data());
      // The same sums over fixed chunks of rows in parallel, chunk sums added in order.
      const std::vector<double> chunked = internal::column_sums_in_chunks(
          rows, columns, [&](int64_t i, int64_t j) { return x[i] * weight_at[j]; });
      EXPECT_EQ(chunked, weighted) << rows << "x" << columns;
      std::vector<double> scaled(x.size());
      internal::for_each_in_groups(rows * columns, internal::column_sums_group(columns),
                                   [&](int64_t i, int64_t j) { scaled[i] = x[i] * weight_at[j]; });
      for (int64_t c = 0; c < columns; ++c) {
        EXPECT_EQ(weighted[c], (expected[c] - 1.0f) * weight[c]) << rows << "x" << columns;
        for (int64_t r = 0; r < rows; ++r) {
          ASSERT_EQ(scaled[r * columns + c], x[r * columns + c] * weight[c]);
        }
      }
    }
  }
}

// Batch normalisation's element-wise passes run on the CPU's widest vectors (vector_clones.h), yet
// must round each product and then each sum as this file's scalar loop does, which the baseline
// build cannot fuse: a build that fused them into one rounding would make results depend on the
// CPU.
TEST(KernelsTest, BatchNormalizationRoundsAsTheBaselineBuildOnEveryCpu) {
  constexpr int64_t kChannels = 16;
  BatchNormalization bn;
  bn.build({kChannels}, 0);
  float* mean = bn.moving_mean().value.data<float>();
  float* variance = bn.moving_variance().value.data<float>();
  float* gamma = bn.gamma().value.data<float>();
  float* beta = bn.beta().value.data<float>();
  for (int64_t c = 0; c < kChannels; ++c) {
    mean[c] = 0.1f * static_cast<float>(c) - 0.7f;
    variance[c] = 0.3f + 0.2f * static_cast<float>(c);
    gamma[c] = 1.0f / static_cast<float>(c + 3);
    beta[c] = 0.3f * static_cast<float>(c) - 1.1f;
  }
  const Tensor x = random_tensor({64, kChannels}, 30);
  const Tensor y = bn.forward(x, /*training=*/false);
  const float epsilon = BatchNormalizationOptions{}.epsilon;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t c = i % kChannels;
    const float inv_std = 1.0f / std::sqrt(variance[c] + epsilon);
    const float normalized = (x.data<float>()[i] - mean[c]) * inv_std;
    const float scaled = normalized * gamma[c];
    ASSERT_EQ(y.data<float>()[i], scaled + beta[c]) << i;
  }
}

TEST(KernelsTest, TensorPoolReusesReleasedBuffersOfTheSameSize) {
  internal::TensorPool pool;
  const void* first = nullptr;
  {
    Tensor t = pool.take({4, 8});
    EXPECT_EQ(t.dtype(), DType::kFloat32);
    EXPECT_EQ(t.shape(), Shape({4, 8}));
    first = t.raw_data();
    t.values<float>()[31] = 1.0f;
  }
  Tensor again = pool.take({8, 4});  // Same size, another shape.
  EXPECT_EQ(again.raw_data(), first);
  Tensor other = pool.take({8, 4});  // The first is still held: a new buffer.
  EXPECT_NE(other.raw_data(), first);
  // A tensor may outlive its pool.
  Tensor survivor;
  {
    internal::TensorPool short_lived;
    survivor = short_lived.take({3});
  }
  survivor.values<float>()[2] = 5.0f;
  EXPECT_EQ(survivor.values<float>()[2], 5.0f);
}

}  // namespace
}  // namespace sluice
