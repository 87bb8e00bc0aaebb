// The MPI program multi_worker_test.cc starts under mpirun: each process joins a
// MultiWorkerMirroredStrategy and prints what it sees, one fact a line ("key: value"), for the
// test to compare across workers. Modes:
//   collectives          cluster info, cross-worker sums and broadcast (as bit patterns), DATA
//                        auto-sharding of range(12).batch(4), the InputContext.
//   hang K | die K       worker 1 stops answering (sleeps) or exits abruptly before collective K;
//                        the others must fail with a clear error instead of waiting.
//   evaluate             an Estimator's evaluation of 37 examples on one process (every worker
//                        computes it alone) and sharded over the workers, each evaluating every
//                        num_workers-th example.
//   update               training with Adam and a regularized kernel large enough to be divided
//                        into shares: once with the update sharded (no hook reads gradients) and
//                        once whole (a hook fetches the gradient norm every step), each saving
//                        checkpoints every 2 steps, with one and with two replicas per worker,
//                        and with one replica and the workers' memory not shared; and one step
//                        of ReplicatedModel's own.
//   share                a large and a small tensor given to share_with_workers, then two rounds
//                        of a reduce-scatter and an all-gather of them; again with the memory
//                        not shared, and with worker 1 refused shared memory.
//   agree                training whose hooks decide differently on different workers: a saver
//                        by seconds whose clock runs ahead on worker 0 only, and a stop that
//                        worker 0 alone requests. Each worker prints its saves and last step.
//                        Then training again, with an input worker 1 makes 0.3 s late: each
//                        worker prints when its first step began, worker 1 when its input was
//                        ready.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/core/threads.h"
#include "sluice/dataset/dataset.h"
#include "sluice/estimator/basic_session_run_hooks.h"
#include "sluice/estimator/checkpoint.h"
#include "sluice/estimator/estimator.h"
#include "sluice/estimator/replicated_model.h"
#include "sluice/model/dense.h"
#include "sluice/model/flatten.h"
#include "sluice/strategy/multi_worker_mirrored_strategy.h"

