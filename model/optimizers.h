// Optimizers with Keras' update rules: SGD (momentum, nesterov), Adam (ε added to the
// un-corrected sqrt(v), Keras/TF2 ε 1e-7 or TF1 AdamOptimizer's 1e-8), RMSprop. Learning rates
// are constant or scheduled by iteration (0-based step of the update being applied). Slots are
// keyed by Parameter::path and exposed with the iteration count as named tensors for checkpoints.
// Only trainable parameters are updated. An update is element-wise, so apply_gradients splits the
// parameters into slices updated in parallel on the calling thread's oneTBB arena (the thread
// budget of whoever calls it) with results independent of the split. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sluice/core/element_range.h"
#include "sluice/model/layer.h"

namespace sluice {

// lr(step) schedules, as keras.optimizers.schedules.
class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  virtual float operator()(int64_t step) const = 0;
};

// initial · rate^(step / decay_steps), the exponent floored when `staircase`.
std::shared_ptr<const LearningRateSchedule> exponential_decay(float initial_learning_rate,
                                                              int64_t decay_steps, float decay_rate,
                                                              bool staircase = false);
// initial · ((1 − alpha)·0.5·(1 + cos(π·min(step, decay_steps)/decay_steps)) + alpha).
std::shared_ptr<const LearningRateSchedule> cosine_decay(float initial_learning_rate,
                                                         int64_t decay_steps, float alpha = 0.0f);

// A constant or a schedule; converts from a float.
class LearningRate {
 public:
  LearningRate(float constant) : constant_(constant) {}  // NOLINT: implicit, as Keras' floats.
  LearningRate(std::shared_ptr<const LearningRateSchedule> schedule)  // NOLINT
      : schedule_(std::move(schedule)) {}
  float at(int64_t step) const { return schedule_ ? (*schedule_)(step) : constant_; }

 private:
  float constant_ = 0.0f;
  std::shared_ptr<const LearningRateSchedule> schedule_;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string_view name() const = 0;  // "SGD", "Adam", "RMSprop": the state key prefix.

  // An update works on slices of kSliceElements elements (the last of a parameter shorter).
  static constexpr int64_t kSliceElements = int64_t{1} << 14;
  // Called for one slice with the index of its parameter in `parameters` and the slice's element
  // range [begin, end), possibly concurrently with other slices.
  using SliceFn = std::function<void(size_t parameter, int64_t begin, int64_t end)>;
  struct SliceCallbacks {
    // Before the slice's gradient is read: may finish it in place (e.g. sum the gradients of
    // other model replicas into it), while the update that follows finds it in cache.
    SliceFn prepare;
    // Right after the slice was written (e.g. copy the new values to other model replicas while
    // they are in cache).
    SliceFn updated;
  };

  // One update of every trainable parameter from its gradient, then iterations() + 1.
  // Throws InvalidArgument for a parameter without a path or whose slot shape disagrees (before
  // anything is updated or any callback runs). Each callback given runs once per updated slice.
  void apply_gradients(const std::vector<Parameter*>& parameters,
                       const SliceCallbacks& callbacks = {});
  // The same update of only ranges[i] of each parameters[i] (one range per parameter), such as a
  // worker's share: the slices are those the whole update makes, so the values are too. Throws
  // InvalidArgument, before anything changed, for a range outside its parameter or whose ends
  // fall inside a slice (neither a multiple of kSliceElements nor the parameter's end).
  void apply_gradients(const std::vector<Parameter*>& parameters, const SliceCallbacks& callbacks,
                       const std::vector<ElementRange>& ranges);

  // Makes the slots the parameters lack, zeroed, as the first update would (Keras' build): a
  // training loop calls it before its first step, so that step does not pay for the memory.
  void build(const std::vector<Parameter*>& parameters);

  int64_t iterations() const { return iterations_; }
  // The rate the next update will use.
  float current_learning_rate() const { return learning_rate_.at(iterations_); }

