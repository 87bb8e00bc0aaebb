#include "sluice/estimator/replicated_model.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/strategy/strategy.h"

namespace sluice {

namespace {

std::string replica_statistic_key(size_t replica, const std::string& path) {
  return "replica_" + std::to_string(replica) + "/" + path;
}

}  // namespace
namespace {

// Finishes `length` elements of a gradient `g` in blocks that stay in L1: adds the other
// replicas' gradients in replica order (the order of Strategy::batch_reduce_to), then the L2
// gradient 2·l2·w. Returns l2·Σw² of the elements (float sums per block, double across blocks).
double finish_gradient(float* g, const std::vector<const float*>& others, const float* w, float l2,
                       int64_t length) {
  constexpr int64_t kBlock = 256;
  constexpr int kLanes = 8;  // Independent sums, so the compiler keeps them in vector registers.
  double squares = 0;
  for (int64_t b = 0; b < length; b += kBlock) {
    const int64_t e = std::min(length, b + kBlock);
    for (const float* o : others) {
      for (int64_t j = b; j < e; ++j) g[j] += o[j];
    }
    if (l2 == 0.0f) continue;
    float lanes[kLanes] = {};
    int64_t j = b;
    for (; j + kLanes <= e; j += kLanes) {
      for (int l = 0; l < kLanes; ++l) lanes[l] += w[j + l] * w[j + l];
    }
    float sum = 0;
    for (; j < e; ++j) sum += w[j] * w[j];
    for (float lane : lanes) sum += lane;
    squares += sum;
    const float scale = 2.0f * l2;
    for (j = b; j < e; ++j) g[j] += scale * w[j];
  }
  return double{l2} * squares;
}

int64_t rows_of(const Tensor& t) { return t.rank() == 0 ? 1 : t.dim(0); }

// The tensors themselves, for the strategy to write: a copy of a one-element tensor is another
// value (core/tensor.h).
std::vector<Tensor*> gradients_of(Sequential& model) {
  std::vector<Tensor*> out;
  for (Parameter* p : model.trainable_parameters()) out.push_back(&p->gradient);
  return out;
}

std::vector<Tensor*> values_of(const std::vector<Parameter*>& parameters) {
  std::vector<Tensor*> out;
  for (Parameter* p : parameters) out.push_back(&p->value);
  return out;
}

// Copies, to read from.
std::vector<Tensor> copies(const std::vector<Tensor*>& tensors) {
  std::vector<Tensor> out;
  for (const Tensor* t : tensors) out.push_back(*t);
  return out;
}

}  // namespace

// Finishes replica 0's trainable gradients slice by slice (Optimizer::kSliceElements, possibly
// concurrently): the sum over workers a reduce-scatter left, then finish_gradient with the other
// replicas' gradients unless already summed. Keeps one regularization partial per slice, so that
// the loss adds up in a fixed order whatever the threads did.
class ReplicatedModel::GradientFinisher {
 public:
  GradientFinisher(const std::vector<Sequential*>& models, bool sum_replicas)
      : primary_(models[0]->trainable_parameters()) {
    if (sum_replicas) {
      for (size_t r = 1; r < models.size(); ++r) {
        others_.push_back(models[r]->trainable_parameters());
      }
    }
    for (Parameter* p : primary_) {
      first_slice_.push_back(static_cast<int64_t>(partials_.size()));
      const int64_t n = p->value.num_elements();
      partials_.resize(partials_.size() + static_cast<size_t>((n + Optimizer::kSliceElements - 1) /
                                                              Optimizer::kSliceElements));
    }
    first_slice_.push_back(static_cast<int64_t>(partials_.size()));
    // Frozen weights add to the regularization loss (Keras' model.losses) but get no gradient.
    for (Parameter* p : models[0]->parameters()) {
      if (!p->trainable && p->l2 != 0.0f) frozen_.push_back(p);
    }
  }

  const std::vector<Parameter*>& parameters() const { return primary_; }