namespace sluice {
namespace {

std::string bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  char text[16];
  std::snprintf(text, sizeof text, "%08x", u);
  return text;
}

std::string rows(const Tensor& t) {
  std::string out;
  for (int64_t v : t.values<int64_t>()) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

void collectives(MultiWorkerMirroredStrategy& strategy) {
  const int rank = strategy.worker_index();
  std::cout << "workers: " << strategy.num_workers() << "\n"
            << "replicas_in_sync: " << strategy.num_replicas_in_sync() << "\n"
            << "chief_count: " << (strategy.is_chief() ? 1 : 0) << "\n";
  // Values whose float sum depends on the order of addition, so a reduction that combined them
  // differently on different workers would show.
  Tensor t(DType::kFloat32, {4});
  auto v = t.values<float>();
  for (int i = 0; i < 4; ++i)
    v[i] = 0.1f * float(rank + 1) + 1e-7f * float(i) + 3.3e7f * (rank == 0);
  strategy.all_reduce_across_workers({&t});
  std::string sum;
  for (float x : v) sum += bits(x) + " ";
  std::cout << "float_sum: " << sum << "\n";
  std::vector<double> d{double(rank + 1), 0.5};
  strategy.all_reduce_across_workers(d);
  std::cout << "double_sum: " << d[0] << " " << d[1] << "\n";
  Tensor b(DType::kFloat32, {3});
  for (int i = 0; i < 3; ++i) b.values<float>()[i] = float(rank * 10 + i);
  strategy.broadcast_from_chief({&b});
  std::cout << "broadcast: " << b.values<float>()[0] << " " << b.values<float>()[1] << " "
            << b.values<float>()[2] << "\n";
  strategy.barrier();
  std::string shard;
  auto it =
      strategy.experimental_distribute_dataset(Dataset::range(12).batch(4), AutoShardPolicy::kData)
          .make_iterator();
  while (auto per_replica = it.next()) shard += "[" + rows((*per_replica)[0][0]) + "]";
  std::cout << "data_shard_" << rank << ": " << shard << "\n";
  strategy.distribute_datasets_from_function([&](const InputContext& context) {
    std::cout << "input_context_" << rank << ": " << context.num_input_pipelines() << " "
              << context.input_pipeline_id() << " " << context.num_replicas_in_sync() << "\n";
    return Dataset::range(1);
  });
}

// Each worker's value at element j of a tensor in `round`: distinct per worker, element and round.
float shared_value(int worker, int64_t j, int round) {
  return float(worker + 1) * 4096.0f + float(j % 4093) + 0.25f * float(round);
}

// share_with_workers on `strategy`: a tensor large enough to be divided moves, a small one stays.
// Then two rounds of new values, a reduce-scatter and an all-gather: the parts must be every other
// worker's values of this worker's share in that round, and the gathered tensor every worker's
// share of that round, however late a worker writes. Prints under `label` whether the tensor was
// shared, how many of its names are left, and each check's count of wrong values.
void share(const std::shared_ptr<MultiWorkerMirroredStrategy>& strategy, const std::string& label,
           bool worker_1_lacks_room = false) {
  const int rank = strategy->worker_index();
  const int workers = strategy->num_workers();
  const int64_t n = (int64_t{1} << 18) + 5;
  Tensor large(DType::kFloat32, {n});
  Tensor small(DType::kFloat32, {10});
  const float* small_data = small.data<float>();
  for (int64_t j = 0; j < n; ++j) large.data<float>()[j] = shared_value(rank, j, 0);
  // Worker 1's shared memory refused, as a full /dev/shm refuses it: files of more than 64 KiB
  // are refused to the process (EFBIG, with SIGXFSZ ignored).
  rlimit file_size{};
  getrlimit(RLIMIT_FSIZE, &file_size);
  const bool refuse = worker_1_lacks_room && rank == 1;
  if (refuse) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit small_files{64 << 10, file_size.rlim_max};
    setrlimit(RLIMIT_FSIZE, &small_files);
  }
  const bool moved = strategy->share_with_workers({&large, &small});
  if (refuse) setrlimit(RLIMIT_FSIZE, &file_size);
  // The segments' names ("/sluice-<the chief's process id>-…") are gone once it has returned on
  // every worker, whether they share or not: mapped, the memory needs no name, and none is left
  // on the host.
  Tensor chief_pid = Tensor::from_vector<int64_t>({int64_t{getpid()}});
  strategy->broadcast_from_chief({&chief_pid});
  strategy->barrier();
  const std::string names = "sluice-" + std::to_string(chief_pid.data<int64_t>()[0]) + "-";
  int names_left = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    names_left += entry.path().filename().string().rfind(names, 0) == 0;
  }
  int64_t changed = 0;
  for (int64_t j = 0; j < n; ++j) changed += large.data<float>()[j] != shared_value(rank, j, 0);
  std::cout << label << "shared: " << (moved ? "yes" : "no") << "\n"
            << label << "values_changed_by_the_move: " << changed << "\n"
            << label << "small_moved: " << (small.data<float>() != small_data) << "\n"
            << label << "names_left: " << names_left << "\n";
  // Every worker's share, for the owner of each element.
  const ElementRange mine = strategy->worker_share(n);
  std::vector<double> ends(static_cast<size_t>(workers), 0.0);
  ends[static_cast<size_t>(rank)] = double(mine.end);
  strategy->all_reduce_across_workers(ends);
  const auto owner = [&](int64_t j) {
    int w = 0;
    while (j >= int64_t(ends[static_cast<size_t>(w)])) ++w;
    return w;
  };
  for (int round = 1; round <= 2; ++round) {
    // Worker 1 writes the first round late: no worker may read its values before they are there.
    if (rank == 1 && round == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (int64_t j = 0; j < n; ++j) large.data<float>()[j] = shared_value(rank, j, round);
    // The large tensor alone: a small one's sum would bring the workers together by itself.
    const std::vector<WorkerParts<float>> parts = strategy->reduce_scatter_across_workers({&large});
    int64_t wrong_parts = 0;
    for (int r = 0; r < workers; ++r) {
      if (r == rank) continue;
      const float* theirs = parts[0][static_cast<size_t>(r)];
      for (int64_t j = mine.begin; j < mine.end; ++j) {
        wrong_parts += theirs[j - mine.begin] != shared_value(r, j, round);
      }
    }
    strategy->all_gather_across_workers({&large});
    int64_t wrong_gathered = 0;
    for (int64_t j = 0; j < n; ++j) {
      wrong_gathered += large.data<float>()[j] != shared_value(owner(j), j, round);
    }
    std::cout << label << "round_" << round << ": " << wrong_parts << " wrong parts, "
              << wrong_gathered << " wrong gathered\n";
  }
}

void stop_at(MultiWorkerMirroredStrategy& strategy, bool die, int k) {
  Tensor t(DType::kFloat32, {8});
  for (int step = 0;; ++step) {
    if (step == k && strategy.worker_index() == 1) {
      if (die) std::_Exit(3);
      std::this_thread::sleep_for(std::chrono::seconds(600));
    }
    strategy.all_reduce_across_workers({&t});
  }
}

// A directory of this process's own for its model directories, under the temporary folder.
std::string process_dir() {
  return (std::filesystem::temp_directory_path() / ("sluice-probe-" + std::to_string(::getpid())))
      .string();
}

// Example i: a 4×4×1 image of a ramp whose slope depends on i, labelled by its parity.
Dataset probe_examples() {
  return Dataset::range(37).map([](Element e) {
    const int64_t i = e[0].item<int64_t>();
    Tensor image(DType::kFloat32, Shape{4, 4, 1});
    float* p = image.data<float>();
    for (int k = 0; k < 16; ++k) p[k] = static_cast<float>((k * (i % 7) + i) % 11) / 11.0f;
    return Element{{"image", std::move(image)}, {"label", Tensor::scalar<int64_t>(i % 2)}};
  });
}

ModelSpec probe_spec() {
  auto model = [] {
    Sequential model("probe");
    model.add(Input({4, 4, 1}));
    model.add(std::make_unique<Flatten>());
    model.add(std::make_unique<Dense>(2));
    model.build(11);
    return model;
  };
  ModelSpec spec{model(),
                 Loss("sparse_categorical_crossentropy", /*from_logits=*/true),
                 std::make_unique<SGD>(SGDOptions{.learning_rate = 0.1f}),
                 {"accuracy"}};
  spec.model_fn = model;
  return spec;
}

void evaluate(const std::shared_ptr<Strategy>& strategy) {
  const std::string dir = process_dir();
  RunConfig config;
  config.model_dir = dir + "/single";
  const EvalResult single =
      Estimator(probe_spec(), config).evaluate([] { return probe_examples().batch(4); });
  config.model_dir = dir + "/sharded";
  config.eval_distribute = strategy;
  const int workers = strategy->num_workers();
  const int index = strategy->worker_index();
  const EvalResult sharded = Estimator(probe_spec(), config).evaluate([workers, index] {
    return probe_examples().shard(workers, index).batch(4);
  });
  std::filesystem::remove_all(dir);
  std::cout.precision(17);
  for (const char* key : {"loss", "accuracy"}) {
    std::cout << "single_" << key << ": " << single.at(key) << "\n"
              << "sharded_" << key << ": " << sharded.at(key) << "\n";
  }
}

// Example i: 640 features that depend on i, labelled i mod 3.
Dataset wide_examples() {
  return Dataset::range(48).map([](Element e) {
    const int64_t i = e[0].item<int64_t>();
    Tensor x(DType::kFloat32, Shape{640});
    float* p = x.data<float>();
    for (int k = 0; k < 640; ++k) p[k] = static_cast<float>((k * (i % 5 + 1) + i) % 13) / 13.0f;
    return Element{{"image", std::move(x)}, {"label", Tensor::scalar<int64_t>(i % 3)}};
  });
}

// A 640×512 kernel (327,680 weights: divided into shares) then a small head (every worker's whole),
// both with an L2 penalty.
ModelSpec wide_spec() {
  auto model = [] {
    Sequential model("wide");
    model.add(Input({640}));
    model.add(std::make_unique<Dense>(512, DenseOptions{.activation = ActivationFunction::kRelu,
                                                        .kernel_regularizer_l2 = 1e-3f}));
    model.add(std::make_unique<Dense>(3, DenseOptions{.kernel_regularizer_l2 = 1e-3f}));
    model.build(5);
    return model;
  };
  ModelSpec spec{model(),
                 Loss("sparse_categorical_crossentropy", /*from_logits=*/true),
                 std::make_unique<Adam>(AdamOptions{.learning_rate = 1e-3f}),
                 {}};
  spec.model_fn = model;
  return spec;
}

// Records every execution's loss; asks for the gradient norm when `read_gradients`.
class StepRecorder final : public SessionRunHook {
 public:
  explicit StepRecorder(bool read_gradients) : read_gradients_(read_gradients) {}
  SessionRunArgs before_run(SessionRunContext&) override {
    if (!read_gradients_) return {};
    return {.fetches = {"gradient_norm"}};
  }
  void after_run(SessionRunContext&, const SessionRunValues& values) override {
    char text[32];
    std::snprintf(text, sizeof text, "%a", values.loss);
    losses += std::string(losses.empty() ? "" : " ") + text;
  }
  std::string losses;

