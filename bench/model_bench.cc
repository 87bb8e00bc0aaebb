// Google Benchmark of the model library: one fashion-cnn training step (forward in training mode,
// nll_loss, backward, SGD with momentum) at batch 128 inside a 2-thread oneTBB arena, the budget
// PyTorch gets in bench/peers/pytorch_fashion_cnn.py. Also the forward pass alone (inference).
#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>

#include "model/losses.h"
#include "model/optimizers.h"
#include "model/presets.h"

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

void BM_FashionCnnTrainStep(benchmark::State& state) {
  tbb::task_arena arena(static_cast<int>(state.range(0)));
  arena.execute([&] {
    Sequential model = make_preset("fashion-cnn", 1);
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
}
BENCHMARK(BM_FashionCnnTrainStep)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FashionCnnPredict(benchmark::State& state) {
  tbb::task_arena arena(static_cast<int>(state.range(0)));
  arena.execute([&] {
    Sequential model = make_preset("fashion-cnn", 1);
    const FashionBatch batch;
    for (auto _ : state) benchmark::DoNotOptimize(model.predict(batch.images));
  });
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_FashionCnnPredict)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sluice

BENCHMARK_MAIN();