  // Each slice of shares[i] sums parts[i] first, unless empty (reduce_scatter_across_workers).
  void sum_workers(const std::vector<WorkerParts<float>>& parts,
                   const std::vector<ElementRange>& shares) {
    worker_parts_ = &parts;
    shares_ = &shares;
  }

  void operator()(size_t i, int64_t begin, int64_t end) {
    Parameter& p = *primary_[i];
    if (worker_parts_ && !(*worker_parts_)[i].empty()) {
      add_in_worker_order(p.gradient.data<float>() + begin, (*worker_parts_)[i],
                          begin - (*shares_)[i].begin, end - begin);
    }
    std::vector<const float*> others;
    for (const std::vector<Parameter*>& replica : others_) {
      others.push_back(std::as_const(replica[i]->gradient).data<float>() + begin);
    }
    partials_[static_cast<size_t>(first_slice_[i] + begin / Optimizer::kSliceElements)] =
        finish_gradient(p.gradient.data<float>() + begin, others,
                        std::as_const(p.value).data<float>() + begin, p.l2, end - begin);
  }

  // Every slice, in parallel on the calling thread's arena.
  void finish_all() {
    struct Slice {
      size_t parameter;
      int64_t begin, end;
    };
    std::vector<Slice> slices;
    for (size_t i = 0; i < primary_.size(); ++i) {
      const int64_t n = primary_[i]->value.num_elements();
      for (int64_t b = 0; b < n; b += Optimizer::kSliceElements) {
        slices.push_back({i, b, std::min(n, b + Optimizer::kSliceElements)});
      }
    }
    oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<size_t>(0, slices.size()),
                              [&](const oneapi::tbb::blocked_range<size_t>& range) {
                                for (size_t k = range.begin(); k != range.end(); ++k) {
                                  (*this)(slices[k].parameter, slices[k].begin, slices[k].end);
                                }
                              });
  }

  // After an update of `shares` of the weights (one per parameter): a divided weight's slices
  // have partials of this worker's share only, and zeros elsewhere. Summed over the workers (x + 0
  // is exact), every worker holds all of them, for a loss() added up as after a whole update. A
  // collective when any divided weight is regularized. Every worker divides the same weights: a
  // weight worth dividing (Strategy::worker_share) is no one worker's whole.
  void gather_partials(Strategy& strategy, const std::vector<ElementRange>& shares) {
    const auto whole = [&](size_t i) {
      return shares[i].size() == primary_[i]->value.num_elements();
    };
    bool regularized = false;
    for (size_t i = 0; i < primary_.size(); ++i) regularized |= !whole(i) && primary_[i]->l2 != 0;
    if (!regularized) return;
    // A weight every worker updated whole has the same partials everywhere: the chief's count.
    if (!strategy.is_chief()) {
      for (size_t i = 0; i < primary_.size(); ++i) {
        if (whole(i)) {
          std::fill(partials_.begin() + first_slice_[i], partials_.begin() + first_slice_[i + 1],
                    0.0);
        }
      }
    }
    strategy.all_reduce_across_workers(partials_);
  }

  // The regularization loss, once every slice was finished.
  double loss() const {
    double total = regularization_loss(frozen_);
    for (double partial : partials_) total += partial;
    return total;
  }

 private:
  std::vector<Parameter*> primary_;
  std::vector<std::vector<Parameter*>> others_;  // Replicas 1.. when their sum is still to add.
  std::vector<int64_t> first_slice_;  // Per parameter: its first entry in partials_; then the end.
  std::vector<double> partials_;
  std::vector<Parameter*> frozen_;
  const std::vector<WorkerParts<float>>* worker_parts_ = nullptr;
  const std::vector<ElementRange>* shares_ = nullptr;
};

