// A custom training loop under a strategy, as TensorFlow's TPU guide writes it: the dataset is
// distributed across the replicas, strategy.run(step_fn) runs one step on every replica (forward,
// loss averaged over the global batch, backward, gradients all-reduced through the
// ReplicaContext, optimizer step), and then train_multiple_steps runs K steps per call, the
// guide's steps_per_execution: the host hands the replicas K batches at once and they loop on
// their own, meeting only in the all-reduces.
//
// The defaults are sized for a CPU (a minute or less): 32 filters, global batch 128, 20 steps per
// loop. The guide's own sizes, a whole epoch of its 256-filter model, take hours on a CPU:
//
//   tpu_custom_loop --tpu local:8 --filters 256 --batch 1024 --steps 0 --steps-per-execution 8
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "apps/examples/run_example.h"
#include "sluice/core/errors.h"
#include "sluice/core/threads.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/idx_dataset.h"
#include "sluice/model/conv2d.h"
#include "sluice/model/dense.h"
#include "sluice/model/flatten.h"
#include "sluice/model/losses.h"
#include "sluice/model/optimizers.h"
#include "sluice/model/sequential.h"
#include "sluice/ops/convert.h"
#include "sluice/strategy/tpu_cluster_resolver.h"
#include "sluice/strategy/tpu_strategy.h"

using namespace sluice;

struct Flags {
  std::string data{kFashionMnistDir};
  std::string tpu;       // TPUClusterResolver address: "" (TPU_NAME, else local), "local:N", ...
  int64_t filters = 32;  // Of each convolution; the guide's model has 256.
  int64_t batch = 128;   // Global.
  int64_t epochs = 1;
  int64_t steps_per_execution = 8;
  int64_t steps = 20;  // Steps per epoch; 0: the whole training set.
  uint64_t seed = 0;
};

