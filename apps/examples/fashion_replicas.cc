// Fashion-MNIST on 8 replicas, as the PyTorch/XLA tutorial trains it on 8 TPU cores: every replica
// reads its own shard of each epoch through DistributedSampler(num_replicas, rank), computes its
// gradients, all-reduces them with the others and takes the same SGD step (learning rate scaled
// by the replica count, as the tutorial does). After each epoch the replicas evaluate their shard
// of the test set and the accuracies are summed; at the end a 5×5 grid of test predictions is
// drawn to a PNG.
//
//   fashion_replicas --replicas 8 --batch 128 --epochs 3 --grid predictions.png
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "apps/examples/run_example.h"
#include "apps/prediction_grid.h"
#include "sluice/core/random.h"
#include "sluice/core/threads.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/idx_dataset.h"
#include "sluice/formats/idx.h"
#include "sluice/model/losses.h"
#include "sluice/model/optimizers.h"
#include "sluice/model/presets.h"
#include "sluice/ops/convert.h"
#include "sluice/strategy/distributed_sampler.h"
#include "sluice/strategy/mirrored_strategy.h"

using namespace sluice;

struct Flags {
  std::string data{kFashionMnistDir};
  int replicas = 8;
  int64_t batch = 128;  // Per replica, as the tutorial's batch_size.
  int64_t epochs = 3;
  double lr = 0.01;  // Per replica; the optimizer uses lr × replicas.
  double momentum = 0.5;
  std::string grid = "fashion_predictions.png";
  uint64_t seed = 1;
};

// One split of Fashion-MNIST in memory, for the samplers to pick examples from by index.
struct Split {
  Tensor images;  // uint8 [n, 28, 28, 1]
  Tensor labels;  // uint8 [n]
  int64_t size() const { return labels.dim(0); }
};

Split read_split(const std::string& split, const std::string& dir) {
  const auto [images_path, labels_path] = fashion_mnist_files(split, dir);
  const Tensor images = read_idx(images_path, 0x803);
  return {images.reshape(Shape{images.dim(0), images.dim(1), images.dim(2), 1}),
          read_idx(labels_path, 0x801)};
}

// Replica `rank`'s examples of an epoch, as torch.utils.data.DistributedSampler(dataset,
// num_replicas, rank, shuffle, seed) with set_epoch(epoch) gives them: the library's sampler
// picks the indices, and each element views its image in the split (no copy).
Dataset sampled(const Split& split, int num_replicas, int rank, bool shuffle, uint64_t seed,
                int64_t epoch) {
  DistributedSampler sampler(split.size(), num_replicas, rank, shuffle, seed);
  sampler.set_epoch(epoch);
  return Dataset::from_tensor_slices(Element{Tensor::from_vector(sampler.indices())})
      .map([split](const Tensor& index) {
        const int64_t i = index.item<int64_t>();
        return Element{{"image", split.images.select(i)},
                       {"label", Tensor::scalar<int64_t>(split.labels.values<uint8_t>()[i])}};
      });
}

// uint8 pixels -> float32 in [0, 1] (the tutorial's ToTensor).
Element to_float(Element batch) {
  batch["image"] = convert_image_dtype(batch["image"], DType::kFloat32);
  return batch;
}

// The per-replica batches of one epoch: distribute_datasets_from_function deals the elements of
// the dataset to replicas 0, 1, ..., n-1 in turn, so interleaving the n samplers' batches one
// by one gives replica r exactly its sampler's batches.
DistributedDataset epoch_input(Strategy& strategy, const Split& examples, int64_t global_batch,
                               bool shuffle, uint64_t seed, int64_t epoch) {
  return strategy.distribute_datasets_from_function([&](const InputContext& context) {
    const int replicas = context.num_replicas_in_sync();
    const int64_t batch = context.get_per_replica_batch_size(global_batch);
    return Dataset::range(replicas).interleave(
        [=](const Tensor& rank) {
          return sampled(examples, replicas, static_cast<int>(rank.item<int64_t>()), shuffle, seed,
                         epoch)
              .batch(batch)
              .map(to_float);
        },
        {.cycle_length = replicas, .block_length = 1});
  });
}

// The class each row of a [batch, classes] output predicts.
int64_t argmax_row(const Tensor& output, int64_t row) {
  const int64_t classes = output.dim(1);
  const float* v = output.data<float>() + row * classes;
  int64_t best = 0;
  for (int64_t c = 1; c < classes; ++c) best = v[c] > v[best] ? c : best;
  return best;
}