ReplicatedModel::ReplicatedModel(Strategy& strategy, Sequential& primary,
                                 const std::function<Sequential()>& model_fn)
    : strategy_(strategy) {
  models_.push_back(&primary);
  const int n = strategy.num_local_replicas();
  if (n > 1 && !model_fn) {
    throw InvalidArgument(str_cat(strategy.name(), " with ", n,
                                  " replicas needs ModelSpec::model_fn to build each replica's "
                                  "copy of the model"));
  }
  const std::vector<Parameter*> reference = primary.parameters();
  for (int r = 1; r < n; ++r) {
    auto model = std::make_unique<Sequential>(model_fn());
    if (!model->built()) model->build(primary.input_shape());
    const std::vector<Parameter*> params = model->parameters();
    if (params.size() != reference.size()) {
      throw InvalidArgument(str_cat("model_fn built a model with ", params.size(),
                                    " parameters for replica ", r, ", the Estimator's has ",
                                    reference.size()));
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const Parameter& a = *reference[i];
      const Parameter& b = *params[i];
      if (a.path != b.path || a.value.shape() != b.value.shape() ||
          a.value.dtype() != b.value.dtype() || a.trainable != b.trainable) {
        throw InvalidArgument(str_cat("model_fn built a different model for replica ", r,
                                      ": parameter ", i, " is '", b.path, "' ",
                                      b.value.shape().to_string(), ", the Estimator's is '", a.path,
                                      "' ", a.value.shape().to_string()));
      }
    }
    models_.push_back(model.get());
    owned_.push_back(std::move(model));
  }
  // Every worker starts from the chief's weights, whatever its own initialisation gave.
  strategy.broadcast_from_chief(values_of(primary.parameters()));
  sync_from_primary();
}

bool ReplicatedModel::all_workers_have_input(std::optional<int64_t> local_rows, bool shardable) {
  agreed_rows_.reset();
  shard_next_update_ = false;
  if (strategy_.num_workers() == 1) return local_rows.has_value();
  // [workers with input, their rows, workers that can shard]: summed in worker order, identical
  // everywhere.
  std::vector<double> counts{local_rows ? 1.0 : 0.0, local_rows ? double(*local_rows) : 0.0,
                             shardable ? 1.0 : 0.0};
  strategy_.all_reduce_across_workers(counts);
  if (counts[0] < strategy_.num_workers()) return false;
  agreed_rows_ = static_cast<int64_t>(counts[1]);
  shard_next_update_ = counts[2] == strategy_.num_workers();
  return true;
}

ReplicatedModel::~ReplicatedModel() = default;

void ReplicatedModel::sync_from_primary() {
  if (models_.size() < 2) return;
  std::vector<std::vector<Tensor*>> destinations;
  for (size_t r = 1; r < models_.size(); ++r)
    destinations.push_back(values_of(models_[r]->parameters()));
  strategy_.broadcast_to(copies(values_of(models_[0]->parameters())), destinations);
}