 private:
  bool read_gradients_;
};

// Trains wide_spec() on `strategy` sharded and whole, and prints under `label` each run's losses,
// how many tensors of the checkpoints at steps 2, 4 and 5 (weights, Adam's slots, iterations)
// differ between the two byte for byte, and whether every local replica ends with replica 0's
// weights.
void compare_updates(const std::shared_ptr<Strategy>& strategy, const std::string& label) {
  const int workers = strategy->num_workers();
  const int index = strategy->worker_index();
  const std::string dir = process_dir();
  strategy->barrier();
  for (const bool whole : {false, true}) {
    RunConfig config;
    config.model_dir = dir + (whole ? "/whole" : "/sharded");
    config.train_distribute = strategy;
    config.save_checkpoints_steps = 2;
    config.log_step_count_steps = 0;
    StepRecorder recorder(whole);
    Estimator estimator(wide_spec(), config);
    estimator.train([workers, index] { return wide_examples().shard(workers, index).batch(4); },
                    {&recorder}, /*steps=*/5);
    std::cout << label << (whole ? "whole" : "sharded") << "_losses: " << recorder.losses << "\n";
    ReplicatedModel& replicas = *estimator.train_replicas();
    int differing_replicas = 0;
    for (int r = 1; r < replicas.num_replicas(); ++r) {
      const std::vector<Parameter*> mine = replicas.model(r).trainable_parameters();
      const std::vector<Parameter*> first = replicas.model(0).trainable_parameters();
      for (size_t i = 0; i < mine.size(); ++i) {
        differing_replicas += std::memcmp(mine[i]->value.raw_data(), first[i]->value.raw_data(),
                                          first[i]->value.byte_size()) != 0;
      }
    }
    std::cout << label << (whole ? "whole" : "sharded") << "_replicas: " << replicas.num_replicas()
              << ", " << differing_replicas << " differing\n";
    std::cout << label << (whole ? "whole" : "sharded")
              << "_shared_gradients: " << (replicas.share_gradients_with_workers() ? "yes" : "no")
              << "\n";
  }
  if (strategy->is_chief()) {
    for (int step : {2, 4, 5}) {
      const std::string name = "/model.ckpt-" + std::to_string(step);
      // More workers have fewer batches each: their input may end before step 5.
      if (!std::filesystem::exists(dir + "/whole" + name)) continue;
      const TensorMap sharded = read_checkpoint_file(dir + "/sharded" + name);
      const TensorMap whole = read_checkpoint_file(dir + "/whole" + name);
      int differing = 0;
      for (const auto& [key, tensor] : whole) {
        const auto it = sharded.find(key);
        if (it == sharded.end() || it->second.byte_size() != tensor.byte_size() ||
            std::memcmp(it->second.raw_data(), tensor.raw_data(), tensor.byte_size()) != 0) {
          ++differing;
        }
      }
      std::cout << label << "checkpoint_" << step << ": " << whole.size() << " tensors, "
                << differing << " differing\n";
    }
  }
  strategy->barrier();
  std::filesystem::remove_all(dir);
}

void update(const std::shared_ptr<Strategy>& strategy) {
  const int workers = strategy->num_workers();
  const int index = strategy->worker_index();
  compare_updates(strategy, "");
  compare_updates(std::make_shared<MultiWorkerMirroredStrategy>(MultiWorkerOptions{
                      .local_replicas = 2, .threads = 1, .collective_timeout_seconds = 5}),
                  "two_replicas_");
  compare_updates(
      std::make_shared<MultiWorkerMirroredStrategy>(MultiWorkerOptions{
          .threads = 1, .collective_timeout_seconds = 5, .share_memory_on_one_host = false}),
      "exchanged_");

  // One step of ReplicatedModel's own: sharded only when every worker allows it, and then its
  // gradients are not to be read.
  for (const bool worker_1_allows : {true, false}) {
    ModelSpec spec = wide_spec();
    ReplicatedModel replicas(*strategy, spec.model, spec.model_fn);
    const Element batch = *wide_examples().shard(workers, index).batch(4).make_iterator().next();
    replicas.all_workers_have_input(int64_t{4}, index != 1 || worker_1_allows);
    replicas.train_step(batch, "image", "label", spec.loss, {});
    std::string gradients = "readable";
    try {
      replicas.finish_gradients();
    } catch (const FailedPrecondition&) {
      gradients = "refused";
    }
    replicas.apply_gradients(*spec.optimizer);
    std::cout << "gradients_when_worker_1_" << (worker_1_allows ? "allows" : "refuses") << ": "
              << gradients << "\n";
  }
}

// On one worker: sleeps `seconds` after step `sleep_step`, and requests a stop after `stop_step`.
class OneWorkersHook final : public SessionRunHook {
 public:
  OneWorkersHook(bool active, int64_t sleep_step, double seconds, int64_t stop_step)
      : active_(active), sleep_step_(sleep_step), seconds_(seconds), stop_step_(stop_step) {}
  void after_run(SessionRunContext& context, const SessionRunValues& values) override {
    if (!active_) return;
    if (values.global_step == sleep_step_) {
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds_));
    }
    if (values.global_step == stop_step_) context.request_stop();
  }

 private:
  bool active_;
  int64_t sleep_step_;
  double seconds_;
  int64_t stop_step_;
};

