// The Estimator's checkpoints: what a training state holds and how it is saved and restored.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/errors.h"
#include "estimator/estimator.h"
#include "estimator/replicated_model.h"
#include "strategy/strategy.h"

namespace sluice {

TensorMap Estimator::state() const {
  TensorMap state;
  state.emplace("global_step", Tensor::scalar<int64_t>(global_step_));
  state.emplace("rng/seed",
                Tensor::scalar<int64_t>(static_cast<int64_t>(config_.tf_random_seed.value_or(0))));
  // Statistics of mirrored replicas are saved as their mean (Keras' ON_READ / MEAN variables).
  std::map<std::string, Tensor> statistics;
  if (train_replicas_) statistics = train_replicas_->mean_statistics();
  for (Parameter* p : const_cast<Sequential&>(spec_.model).parameters()) {
    auto mean = statistics.find(p->path);
    state.emplace("model/" + p->path, mean != statistics.end() ? mean->second : p->value.clone());
  }
  if (train_replicas_) state.merge(train_replicas_->replica_statistics());
  // The input's position, so that a resumed run reads on exactly where this one stood. One
  // worker's alone would not do for several, which each read a share.
  const bool one_worker = !config_.train_distribute || config_.train_distribute->num_workers() == 1;
  if (training_input_ && one_worker) {
    if (const auto position = training_input_->save_state()) {
      // Checkpoints hold numbers: the blob goes in as its bytes.
      Tensor bytes(DType::kUInt8, Shape{static_cast<int64_t>(position->size())});
      std::memcpy(bytes.raw_data(), position->data(), position->size());
      state.emplace("input/state", std::move(bytes));
    }
  }
  for (auto& [key, tensor] : spec_.optimizer->state()) {
    state.emplace("optimizer/" + key, std::move(tensor));
  }
  Sequential& model = const_cast<Sequential&>(spec_.model);
  for (size_t i = 0; i < model.num_layers(); ++i) {
    if (const auto random = model.layer(i).random_state()) {
      state.emplace("rng/" + model.layer(i).name(),
                    Tensor::scalar<int64_t>(static_cast<int64_t>(*random)));
    }
  }
  return state;
}

void Estimator::load_state(const TensorMap& state) {
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
  spec_.optimizer->load_state(optimizer_state);
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
  const auto input = state.find("input/state");
  restored_input_state_ = input != state.end() && input->second.dtype() == DType::kUInt8
                              ? std::string(static_cast<const char*>(input->second.raw_data()),
                                            static_cast<size_t>(input->second.byte_size()))
                              : std::string();
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
  load_state(restored->tensors);
  log("Restoring parameters from " + restored->path);
  return restored->path;
}

std::string Estimator::save_checkpoint() {
  // Only the chief writes checkpoints.
  if (config_.train_distribute && !config_.train_distribute->is_chief()) return "";
  return checkpoints_.save(global_step_, state());
}

}  // namespace sluice