ReplicatedModel::StepResult ReplicatedModel::train_step(
    const Element& batch, const std::string& features_key, const std::string& labels_key,
    const Loss& loss, const std::vector<std::unique_ptr<Metric>>& metrics) {
  const int n = num_replicas();
  const int workers = strategy_.num_workers();
  StepResult result;
  result.batch_size = rows_of(batch[features_key]);
  if (workers > 1) {
    if (!agreed_rows_ && !all_workers_have_input(result.batch_size)) {
      throw FailedPrecondition(
          "train_step: another worker's input ended; call "
          "all_workers_have_input before every step");
    }
    result.batch_size = *agreed_rows_;
    agreed_rows_.reset();
  }
  // With one replica the loss is the batch mean as without a strategy; with more, each replica
  // divides by the global batch so the summed gradients are the global-batch gradient.
  const int64_t global_batch = n * workers == 1 ? 0 : result.batch_size;
  const std::vector<Element> parts = n == 1 ? std::vector<Element>{batch} : split_batch(batch, n);
  std::vector<Tensor> predictions(n);
  std::vector<double> losses(n, 0.0);
  std::vector<char> has_rows(n, 0);
  strategy_.run(
      [&](ReplicaContext& context, const Element& part) -> std::vector<Tensor> {
        const int r = context.replica_id_in_sync_group();
        Sequential& model = *models_[r];
        const Tensor& x = part[features_key];
        if (rows_of(x) == 0) {
          // No data for this replica in a short last batch: it contributes no loss gradient.
          for (Parameter* p : model.trainable_parameters()) {
            std::memset(p->gradient.raw_data(), 0, p->gradient.byte_size());
          }
        } else {
          has_rows[r] = 1;
          predictions[r] = model.forward(x, /*training=*/true);
          const LossResult l = loss(part[labels_key], predictions[r], global_batch);
          model.backward(l.gradient);
          losses[r] = l.loss;
        }
        return {};
      },
      parts);
  finished_regularization_.reset();
  replicas_summed_ = n == 1;
  gradients_sharded_ = workers > 1 && shard_next_update_;
  shard_next_update_ = false;
  if (workers > 1) {
    // The local sum first, then the sum over workers: both before the update.
    if (n > 1) {
      std::vector<std::vector<Tensor>> gradients;
      for (Sequential* model : models_) gradients.push_back(copies(gradients_of(*model)));
      strategy_.batch_reduce_to(ReduceOp::kSum, gradients, gradients_of(*models_[0]));
      replicas_summed_ = true;
    }
    if (gradients_sharded_) {
      worker_parts_ = strategy_.reduce_scatter_across_workers(gradients_of(*models_[0]));
    } else {
      strategy_.all_reduce_across_workers(gradients_of(*models_[0]));
    }
  }
  // Replica order, so the reported sums do not depend on timing.
  for (int r = 0; r < n; ++r) {
    result.loss += losses[r];
    if (has_rows[r]) {
      for (const auto& m : metrics) m->update_state(parts[r][labels_key], predictions[r]);
    }
  }
  if (workers > 1) {
    std::vector<double> sums{result.loss};
    strategy_.all_reduce_across_workers(sums);
    result.loss = sums[0];
  }
  return result;
}

bool ReplicatedModel::share_gradients_with_workers() {
  if (!gradients_shared_) {
    gradients_shared_ =
        strategy_.num_workers() > 1 && strategy_.share_with_workers(gradients_of(*models_[0]));
  }
  return *gradients_shared_;
}

void ReplicatedModel::finish_gradients() {
  if (gradients_sharded_) {
    throw FailedPrecondition(
        "finish_gradients: the workers agreed to shard this step's update, so each holds the "
        "summed gradients of its share only; pass shardable = false to all_workers_have_input "
        "for a step whose gradients are read");
  }
  if (finished_regularization_) return;
  GradientFinisher finisher(models_, !replicas_summed_);
  strategy_.execute([&] { finisher.finish_all(); });
  replicas_summed_ = true;
  finished_regularization_ = finisher.loss();
}

// A worker's share of a weight is whole slices of an update, so the slices of a sharded update,
// and the regularization partials kept per slice, are those of the whole update.
static_assert(Strategy::kShareAlignment % Optimizer::kSliceElements == 0);

double ReplicatedModel::apply_gradients(Optimizer& optimizer) {
  GradientFinisher finisher(models_, !replicas_summed_);
  const std::vector<Parameter*>& primary = finisher.parameters();
  std::vector<std::vector<Parameter*>> others;
  for (size_t r = 1; r < models_.size(); ++r) {
    others.push_back(models_[r]->trainable_parameters());
  }
  // Elements [begin, end) of primary[i]'s new values into the other replicas.
  const auto copy_to_others = [&](size_t i, int64_t begin, int64_t end) {
    const float* source = std::as_const(primary[i]->value).data<float>() + begin;
    for (const std::vector<Parameter*>& replica : others) {
      std::memcpy(replica[i]->value.data<float>() + begin, source,
                  static_cast<size_t>(end - begin) * sizeof(float));
    }
  };
  // This worker's share of every weight when the workers agreed to shard the update, else all.
  std::vector<ElementRange> shares;
  for (const Parameter* p : primary) {
    const int64_t n = p->value.num_elements();
    shares.push_back(gradients_sharded_ ? strategy_.worker_share(n) : ElementRange{0, n});
  }
  if (gradients_sharded_) finisher.sum_workers(worker_parts_, shares);
  Optimizer::SliceCallbacks callbacks;
  // A sharded step's regularization is never finished before (finish_gradients refuses it), so
  // its sums over workers are always made here.
  if (!finished_regularization_) callbacks.prepare = std::ref(finisher);
  callbacks.updated = copy_to_others;
  strategy_.execute([&] { optimizer.apply_gradients(primary, callbacks, shares); });
  if (gradients_sharded_) {
    // The other workers' shares: their regularization partials, then their new weights.
    finisher.gather_partials(strategy_, shares);
    strategy_.all_gather_across_workers(values_of(primary));
    if (!others.empty()) {
      for (size_t i = 0; i < primary.size(); ++i) {
        copy_to_others(i, 0, shares[i].begin);
        copy_to_others(i, shares[i].end, primary[i]->value.num_elements());
      }
    }
    optimizer_state_sharded_ = true;
  }
  if (!finished_regularization_) {
    replicas_summed_ = true;
    finished_regularization_ = finisher.loss();
  }
  return *finished_regularization_;
}