void run(const Flags& flags) {
  // The examples stay uint8 in memory until batched; the samplers only pick indices.
  const Split train = read_split("train", flags.data);
  const Split test = read_split("test", flags.data);

  MirroredStrategy strategy(flags.replicas);
  const int n = strategy.num_replicas_in_sync();
  const int64_t global_batch = flags.batch * n;

  // One model and one optimizer per replica, all starting from the same weights (same seed):
  // each replica applies the same all-reduced gradients, so they stay identical.
  std::vector<Sequential> models;
  std::vector<std::unique_ptr<Optimizer>> optimizers;
  const float lr = static_cast<float>(flags.lr * n);  // lr scaled by the replica count.
  for (int r = 0; r < n; ++r) {
    models.push_back(make_preset("fashion-cnn", flags.seed));
    optimizers.push_back(std::make_unique<SGD>(
        SGDOptions{.learning_rate = lr, .momentum = static_cast<float>(flags.momentum)}));
  }
  const Loss nll_loss("nll_loss");
  std::printf(
      "Training fashion-cnn on %d replicas: %lld examples, batch %lld per replica, "
      "lr %g\n",
      n, static_cast<long long>(train.size()), static_cast<long long>(flags.batch), lr);

  // One training step on one replica: forward, loss over the GLOBAL batch, backward, all-reduce
  // of the gradients, optimizer step. Returns the replica's summed loss.
  auto train_step = [&](ReplicaContext& context, const Element& batch) -> std::vector<Tensor> {
    const int r = context.replica_id_in_sync_group();
    Sequential& model = models[static_cast<size_t>(r)];
    const Tensor& images = batch["image"];
    const int64_t rows = images.dim(0);
    const Tensor output = model.forward(images, /*training=*/true);
    const LossResult loss = nll_loss(batch["label"], output, rows * n);
    model.backward(loss.gradient);
    std::vector<Parameter*> parameters = model.trainable_parameters();
    std::vector<Tensor> gradients;
    for (Parameter* p : parameters) gradients.push_back(p->gradient);
    const std::vector<Tensor> summed = context.all_reduce(ReduceOp::kSum, gradients);
    for (size_t i = 0; i < parameters.size(); ++i) {
      const auto sum = summed[i].values<float>();  // Shared by all replicas: read-only.
      std::copy(sum.begin(), sum.end(), parameters[i]->gradient.data<float>());
    }
    optimizers[static_cast<size_t>(r)]->apply_gradients(parameters);
    return {Tensor::scalar(loss.loss)};
  };
  // One evaluation step on one replica: {correct predictions, examples}.
  auto test_step = [&](ReplicaContext& context, const Element& batch) -> std::vector<Tensor> {
    Sequential& model = models[static_cast<size_t>(context.replica_id_in_sync_group())];
    const Tensor output = model.forward(batch["image"], /*training=*/false);
    const auto labels = batch["label"].values<int64_t>();
    float correct = 0;
    for (int64_t i = 0; i < output.dim(0); ++i) correct += argmax_row(output, i) == labels[i];
    return {Tensor::scalar(correct), Tensor::scalar(static_cast<float>(output.dim(0)))};
  };

  double accuracy = 0;
  for (int64_t epoch = 1; epoch <= flags.epochs; ++epoch) {
    // set_epoch(epoch): a new order every epoch, the same for every replica.
    DistributedIterator it =
        epoch_input(strategy, train, global_batch, /*shuffle=*/true, flags.seed, epoch)
            .make_iterator();
    double loss_sum = 0;
    int64_t steps = 0;
    while (auto per_replica = it.next()) {
      const PerReplica<std::vector<Tensor>> losses = strategy.run(train_step, *per_replica);
      loss_sum += strategy.reduce(ReduceOp::kSum, losses)[0].item<float>();
      ++steps;
    }
    DistributedIterator test_it =
        epoch_input(strategy, test, global_batch, /*shuffle=*/false, 0, 0).make_iterator();
    double correct = 0, examples = 0;
    while (auto per_replica = test_it.next()) {
      const std::vector<Tensor> sums =
          strategy.reduce(ReduceOp::kSum, strategy.run(test_step, *per_replica));
      correct += sums[0].item<float>();
      examples += sums[1].item<float>();
    }
    accuracy = examples > 0 ? correct / examples : 0;
    std::printf("Epoch %lld/%lld: %lld steps, loss %.4f, test accuracy %.2f%%\n",
                static_cast<long long>(epoch), static_cast<long long>(flags.epochs),
                static_cast<long long>(steps), steps > 0 ? loss_sum / double(steps) : 0.0,
                100.0 * accuracy);
  }

  // The tutorial's plot: the first 25 test images titled actual/predicted, with replica 0's
  // model (all replicas hold the same weights).
  app::PredictionGrid grid;
  constexpr int64_t kCells = app::PredictionGrid::kSize * app::PredictionGrid::kSize;
  for (const Element& batch :
       sampled(test, 1, 0, /*shuffle=*/false, 0, 0).batch(kCells).take(1).map(to_float)) {
    const Tensor output = models[0].predict(batch["image"]);
    for (int64_t i = 0; i < output.dim(0); ++i) {
      grid.add(batch["image"].select(i), batch["label"].values<int64_t>()[i],
               argmax_row(output, i));
    }
  }
  grid.write_png(flags.grid);
  std::printf("prediction grid written to %s (titles: actual/predicted)\n", flags.grid.c_str());
  std::printf("replicas=%d epochs=%lld lr=%g test_accuracy=%.4f\n", n,
              static_cast<long long>(flags.epochs), lr, accuracy);
}

int main(int argc, char** argv) {
  // The process's thread budget (all cores): what its pipelines and strategies take. This thread
  // trains, so it is one of them.
  const sluice::ThreadBudget budget(0, sluice::ThreadBudget::Caller::kComputes);
  Flags flags;
  CLI::App app{"Fashion-MNIST on N replicas with DistributedSampler sharding"};
  app.option_defaults()->always_capture_default();
  app.add_option("--data", flags.data, "folder of the Fashion-MNIST IDX files (.gz)");
  app.add_option("--replicas", flags.replicas, "replicas in sync")->check(CLI::PositiveNumber);
  app.add_option("--batch", flags.batch, "batch size per replica")->check(CLI::PositiveNumber);
  app.add_option("--epochs", flags.epochs, "epochs")->check(CLI::PositiveNumber);
  app.add_option("--lr", flags.lr, "learning rate per replica")->check(CLI::PositiveNumber);
  app.add_option("--momentum", flags.momentum, "SGD momentum");
  app.add_option("--grid", flags.grid, "where to write the 5x5 prediction grid PNG");
  app.add_option("--seed", flags.seed, "seed of the weights and of the shuffles");
  CLI11_PARSE(app, argc, argv);
  return sluice::examples::run_example([&] { run(flags); });
}
