// Google Benchmark of the model library: one fashion-cnn training step (forward in training mode,
// nll_loss, backward, SGD with momentum) at batch 128 inside a 2-thread oneTBB arena, the budget
// PyTorch gets in bench/peers/pytorch_fashion_cnn.py; the forward pass alone (inference); and one
// full shuffled epoch of Fashion-MNIST's 60,000 training images (skipped when the dataset is not
// installed), the figure the peer script prints as epoch_seconds, and its GFLOP/s as a share of the
// machine's multiply-add peak measured in the same run, beside the same for fashion-cnn-wide; each
// of its layers with weights alone, in GFLOP/s. Also the kernel-gradient product of tpu-guide-cnn's
// first Dense layer, whose inner dimension is small, on Eigen's GEMM and on the register-tile
// kernel, side by side.
#include <benchmark/benchmark.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "bench/fma_peak.h"
#include "sluice/dataset/idx_dataset.h"
#include "sluice/model/conv2d.h"
#include "sluice/model/dense.h"
#include "sluice/model/direct_conv.h"
#include "sluice/model/gemm.h"
#include "sluice/model/losses.h"
#include "sluice/model/optimizers.h"
#include "sluice/model/pooling.h"
#include "sluice/model/presets.h"

namespace sluice {
namespace {

constexpr int64_t kBatch = 128;

struct FashionBatch {
  Tensor images{DType::kFloat32, {kBatch, 28, 28, 1}};
  Tensor labels{DType::kInt32, {kBatch}};
  FashionBatch() {
    Random rng(42);
    for (float& v : images.values<float>()) v = rng.uniform(0.0f, 1.0f);
    for (int32_t& l : labels.values<int32_t>()) {
      l = static_cast<int32_t>(rng.uniform(0.0f, 10.0f)) % 10;
    }
  }
};

// The FLOPs of one example's forward and backward pass through a layer with a kernel (Conv2D,
// Dense): each output element is a dot product over the kernel's inputs (the kernel's size over its
// filters or units), 2 FLOPs a multiply-add, done once forward, once for the kernel's gradient and,
// unless `first` (the model's first layer needs no input gradient), once for the input's.
double training_flops(Layer& layer, bool first) {
  const Tensor& kernel = layer.parameters().front()->value;
  const double macs = double(layer.output_shape(layer.input_shape()).num_elements()) *
                      double(kernel.num_elements()) / double(kernel.dim(kernel.rank() - 1));
  return 2.0 * macs * (first ? 2.0 : 3.0);
}

// The FLOPs of one example's training step through a model's Conv2D and Dense layers.
double training_flops(Sequential& model) {
  double flops = 0.0;
  bool first = true;
  for (size_t i = 0; i < model.num_layers(); ++i) {
    Layer& layer = model.layer(i);
    if (layer.class_name() == "Conv2D" || layer.class_name() == "Dense") {
      flops += training_flops(layer, first);
    }
    first = first && layer.parameters().empty();
  }
  return flops;
}

// The machine's multiply-add peak on 2 threads (fma_peak.h), to set the layers' GFLOP/s against.
void BM_FmaPeak(benchmark::State& state) {
  double gflops = 0.0;
  for (auto _ : state) gflops = bench::fma_peak_gflops(internal::gemm_kernel_name(), 2, 0.5);
  state.SetLabel(internal::gemm_kernel_name());
  state.counters["GFLOP_per_sec"] = gflops;
}
BENCHMARK(BM_FmaPeak)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FashionCnnTrainStep(benchmark::State& state) {
  oneapi::tbb::task_arena arena(static_cast<int>(state.range(0)));
  double flops_per_example = 0.0;
  arena.execute([&] {
    Sequential model = make_preset("fashion-cnn", 1);
    flops_per_example = training_flops(model);
    SGD sgd({.learning_rate = 0.01f, .momentum = 0.5f});  // The PyTorch/XLA tutorial's optimizer.
    const FashionBatch batch;
    for (auto _ : state) {
      const Tensor log_probs = model.forward(batch.images, true);
      const LossResult loss = nll_loss(batch.labels, log_probs);
      model.backward(loss.gradient);
      sgd.apply_gradients(model.trainable_parameters());
      benchmark::DoNotOptimize(loss.loss);
    }
  });
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["images_per_sec"] =
      benchmark::Counter(double(state.iterations() * kBatch), benchmark::Counter::kIsRate);
  state.counters["GFLOP"] = benchmark::Counter(
      flops_per_example * double(state.iterations() * kBatch) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FashionCnnTrainStep)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FashionCnnPredict(benchmark::State& state) {
  oneapi::tbb::task_arena arena(static_cast<int>(state.range(0)));
  arena.execute([&] {
    Sequential model = make_preset("fashion-cnn", 1);
    const FashionBatch batch;
    for (auto _ : state) benchmark::DoNotOptimize(model.predict(batch.images));
  });
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_FashionCnnPredict)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// fashion-cnn's layers with learned weights, alone, at batch 128 on 2 threads: forward in training
// mode then backward (no input gradient for the first layer, as in the model), with the
// multiply-adds of both counted as 2 FLOPs each (the GFLOP counter is a rate: GFLOP/s). Arguments:
// the layer (0: conv 5x5 1->10 on 28x28, 1: conv 5x5 10->20 on 12x12, 2: dense 320->50; 3 and 4:
// conv1 and conv2 on im2col + GEMM, the path their direct kernels replaced; 5-7: fashion-cnn-wide's
// conv 1->16 on 28x28, conv 16->32 on 12x12 and dense 512->64).
void BM_FashionCnnLayer(benchmark::State& state) {
  struct Case {
    const char* name;
    Shape input;
    std::function<std::unique_ptr<Layer>()> make;
    bool first;
    bool im2col = false;
  };
  const Case cases[] = {
      {"conv1", {28, 28, 1}, [] { return std::make_unique<Conv2D>(10, 5); }, true},
      {"conv2", {12, 12, 10}, [] { return std::make_unique<Conv2D>(20, 5); }, false},
      {"dense1", {320}, [] { return std::make_unique<Dense>(50); }, false},
      {"conv1 im2col", {28, 28, 1}, [] { return std::make_unique<Conv2D>(10, 5); }, true, true},
      {"conv2 im2col", {12, 12, 10}, [] { return std::make_unique<Conv2D>(20, 5); }, false, true},
      {"wide conv1", {28, 28, 1}, [] { return std::make_unique<Conv2D>(16, 5); }, true},
      {"wide conv2", {12, 12, 16}, [] { return std::make_unique<Conv2D>(32, 5); }, false},
      {"wide dense1", {512}, [] { return std::make_unique<Dense>(64); }, false},
  };
  const Case& c = cases[state.range(0)];
  internal::force_conv_im2col(c.im2col);
  oneapi::tbb::task_arena arena(2);
  double flops_per_step = 0.0;
  arena.execute([&] {
    std::unique_ptr<Layer> layer = c.make();
    layer->build(c.input, 1);
    layer->set_input_gradient_needed(!c.first);
    Tensor x(DType::kFloat32, c.input.prepend(kBatch));
    Random rng(5);
    for (float& v : x.values<float>()) v = rng.uniform(-1.0f, 1.0f);
    const Tensor y = layer->forward(x, true);
    Tensor dy(DType::kFloat32, y.shape());
    for (float& v : dy.values<float>()) v = rng.uniform(-1.0f, 1.0f);
    flops_per_step = training_flops(*layer, c.first) * double(kBatch);
    for (auto _ : state) {
      benchmark::DoNotOptimize(layer->forward(x, true));
      benchmark::DoNotOptimize(layer->backward(dy));
    }
  });
  internal::force_conv_im2col(false);
  state.SetLabel(c.name);
  state.counters["GFLOP"] = benchmark::Counter(flops_per_step * double(state.iterations()) / 1e9,
                                               benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FashionCnnLayer)->DenseRange(0, 7)->Unit(benchmark::kMicrosecond)->UseRealTime();

// fashion-cnn's two max poolings (2×2 over conv1's [24, 24, 10] and conv2's [8, 8, 20] outputs),
// forward in training mode then backward, at batch 128 on 2 threads, on one instruction set's
// kernel. Arguments: the pooling (0, 1), the kernel (0: baseline, 1: the widest this CPU runs).
void BM_FashionCnnPooling(benchmark::State& state) {
  const Shape input = state.range(0) == 0 ? Shape{24, 24, 10} : Shape{8, 8, 20};
  const std::string kernel = state.range(1) == 0 ? "baseline" : "";
  internal::force_gemm_kernel(kernel);
  oneapi::tbb::task_arena arena(2);
  arena.execute([&] {
    MaxPooling2D pool(2);
    pool.build(input, 1);
    Tensor x(DType::kFloat32, input.prepend(kBatch));
    Random rng(5);
    for (float& v : x.values<float>()) v = rng.uniform(-1.0f, 1.0f);
    const Tensor dy = pool.forward(x, true).clone();
    for (auto _ : state) {
      benchmark::DoNotOptimize(pool.forward(x, true));
      benchmark::DoNotOptimize(pool.backward(dy));
    }
  });
  state.SetLabel(internal::gemm_kernel_name());
  internal::force_gemm_kernel("");
  // The input read by the forward pass: a rate of GB/s.
  state.SetBytesProcessed(state.iterations() * kBatch * input.num_elements() *
                          int64_t{sizeof(float)});
}
BENCHMARK(BM_FashionCnnPooling)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// dW = xᵀ · dz of tpu-guide-cnn's Dense(256) on its flattened [rows, 147456] input, for a
// per-replica batch of k rows: a 151 MB C from a tiny inner dimension. Arguments: k, the kernel
// (0: Eigen's product, 1: the register-tile kernel), threads. CPU time is the whole process's.
void BM_GemmSmallK(benchmark::State& state) {
  constexpr int64_t m = 147456, n = 256;
  const int64_t k = state.range(0);
  internal::force_eigen_gemm(state.range(1) == 0);
  Random rng(3);
  Tensor x(DType::kFloat32, {k, m});
  Tensor dz(DType::kFloat32, {k, n});
  Tensor dw(DType::kFloat32, {m, n});
  for (float& v : x.values<float>()) v = rng.uniform(-1.0f, 1.0f);
  for (float& v : dz.values<float>()) v = rng.uniform(-1.0f, 1.0f);
  std::fill(dw.values<float>().begin(), dw.values<float>().end(), 0.0f);  // Pages mapped untimed.
  oneapi::tbb::task_arena arena(static_cast<int>(state.range(2)));
  arena.execute([&] {
    for (auto _ : state) {
      internal::gemm(true, false, m, n, k, x.data<float>(), dz.data<float>(), dw.data<float>(),
                     false, true);
      benchmark::ClobberMemory();
    }
  });
  internal::force_eigen_gemm(false);
  state.SetBytesProcessed(state.iterations() * m * n * int64_t{sizeof(float)});
  state.SetLabel(state.range(1) == 0 ? "eigen" : "tiles");
}
BENCHMARK(BM_GemmSmallK)
    ->ArgsProduct({{16, 32}, {0, 1}, {1, 2}})
    ->ArgNames({"k", "kernel", "threads"})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// The training split in memory as float32 [60000, 28, 28, 1] in [0, 1] and int64 labels, read once
// through the dataset library (untimed); nullopt when the dataset is not installed.
struct FashionMnistTrain {
  Tensor images;
  Tensor labels;
};

const std::optional<FashionMnistTrain>& fashion_mnist_train() {
  static const std::optional<FashionMnistTrain> data = []() -> std::optional<FashionMnistTrain> {
    try {
      std::optional<Element> all = fashion_mnist("train").batch(1 << 20).make_iterator().next();
      if (!all) return std::nullopt;
      const Tensor& pixels = (*all)["image"];
      FashionMnistTrain out{Tensor(DType::kFloat32, pixels.shape()), (*all)["label"]};
      const uint8_t* in = pixels.data<uint8_t>();
      float* x = out.images.data<float>();
      for (int64_t i = 0; i < pixels.num_elements(); ++i) x[i] = float(in[i]) / 255.0f;
      return out;
    } catch (const NotFound&) {
      return std::nullopt;
    }
  }();
  return data;
}

// One epoch as a training loop runs it: a seeded shuffle, then for each batch of 128 (the last one
// holds the remaining 96) gather the examples, forward, nll_loss, backward and an SGD step.
// Arguments: threads, the preset (0: fashion-cnn, the peer's model; 1: fashion-cnn-wide, the
// `sluice train` default).
void BM_FashionCnnEpoch(benchmark::State& state) {
  const char* preset = state.range(1) == 0 ? "fashion-cnn" : "fashion-cnn-wide";
  state.SetLabel(preset);
  const auto& data = fashion_mnist_train();
  if (!data) {
    state.SkipWithError("Fashion-MNIST is not installed (package dataset-fashion-mnist)");
    return;
  }
  const int64_t n = data->images.dim(0);
  const int64_t example = data->images.num_elements() / n;
  const int threads = static_cast<int>(state.range(0));
  oneapi::tbb::task_arena arena(threads);
  double flops_per_example = 0.0;
  double seconds = 0.0;
  arena.execute([&] {
    Sequential model = make_preset(preset, 1);
    flops_per_example = training_flops(model);
    SGD sgd({.learning_rate = 0.01f, .momentum = 0.5f});
    std::vector<int64_t> order(static_cast<size_t>(n));
    Random rng(7);
    for (auto _ : state) {
      const auto start = std::chrono::steady_clock::now();
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      double loss_sum = 0.0;
      for (int64_t begin = 0; begin < n; begin += kBatch) {
        const int64_t b = std::min(kBatch, n - begin);
        Tensor images(DType::kFloat32, {b, 28, 28, 1});
        Tensor labels(DType::kInt64, {b});
        for (int64_t i = 0; i < b; ++i) {
          const int64_t src = order[static_cast<size_t>(begin + i)];
          std::copy_n(data->images.data<float>() + src * example, example,
                      images.data<float>() + i * example);
          labels.data<int64_t>()[i] = data->labels.data<int64_t>()[src];
        }
        const Tensor log_probs = model.forward(images, true);
        const LossResult loss = nll_loss(labels, log_probs);
        model.backward(loss.gradient);
        sgd.apply_gradients(model.trainable_parameters());
        loss_sum += loss.loss * double(b);
      }
      state.counters["mean_loss"] = loss_sum / double(n);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  });
  state.counters["images_per_sec"] =
      benchmark::Counter(double(state.iterations() * n), benchmark::Counter::kIsRate);
  // The work done (the convolutions' and dense layers' multiply-adds) as a rate, and as a share of
  // the multiply-add peak measured right after on as many threads: the machine's clock moves from
  // one run to the next.
  const double gflop_per_sec =
      flops_per_example * double(n) * double(state.iterations()) / seconds / 1e9;
  const double peak = bench::fma_peak_gflops(internal::gemm_kernel_name(), threads, 1.0);
  state.counters["GFLOP_per_sec"] = gflop_per_sec;
  state.counters["peak_GFLOP_per_sec"] = peak;
  if (peak > 0.0) state.counters["of_peak"] = gflop_per_sec / peak;
}
BENCHMARK(BM_FashionCnnEpoch)
    ->ArgsProduct({{2}, {0, 1}})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace
}  // namespace sluice