  // "iterations" (int64 scalar) and "<parameter path>/<slot>" (e.g. "dense/kernel/m"); copies.
  std::map<std::string, Tensor> state() const;
  // The same without copies: the slots themselves, which the next update changes.
  std::map<std::string, Tensor> shared_state() const;
  // Restores a state() map, the slots copies of its tensors. Slots are checked against the
  // parameters when next applied.
  void load_state(const std::map<std::string, Tensor>& state);
  // load_state() without the copies: the slots are the map's tensors themselves, which the updates
  // then change. For tensors nothing else holds, such as those read from a checkpoint to restore.
  void take_state(std::map<std::string, Tensor> state);
  // The slot tensors themselves, in state()'s order: for collectives over them.
  std::vector<Tensor*> slot_tensors();

 protected:
  explicit Optimizer(LearningRate learning_rate) : learning_rate_(std::move(learning_rate)) {}
  // The slot names this optimizer keeps per parameter ("momentum", "m", "v", ...).
  virtual std::vector<std::string> slot_names() const = 0;
  // Updates `value` in place; `slots` follow slot_names(); `step` is 1-based. Called concurrently
  // on disjoint slices of the same parameters: must only read the optimizer's own members.
  virtual void update(float lr, int64_t step, std::span<float> value, std::span<const float> grad,
                      std::vector<std::span<float>>& slots) = 0;

 private:
  LearningRate learning_rate_;
  int64_t iterations_ = 0;
  std::map<std::string, Tensor> slots_;
};

struct SGDOptions {
  LearningRate learning_rate = 0.01f;
  float momentum = 0.0f;
  bool nesterov = false;
};

// velocity = momentum·velocity − lr·g; w += velocity (nesterov: w += momentum·velocity − lr·g).
class SGD final : public Optimizer {
 public:
  explicit SGD(SGDOptions options = {});
  std::string_view name() const override { return "SGD"; }

 private:
  std::vector<std::string> slot_names() const override;
  void update(float lr, int64_t step, std::span<float> value, std::span<const float> grad,
              std::vector<std::span<float>>& slots) override;
  SGDOptions options_;
};

struct AdamOptions {
  LearningRate learning_rate = 0.001f;
  float beta_1 = 0.9f;
  float beta_2 = 0.999f;
  float epsilon = 1e-7f;
  // PyTorch's placement: ε added to the bias-corrected sqrt(v̂) instead of the raw sqrt(v).
  bool epsilon_on_corrected = false;

  // tf.compat.v1.train.AdamOptimizer: the same update with ε = 1e-8.
  static AdamOptions tf1() { return {.epsilon = 1e-8f}; }
  // torch.optim.Adam defaults.
  static AdamOptions pytorch() { return {.epsilon = 1e-8f, .epsilon_on_corrected = true}; }
};

// m += (g − m)(1 − β1); v += (g² − v)(1 − β2); α = lr·sqrt(1 − β2^t)/(1 − β1^t);
// θ −= α·m/(sqrt(v) + ε).
class Adam final : public Optimizer {
 public:
  explicit Adam(AdamOptions options = {});
  std::string_view name() const override { return "Adam"; }

 private:
  std::vector<std::string> slot_names() const override;
  void update(float lr, int64_t step, std::span<float> value, std::span<const float> grad,
              std::vector<std::span<float>>& slots) override;
  AdamOptions options_;
};

struct RMSpropOptions {
  LearningRate learning_rate = 0.001f;
  float rho = 0.9f;
  float momentum = 0.0f;
  float epsilon = 1e-7f;
  bool centered = false;
};

// ms = ρ·ms + (1 − ρ)·g²; (centered: mg = ρ·mg + (1 − ρ)·g, denominator ms − mg²);
// step = lr·g/sqrt(denominator + ε); with momentum: mom = momentum·mom + step; θ −= mom.
class RMSprop final : public Optimizer {
 public:
  explicit RMSprop(RMSpropOptions options = {});
  std::string_view name() const override { return "RMSprop"; }

 private:
  std::vector<std::string> slot_names() const override;
  void update(float lr, int64_t step, std::span<float> value, std::span<const float> grad,
              std::vector<std::span<float>>& slots) override;
  RMSpropOptions options_;
};

}  // namespace sluice
