// The Estimator's checkpoints: what a training state holds and how it is saved and restored.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/estimator/estimator.h"
#include "sluice/estimator/replicated_model.h"
#include "sluice/strategy/strategy.h"

namespace sluice {
namespace {

constexpr char kInputState[] = "input/state";
constexpr char kInputWorkers[] = "input/workers";

std::string worker_input_key(int64_t worker) { return str_cat("input/worker_", worker, "/state"); }

// Checkpoints hold numbers: a blob goes in as its bytes.
Tensor bytes_tensor(std::string_view bytes) {
  Tensor tensor(DType::kUInt8, Shape{static_cast<int64_t>(bytes.size())});
  std::memcpy(tensor.raw_data(), bytes.data(), bytes.size());
  return tensor;
}

std::string tensor_bytes(const Tensor& tensor) {
  return std::string(static_cast<const char*>(tensor.raw_data()),
                     static_cast<size_t>(tensor.byte_size()));
}

// Every worker's input position, on every worker (a collective all of them call): each puts its
// bytes in its own slice of a tensor of zeros, and the all-reduce's sum of the tensors is their
// concatenation (a byte as a float32 adds to zeros exactly). Empty when a worker's input cannot
// save its position.
std::vector<std::string> gather_input_positions(Strategy& strategy,
                                                const std::optional<std::string>& mine) {
  const int workers = strategy.num_workers();
  const int index = strategy.worker_index();
  std::vector<double> sizes(static_cast<size_t>(workers) + 1, 0.0);
  sizes[static_cast<size_t>(index)] = mine ? static_cast<double>(mine->size()) : 0.0;
  sizes.back() = mine ? 0.0 : 1.0;  // Workers without a position.
  strategy.all_reduce_across_workers(sizes);
  if (sizes.back() > 0) return {};
  std::vector<int64_t> offsets{0};
  for (int w = 0; w < workers; ++w)
    offsets.push_back(offsets.back() + static_cast<int64_t>(sizes[w]));
  Tensor all(DType::kFloat32, Shape{offsets.back()});
  float* values = all.data<float>();
  for (size_t i = 0; i < mine->size(); ++i) {
    values[offsets[index] + static_cast<int64_t>(i)] = static_cast<unsigned char>((*mine)[i]);
  }
  strategy.all_reduce_across_workers({&all});
  std::vector<std::string> positions;
  for (int w = 0; w < workers; ++w) {
    std::string bytes(static_cast<size_t>(offsets[w + 1] - offsets[w]), '\0');
    for (size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>(
          static_cast<unsigned char>(values[offsets[w] + static_cast<int64_t>(i)]));
    }
    positions.push_back(std::move(bytes));
  }
  return positions;
}

}  // namespace

std::optional<std::string> saved_input_position(const TensorMap& checkpoint, int num_workers,
                                                int worker_index) {
  const auto workers = checkpoint.find(kInputWorkers);
  const int64_t saved_by = workers == checkpoint.end() ? (checkpoint.count(kInputState) ? 1 : 0)
                                                       : workers->second.item<int64_t>();
  if (saved_by == 0) return std::nullopt;
  if (saved_by != num_workers) {
    throw FailedPrecondition(str_cat(
        "the checkpoint holds the input positions of ", saved_by, " worker(s) and this run has ",
        num_workers, ": resume with ", saved_by,
        " worker(s), whose shares of the input they continue, or train into a new model_dir"));
  }
  const auto position =
      checkpoint.find(num_workers == 1 ? std::string(kInputState) : worker_input_key(worker_index));
  if (position == checkpoint.end() || position->second.dtype() != DType::kUInt8) {
    throw DataLoss(str_cat("the checkpoint's input position of worker ", worker_index,
                           " is missing or not bytes"));
  }
  return tensor_bytes(position->second);
}

TensorMap Estimator::state() const {
  TensorMap state = shared_state();
  for (auto& [key, tensor] : state) tensor = tensor.clone();
  return state;
}

TensorMap Estimator::shared_state() const {
  TensorMap state;
  state.emplace("global_step", Tensor::scalar<int64_t>(global_step_));
  state.emplace("rng/seed",
                Tensor::scalar<int64_t>(static_cast<int64_t>(config_.tf_random_seed.value_or(0))));
  // Statistics of mirrored replicas are saved as their mean (Keras' ON_READ / MEAN variables).
  std::map<std::string, Tensor> statistics;
  if (train_replicas_) statistics = train_replicas_->mean_statistics();
  for (const Parameter* p : spec_.model.parameters()) {
    auto mean = statistics.find(p->path);
    state.emplace("model/" + p->path, mean != statistics.end() ? mean->second : p->value);
  }
  if (train_replicas_) state.merge(train_replicas_->replica_statistics());
  // The input's position, so that a resumed run reads on exactly where this one stood (several
  // workers' positions are gathered by save_checkpoint).
  const bool one_worker = !config_.train_distribute || config_.train_distribute->num_workers() == 1;
  if (training_input_ && one_worker) {
    if (const auto position = training_input_->save_state()) {
      state.emplace(kInputState, bytes_tensor(*position));
    }
  }
  for (auto& [key, tensor] : spec_.optimizer->shared_state()) {
    state.emplace("optimizer/" + key, std::move(tensor));
  }
  const Sequential& model = spec_.model;
  for (size_t i = 0; i < model.num_layers(); ++i) {
    if (const auto random = model.layer(i).random_state()) {
      state.emplace("rng/" + model.layer(i).name(),
                    Tensor::scalar<int64_t>(static_cast<int64_t>(*random)));
    }
  }
  return state;
}

void Estimator::load_state(const TensorMap& state) { load_state(state, /*take_slots=*/false); }

void Estimator::load_state(const TensorMap& state, bool take_slots) {
  auto find = [&](const std::string& key) -> const Tensor& {
    auto it = state.find(key);
    if (it == state.end()) throw NotFound("checkpoint has no tensor '" + key + "'");
    return it->second;
  };
  // Check everything before changing anything, so a bad checkpoint leaves the model intact.
  const std::vector<Parameter*> parameters = spec_.model.parameters();
  for (const Parameter* p : parameters) {
    const Tensor& t = find("model/" + p->path);
    if (t.dtype() != p->value.dtype() || t.shape() != p->value.shape()) {
      throw InvalidArgument(
          "checkpoint tensor 'model/" + p->path + "' is " + std::string(dtype_name(t.dtype())) +
          t.shape().to_string() + " but the model's parameter is " +
          std::string(dtype_name(p->value.dtype())) + p->value.shape().to_string());
    }
  }
  const Tensor& step = find("global_step");
  std::map<std::string, Tensor> optimizer_state;
  for (const auto& [key, tensor] : state) {
    if (key.rfind("optimizer/", 0) == 0) optimizer_state.emplace(key.substr(10), tensor);
  }
  // Copy into the existing buffers: layers may hold views of their parameters.
  for (Parameter* p : parameters) {
    std::memcpy(p->value.raw_data(), find("model/" + p->path).raw_data(), p->value.byte_size());
  }
  if (take_slots) {
    spec_.optimizer->take_state(std::move(optimizer_state));
  } else {
    spec_.optimizer->load_state(optimizer_state);
  }
  global_step_ = step.item<int64_t>();
  // Random layers continue their streams where the checkpoint left them (absent in checkpoints
  // of models without such layers).
  for (size_t i = 0; i < spec_.model.num_layers(); ++i) {
    Layer& layer = spec_.model.layer(i);
    auto it = state.find("rng/" + layer.name());
    if (layer.random_state() && it != state.end()) {
      layer.set_random_state(static_cast<uint64_t>(it->second.item<int64_t>()));
    }
  }
  restored_input_positions_.clear();
  for (const auto& [key, tensor] : state) {
    if (key.rfind("input/", 0) == 0) restored_input_positions_.emplace(key, tensor);
  }
  replica_statistics_.clear();
  for (const auto& [key, tensor] : state) {
    if (key.rfind("replica_", 0) == 0) replica_statistics_.emplace(key, tensor);
  }
  for (ReplicatedModel* replicas : {train_replicas_.get(), eval_replicas_.get()}) {
    if (!replicas) continue;
    replicas->sync_from_primary();
    replicas->load_replica_statistics(replica_statistics_);
  }
}

std::string Estimator::restore_latest() {
  // Several workers: wait until every worker got here, so all read the checkpoint the chief
  // finished writing (none reads while it is still being written).
  if (config_.train_distribute) config_.train_distribute->barrier();
  auto restored = checkpoints_.restore_latest();
  if (!restored) return "";
  // The checkpoint's tensors are read for this restore alone: the slots can be them.
  load_state(restored->tensors, /*take_slots=*/true);
  log("Restoring parameters from " + restored->path);
  return restored->path;
}

std::string Estimator::save_checkpoint() {
  Strategy* strategy = config_.train_distribute.get();
  const bool workers = strategy != nullptr && strategy->num_workers() > 1;
  // The optimizer's slots from every worker's share (after sharded updates), and every worker's
  // input position, go into the chief's checkpoint.
  if (workers && train_replicas_) train_replicas_->gather_optimizer_state(*spec_.optimizer);
  std::vector<std::string> positions;
  if (workers && training_input_) {
    positions = gather_input_positions(*strategy, training_input_->save_state());
  }
  // Only the chief writes checkpoints.
  if (workers && !strategy->is_chief()) return "";
  // Written before the next step changes them: no copies of hundreds of MB of weights and slots.
  TensorMap tensors = shared_state();
  for (size_t w = 0; w < positions.size(); ++w) {
    tensors.emplace(worker_input_key(static_cast<int64_t>(w)), bytes_tensor(positions[w]));
  }
  if (!positions.empty()) {
    tensors.emplace(kInputWorkers, Tensor::scalar<int64_t>(static_cast<int64_t>(positions.size())));
  }
  return checkpoints_.save(global_step_, tensors);
}

}  // namespace sluice