// The time its first step began, by the clock every process on the machine shares.
class FirstStepClock final : public SessionRunHook {
 public:
  SessionRunArgs before_run(SessionRunContext&) override {
    if (!started_) started_ = std::chrono::steady_clock::now().time_since_epoch().count();
    return {};
  }
  int64_t started() const { return started_.value_or(-1); }

 private:
  std::optional<int64_t> started_;
};

void agree(const std::shared_ptr<Strategy>& strategy) {
  const int workers = strategy->num_workers();
  const int index = strategy->worker_index();
  const std::string dir = process_dir();
  strategy->barrier();
  auto input = [workers, index] { return wide_examples().shard(workers, index).batch(4); };
  auto run = [&](const std::string& name, OneWorkersHook& hook) {
    RunConfig config;
    config.model_dir = dir + "/" + name;
    config.train_distribute = strategy;
    config.log_step_count_steps = 0;
    // Every 0.25 s by each process's clock. Worker 0's hook runs first: after sleeping 0.4 s at
    // step 3 its saver is due there, while worker 1's, which has not waited yet, is not.
    CheckpointSaverHook saver(nullptr, 0.25, std::nullopt);
    Estimator estimator(wide_spec(), config);
    estimator.train(input, {&hook, &saver}, /*steps=*/6);
    std::string saves;
    for (int64_t step : saver.saved_steps()) saves += " " + std::to_string(step);
    std::cout << name << "_saves_" << index << ":" << saves << "\n"
              << name << "_last_step_" << index << ": " << estimator.global_step() << "\n";
  };
  OneWorkersHook late_clock(index == 0, 3, 0.4, -1);
  run("timed", late_clock);
  OneWorkersHook stop(index == 0, -1, 0, 2);
  run("stopped", stop);

  // A second train() of the same Estimator (its replicas made, their weights shared, its
  // checkpoint current: no collective before the steps), whose input worker 1 takes 0.3 s longer
  // to make than worker 0.
  RunConfig config;
  config.model_dir = dir + "/late_input";
  config.train_distribute = strategy;
  config.log_step_count_steps = 0;
  FirstStepClock clock;
  Estimator estimator(wide_spec(), config);
  estimator.train(input, {}, /*steps=*/1);
  estimator.train(
      [&] {
        if (index == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          std::cout << "late_input_ready: "
                    << std::chrono::steady_clock::now().time_since_epoch().count() << "\n";
        }
        return input();
      },
      {&clock}, /*steps=*/2);
  std::cout << "first_step_" << index << ": " << clock.started() << "\n";
  strategy->barrier();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  // The process's thread budget (all cores): what its pipelines and strategies take.
  const sluice::ThreadBudget budget;
  using namespace sluice;
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    auto shared = std::make_shared<MultiWorkerMirroredStrategy>(
        MultiWorkerOptions{.threads = 1, .collective_timeout_seconds = 5});
    MultiWorkerMirroredStrategy& strategy = *shared;
    if (mode == "evaluate") {
      evaluate(shared);
    } else if (mode == "update") {
      update(shared);
    } else if (mode == "share") {
      share(shared, "");
      share(std::make_shared<MultiWorkerMirroredStrategy>(MultiWorkerOptions{
                .threads = 1, .collective_timeout_seconds = 5, .share_memory_on_one_host = false}),
            "exchanged_");
      share(shared, "no_room_", /*worker_1_lacks_room=*/true);
    } else if (mode == "agree") {
      agree(shared);
    } else if (mode == "collectives") {
      collectives(strategy);
    } else if ((mode == "hang" || mode == "die") && argc > 2) {
      stop_at(strategy, mode == "die", std::atoi(argv[2]));
    } else {
      std::cerr
          << "usage: multi_worker_probe collectives | hang K | die K | evaluate | update | share | "
             "agree\n";
      return 2;
    }
  } catch (const Error& e) {
    // One write: mpirun forwards each worker's stderr in the pieces it was written in, and may
    // print its own abort banner between two of them.
    const std::string line = str_cat("error: ", error_code_name(e.code()), ": ", e.what(), "\n");
    std::cerr << line;
    return 1;
  }
  return 0;
}