void ReplicatedModel::gather_optimizer_state(Optimizer& optimizer) {
  if (!optimizer_state_sharded_) return;
  strategy_.all_gather_across_workers(optimizer.slot_tensors());
  optimizer_state_sharded_ = false;
}

double ReplicatedModel::eval_step(const Element& batch, const std::string& features_key,
                                  const std::string& labels_key, const Loss& loss,
                                  const std::vector<std::unique_ptr<Metric>>& metrics) {
  const int n = num_replicas();
  const int64_t global_batch = n == 1 ? 0 : rows_of(batch[features_key]);
  const std::vector<Element> parts = n == 1 ? std::vector<Element>{batch} : split_batch(batch, n);
  std::vector<Tensor> predictions(n);
  std::vector<double> losses(n, 0.0);
  std::vector<char> has_rows(n, 0);
  strategy_.run(
      [&](ReplicaContext& context, const Element& part) -> std::vector<Tensor> {
        const int r = context.replica_id_in_sync_group();
        if (rows_of(part[features_key]) == 0) return {};
        has_rows[r] = 1;
        predictions[r] = models_[r]->forward(part[features_key], /*training=*/false);
        losses[r] = loss(part[labels_key], predictions[r], global_batch).loss;
        return {};
      },
      parts);
  double total = 0;
  for (int r = 0; r < n; ++r) {
    total += losses[r];
    if (has_rows[r]) {
      for (const auto& m : metrics) m->update_state(parts[r][labels_key], predictions[r]);
    }
  }
  return total;
}

std::map<std::string, Tensor> ReplicatedModel::mean_statistics() {
  std::map<std::string, Tensor> out;
  if (models_.size() < 2) return out;
  std::vector<std::vector<Parameter*>> params;
  for (Sequential* model : models_) params.push_back(model->parameters());
  for (size_t i = 0; i < params[0].size(); ++i) {
    if (!params[0][i]->statistic) continue;
    PerReplica<Tensor> values;
    for (const auto& list : params) values.push_back(list[i]->value);
    out.emplace(params[0][i]->path, strategy_.reduce(ReduceOp::kMean, values));
  }
  return out;
}

std::map<std::string, Tensor> ReplicatedModel::replica_statistics() {
  std::map<std::string, Tensor> out;
  if (models_.size() < 2) return out;
  for (size_t r = 0; r < models_.size(); ++r) {
    for (const Parameter* p : models_[r]->parameters()) {
      if (p->statistic) out.emplace(replica_statistic_key(r, p->path), p->value.clone());
    }
  }
  return out;
}

void ReplicatedModel::load_replica_statistics(const std::map<std::string, Tensor>& statistics) {
  for (size_t r = 0; r < models_.size() && models_.size() > 1; ++r) {
    for (Parameter* p : models_[r]->parameters()) {
      if (!p->statistic) continue;
      const auto it = statistics.find(replica_statistic_key(r, p->path));
      if (it == statistics.end() || it->second.shape() != p->value.shape() ||
          it->second.dtype() != p->value.dtype()) {
        continue;
      }
      std::memcpy(p->value.raw_data(), it->second.raw_data(), p->value.byte_size());
    }
  }
}

}  // namespace sluice