// The guide's create_model(): two 3×3 convolutions, two hidden dense layers and logits, every
// kernel with an L2(1e-5) regularizer; `filters` per convolution (the guide's 256).
Sequential create_model(int64_t filters, uint64_t seed) {
  constexpr float kL2 = 1e-5f;
  using AF = ActivationFunction;
  Sequential model("tpu-guide-cnn");
  model.add(Input({28, 28, 1}));
  for (int i = 0; i < 2; ++i) {
    model.add(std::make_unique<Conv2D>(
        filters, 3, Conv2DOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  }
  model.add(std::make_unique<Flatten>());
  for (int64_t units : {256, 128}) {
    model.add(std::make_unique<Dense>(
        units, DenseOptions{.activation = AF::kRelu, .kernel_regularizer_l2 = kL2}));
  }
  model.add(std::make_unique<Dense>(10, DenseOptions{.kernel_regularizer_l2 = kL2}));
  model.build(seed);
  return model;
}

void run(const Flags& flags) {
  // The guide's get_dataset: shuffled, repeated, batched with drop_remainder so every step has
  // the full static global batch a TPU requires.
  const Dataset train = fashion_mnist("train", flags.data);
  int64_t steps_per_epoch = train.cardinality() / flags.batch;
  if (flags.steps > 0) steps_per_epoch = std::min(steps_per_epoch, flags.steps);
  if (steps_per_epoch == 0) {
    throw InvalidArgument("--batch " + std::to_string(flags.batch) + " is larger than the " +
                          std::to_string(train.cardinality()) + " training examples");
  }
  const Dataset dataset = train
                              .map([](Element e) {
                                e["image"] = convert_image_dtype(e["image"], DType::kFloat32);
                                return e;
                              })
                              .shuffle(10000, flags.seed)
                              .repeat()
                              .batch(flags.batch, /*drop_remainder=*/true)
                              .prefetch(kAutotune);

  // resolver = TPUClusterResolver(tpu=''); strategy = TPUStrategy(resolver). The resolved
  // system's cores run as replicas on this host's CPU (no TPU hardware is attached), and the
  // strategy checks what a TPU requires of the dataset: a static, divisible global batch.
  const TPUClusterResolver resolver(flags.tpu);
  TPUStrategy strategy(resolver);
  const int n = strategy.num_replicas_in_sync();
  std::printf("Distribution: %s, %d replicas in sync\n", std::string(strategy.name()).c_str(), n);
  std::printf("Training the guide's CNN (%lld filters) for %lld steps of %lld images per loop\n",
              static_cast<long long>(flags.filters),
              static_cast<long long>(flags.epochs * steps_per_epoch),
              static_cast<long long>(flags.batch));

  // with strategy.scope(): model, optimizer and metrics — one copy per replica. Every copy
  // starts from the same weights and applies the same all-reduced gradients, so they stay equal.
  std::vector<Sequential> models;
  std::vector<std::unique_ptr<Optimizer>> optimizers;
  std::vector<double> loss_sums(static_cast<size_t>(n)), correct(static_cast<size_t>(n));
  std::vector<int64_t> examples(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    models.push_back(create_model(flags.filters, flags.seed));
    optimizers.push_back(std::make_unique<Adam>());
  }

  // step_fn: what one replica does with its share of one global batch.
  auto step_fn = [&](ReplicaContext& context, const Element& inputs) {
    const size_t r = static_cast<size_t>(context.replica_id_in_sync_group());
    Sequential& model = models[r];
    const Tensor& images = inputs["image"];
    const Tensor& labels = inputs["label"];
    const Tensor logits = model.forward(images, /*training=*/true);
    // per_example_loss = sparse_categorical_crossentropy(labels, logits, from_logits=True)
    // loss = tf.nn.compute_average_loss(per_example_loss): divided by the GLOBAL batch, so
    // the gradients summed over replicas are the gradient of the global mean.
    const LossResult loss =
        sparse_categorical_crossentropy(labels, logits, /*from_logits=*/true, images.dim(0) * n);
    model.backward(loss.gradient);
    // loss += scale_regularization_loss(model.losses): the L2 terms, split over the replicas.
    std::vector<Parameter*> parameters = model.trainable_parameters();
    add_regularization_gradients(parameters, 1.0f / static_cast<float>(n));
    // The gradients all-reduced through the replica context, then applied by every replica.
    std::vector<Tensor> gradients;
    for (Parameter* p : parameters) gradients.push_back(p->gradient);
    const std::vector<Tensor> summed = context.all_reduce(ReduceOp::kSum, gradients);
    for (size_t i = 0; i < parameters.size(); ++i) {
      const auto sum = summed[i].values<float>();  // Shared by all replicas: read-only.
      std::copy(sum.begin(), sum.end(), parameters[i]->gradient.data<float>());
    }
    optimizers[r]->apply_gradients(parameters);
    // training_loss and training_accuracy: the replica's share of the global mean loss (summed
    // over the replicas it is the global batch's mean) and its correct predictions.
    loss_sums[r] += static_cast<double>(loss.loss);
    const int64_t classes = logits.dim(1);
    const auto label_values = labels.values<int64_t>();
    for (int64_t i = 0; i < logits.dim(0); ++i) {
      const float* row = logits.data<float>() + i * classes;
      correct[r] += std::max_element(row, row + classes) - row == label_values[i];
    }
    examples[r] += logits.dim(0);
  };

  DistributedIterator iterator = strategy.experimental_distribute_dataset(dataset).make_iterator();
  // train_step(iterator): strategy.run(step_fn, args=(next(iterator),)) — one host round trip
  // per step.
  auto train_step = [&] {
    strategy.run(
        [&](ReplicaContext& context, const Element& inputs) {
          step_fn(context, inputs);
          return std::vector<Tensor>{};
        },
        *iterator.next());
  };
  // train_multiple_steps(iterator, steps): the host fetches `steps` per-replica batches and makes
  // ONE strategy.run in which every replica loops over them, as a tf.function looping over
  // tf.range(steps) runs on the TPU without coming back to the host.
  auto train_multiple_steps = [&](int64_t steps) {
    std::vector<PerReplica<Element>> batches;
    for (int64_t i = 0; i < steps; ++i) batches.push_back(*iterator.next());
    strategy.run([&](ReplicaContext& context) {
      for (const PerReplica<Element>& batch : batches) {
        step_fn(context, batch[static_cast<size_t>(context.replica_id_in_sync_group())]);
      }
      return std::vector<Tensor>{};
    });
  };
  // The metrics summed over replicas, then reset (a new epoch).
  auto report = [&](const char* what, int64_t epoch, double seconds) {
    double loss = 0, right = 0, seen = 0;
    for (size_t r = 0; r < loss_sums.size(); ++r) {
      loss += loss_sums[r], right += correct[r], seen += static_cast<double>(examples[r]);
      loss_sums[r] = correct[r] = 0, examples[r] = 0;
    }
    const double steps = seen / static_cast<double>(flags.batch);
    std::printf("%s epoch %lld: loss %.4f, accuracy %.2f%%, %.0f images/s\n", what,
                static_cast<long long>(epoch), steps > 0 ? loss / steps : 0.0,
                seen > 0 ? 100.0 * right / seen : 0.0, seconds > 0 ? seen / seconds : 0.0);
    return seconds > 0 ? seen / seconds : 0.0;
  };

  using Clock = std::chrono::steady_clock;
  // A progress line about every tenth of an epoch, so a long run shows it is alive.
  const int64_t log_every = std::max<int64_t>(1, steps_per_epoch / 10);
  auto progress = [&](const char* what, int64_t done, Clock::time_point start) {
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("%s %lld/%lld steps, %.0f images/s\n", what, static_cast<long long>(done),
                static_cast<long long>(steps_per_epoch),
                seconds > 0 ? static_cast<double>(done * flags.batch) / seconds : 0.0);
  };
  double one_step_rate = 0, multi_step_rate = 0;
  for (int64_t epoch = 1; epoch <= flags.epochs; ++epoch) {
    const auto start = Clock::now();
    for (int64_t step = 0; step < steps_per_epoch; ++step) {
      train_step();
      if ((step + 1) % log_every == 0) progress("  train_step:", step + 1, start);
    }
    one_step_rate =
        report("train_step:", epoch, std::chrono::duration<double>(Clock::now() - start).count());
  }
  // The same number of steps again, K per call (the last call takes what is left).
  for (int64_t epoch = 1; epoch <= flags.epochs; ++epoch) {
    const auto start = Clock::now();
    for (int64_t step = 0; step < steps_per_epoch;) {
      const int64_t steps = std::min(flags.steps_per_execution, steps_per_epoch - step);
      train_multiple_steps(steps);
      if ((step + steps) / log_every > step / log_every) {
        progress("  train_multiple_steps:", step + steps, start);
      }
      step += steps;
    }
    multi_step_rate = report("train_multiple_steps:", epoch,
                             std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::printf(
      "replicas=%d steps=%lld steps_per_execution=%lld images_per_sec_one_step=%.0f "
      "images_per_sec_multi_step=%.0f\n",
      n, static_cast<long long>(2 * flags.epochs * steps_per_epoch),
      static_cast<long long>(flags.steps_per_execution), one_step_rate, multi_step_rate);
}

int main(int argc, char** argv) {
  // The process's thread budget (all cores): what its pipelines and strategies take. This thread
  // trains, so it is one of them.
  const sluice::ThreadBudget budget(0, sluice::ThreadBudget::Caller::kComputes);
  Flags flags;
  CLI::App app{
      "The TPU guide's custom training loop: strategy.run(step_fn), then "
      "train_multiple_steps with steps_per_execution"};
  app.option_defaults()->always_capture_default();
  app.add_option("--data", flags.data, "folder of the Fashion-MNIST IDX files (.gz)");
  app.add_option("--tpu", flags.tpu,
                 "TPU address: local, local:N (N cores), grpc://...; empty: $TPU_NAME, else local "
                 "(8 cores)");
  app.add_option("--filters", flags.filters, "filters of each convolution (the guide: 256)")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", flags.batch, "global batch size (the guide: 1024)")
      ->check(CLI::PositiveNumber);
  app.add_option("--epochs", flags.epochs, "epochs of each loop")->check(CLI::PositiveNumber);
  app.add_option("--steps-per-execution", flags.steps_per_execution, "steps per strategy.run")
      ->check(CLI::PositiveNumber);
  app.add_option("--steps", flags.steps, "steps per epoch; 0: the whole training set")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", flags.seed, "seed of the weights and of the shuffle");
  CLI11_PARSE(app, argc, argv);
  return sluice::examples::run_example([&] { run(flags); });
}
