#include "sluice/model/optimizers.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/model/vector_clones.h"

namespace sluice {
namespace {

// Adam's rule over n elements (the caller folded the bias corrections into alpha and eps). Its
// square roots vectorise because optimizers.cc is compiled without errno for math functions.
SLUICE_VECTOR_CLONES void adam_kernel(float* __restrict w, float* __restrict m, float* __restrict v,
                                      const float* __restrict g, size_t n, float alpha, float eps,
                                      float one_minus_b1, float one_minus_b2) {
  for (size_t i = 0; i < n; ++i) {
    m[i] += (g[i] - m[i]) * one_minus_b1;
    v[i] += (g[i] * g[i] - v[i]) * one_minus_b2;
    w[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
  }
}

class ExponentialDecay final : public LearningRateSchedule {
 public:
  ExponentialDecay(float initial, int64_t steps, float rate, bool staircase)
      : initial_(initial), steps_(steps), rate_(rate), staircase_(staircase) {}
  float operator()(int64_t step) const override {
    double p = double(step) / double(steps_);
    if (staircase_) p = std::floor(p);
    return static_cast<float>(initial_ * std::pow(double(rate_), p));
  }

 private:
  float initial_;
  int64_t steps_;
  float rate_;
  bool staircase_;
};

class CosineDecay final : public LearningRateSchedule {
 public:
  CosineDecay(float initial, int64_t steps, float alpha)
      : initial_(initial), steps_(steps), alpha_(alpha) {}
  float operator()(int64_t step) const override {
    const double p = double(std::min(step, steps_)) / double(steps_);
    const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * p));
    return static_cast<float>(initial_ * ((1.0 - alpha_) * cosine + alpha_));
  }

 private:
  float initial_;
  int64_t steps_;
  float alpha_;
};

}  // namespace

std::shared_ptr<const LearningRateSchedule> exponential_decay(float initial_learning_rate,
                                                              int64_t decay_steps, float decay_rate,
                                                              bool staircase) {
  if (decay_steps <= 0) throw InvalidArgument("exponential_decay: decay_steps must be positive");
  return std::make_shared<ExponentialDecay>(initial_learning_rate, decay_steps, decay_rate,
                                            staircase);
}

std::shared_ptr<const LearningRateSchedule> cosine_decay(float initial_learning_rate,
                                                         int64_t decay_steps, float alpha) {
  if (decay_steps <= 0) throw InvalidArgument("cosine_decay: decay_steps must be positive");
  return std::make_shared<CosineDecay>(initial_learning_rate, decay_steps, alpha);
}

void Optimizer::apply_gradients(const std::vector<Parameter*>& parameters,
                                const SliceCallbacks& callbacks) {
  std::vector<ElementRange> whole;
  for (const Parameter* p : parameters) whole.push_back({0, p->value.num_elements()});
  apply_gradients(parameters, callbacks, whole);
}

void Optimizer::apply_gradients(const std::vector<Parameter*>& parameters,
                                const SliceCallbacks& callbacks,
                                const std::vector<ElementRange>& ranges) {
  if (ranges.size() != parameters.size()) {
    throw InvalidArgument(str_cat("apply_gradients: ", ranges.size(), " ranges for ",
                                  parameters.size(), " parameters"));
  }
  const float lr = learning_rate_.at(iterations_);
  const int64_t step = iterations_ + 1;
  const std::vector<std::string> names = slot_names();
  // Checks and slot look-ups first (serially: they may insert into slots_), so that a bad
  // parameter throws before any value changed.
  struct Target {
    size_t parameter;
    ElementRange range;
    std::vector<std::span<float>> slots;
  };
  std::vector<Target> targets;
  for (size_t i = 0; i < parameters.size(); ++i) {
    Parameter* p = parameters[i];
    if (!p->trainable) continue;
    if (p->path.empty()) throw InvalidArgument("apply_gradients: a parameter has no path");
    if (p->gradient.shape() != p->value.shape()) {
      throw InvalidArgument(str_cat("apply_gradients: gradient ", p->gradient.shape().to_string(),
                                    " for parameter '", p->path, "' of shape ",
                                    p->value.shape().to_string()));
    }
    const int64_t n = p->value.num_elements();
    const ElementRange range = ranges[i];
    const auto on_edge = [&](int64_t at) { return at == n || at % kSliceElements == 0; };
    if (range.begin < 0 || range.begin > range.end || range.end > n || !on_edge(range.begin) ||
        !on_edge(range.end)) {
      throw InvalidArgument(str_cat("apply_gradients: elements [", range.begin, ", ", range.end,
                                    ") of parameter '", p->path, "' (", n,
                                    " elements) are not whole slices of ", kSliceElements));
    }
    Target target{i, range, std::vector<std::span<float>>(names.size())};
    for (size_t s = 0; s < names.size(); ++s) {
      const std::string key = str_cat(p->path, "/", names[s]);
      auto it = slots_.find(key);
      if (it == slots_.end()) {
        it = slots_.emplace(key, Tensor(DType::kFloat32, p->value.shape())).first;
      } else if (it->second.shape() != p->value.shape() || it->second.dtype() != DType::kFloat32) {
        throw InvalidArgument(str_cat(name(), " slot '", key, "' has shape ",
                                      it->second.shape().to_string(), ", the parameter ",
                                      p->value.shape().to_string()));
      }
      target.slots[s] = it->second.values<float>();
    }
    targets.push_back(std::move(target));
  }
  // Work items: a slice of one parameter, small enough that a few large kernels spread over the
  // threads and their four or five arrays stay in cache between the callbacks and the update.
  struct Slice {
    size_t target;
    int64_t begin, end;
  };
  std::vector<Slice> slices;
  for (size_t t = 0; t < targets.size(); ++t) {
    const ElementRange range = targets[t].range;
    for (int64_t b = range.begin; b < range.end; b += kSliceElements) {
      slices.push_back({t, b, std::min(range.end, b + kSliceElements)});
    }
  }
  auto work = [&](const Slice& slice) {
    const Target& target = targets[slice.target];
    Parameter* p = parameters[target.parameter];
    const size_t b = static_cast<size_t>(slice.begin);
    const size_t len = static_cast<size_t>(slice.end - slice.begin);
    std::vector<std::span<float>> slots;
    slots.reserve(target.slots.size());
    for (const std::span<float>& s : target.slots) slots.push_back(s.subspan(b, len));
    if (callbacks.prepare) callbacks.prepare(target.parameter, slice.begin, slice.end);
    update(lr, step, p->value.values<float>().subspan(b, len),
           std::as_const(p->gradient).values<float>().subspan(b, len), slots);
    if (callbacks.updated) callbacks.updated(target.parameter, slice.begin, slice.end);
  };
  if (slices.size() <= 1) {
    for (const Slice& slice : slices) work(slice);
  } else {
    oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<size_t>(0, slices.size(), 1),
                              [&](const oneapi::tbb::blocked_range<size_t>& range) {
                                for (size_t k = range.begin(); k != range.end(); ++k)
                                  work(slices[k]);
                              });
  }
  ++iterations_;
}

void Optimizer::build(const std::vector<Parameter*>& parameters) {
  for (const Parameter* p : parameters) {
    if (!p->trainable || p->path.empty()) continue;
    for (const std::string& slot : slot_names()) {
      slots_.try_emplace(str_cat(p->path, "/", slot), DType::kFloat32, p->value.shape());
    }
  }
}

std::map<std::string, Tensor> Optimizer::state() const {
  std::map<std::string, Tensor> out = shared_state();
  for (auto& [key, tensor] : out) tensor = tensor.clone();
  return out;
}

std::map<std::string, Tensor> Optimizer::shared_state() const {
  std::map<std::string, Tensor> out(slots_.begin(), slots_.end());
  out.emplace("iterations", Tensor::scalar<int64_t>(iterations_));
  return out;
}

void Optimizer::load_state(const std::map<std::string, Tensor>& state) {
  std::map<std::string, Tensor> copies;
  for (const auto& [key, tensor] : state) copies.emplace(key, tensor.clone());
  take_state(std::move(copies));
}

void Optimizer::take_state(std::map<std::string, Tensor> state) {
  auto it = state.find("iterations");
  if (it == state.end() || it->second.dtype() != DType::kInt64 || it->second.num_elements() != 1) {
    throw InvalidArgument(str_cat(name(), " state needs an int64 scalar 'iterations'"));
  }
  std::map<std::string, Tensor> slots;
  for (auto& [key, tensor] : state) {
    if (key == "iterations") continue;
    if (tensor.dtype() != DType::kFloat32) {
      throw InvalidArgument(str_cat(name(), " slot '", key, "' must be float32"));
    }
    slots.emplace(key, std::move(tensor));
  }
  iterations_ = it->second.item<int64_t>();
  slots_ = std::move(slots);
}

std::vector<Tensor*> Optimizer::slot_tensors() {
  std::vector<Tensor*> out;
  for (auto& [key, slot] : slots_) out.push_back(&slot);
  return out;
}

SGD::SGD(SGDOptions options) : Optimizer(options.learning_rate), options_(options) {
  if (options.momentum < 0.0f || options.momentum > 1.0f) {
    throw InvalidArgument(str_cat("SGD momentum must be in [0, 1], got ", options.momentum));
  }
}

std::vector<std::string> SGD::slot_names() const {
  if (options_.momentum == 0.0f) return {};
  return {"momentum"};
}

void SGD::update(float lr, int64_t step, std::span<float> value, std::span<const float> grad,
                 std::vector<std::span<float>>& slots) {
  (void)step;
  const size_t n = value.size();
  if (slots.empty()) {
    for (size_t i = 0; i < n; ++i) value[i] -= lr * grad[i];
    return;
  }
  const float m = options_.momentum;
  std::span<float> velocity = slots[0];
  for (size_t i = 0; i < n; ++i) {
    velocity[i] = m * velocity[i] - lr * grad[i];
    value[i] += options_.nesterov ? m * velocity[i] - lr * grad[i] : velocity[i];
  }
}

Adam::Adam(AdamOptions options) : Optimizer(options.learning_rate), options_(options) {}

std::vector<std::string> Adam::slot_names() const { return {"m", "v"}; }

void Adam::update(float lr, int64_t step, std::span<float> value, std::span<const float> grad,
                  std::vector<std::span<float>>& slots) {
  const double b1 = options_.beta_1, b2 = options_.beta_2;
  const double correction1 = 1.0 - std::pow(b1, double(step));
  const double correction2 = 1.0 - std::pow(b2, double(step));
  const float alpha = static_cast<float>(lr * std::sqrt(correction2) / correction1);
  // PyTorch's ε on sqrt(v̂) equals ε·sqrt(1 − β2^t) on sqrt(v) in this form.
  const float eps = options_.epsilon_on_corrected
                        ? static_cast<float>(options_.epsilon * std::sqrt(correction2))
                        : options_.epsilon;
  const float one_minus_b1 = static_cast<float>(1.0 - b1);
  const float one_minus_b2 = static_cast<float>(1.0 - b2);
  adam_kernel(value.data(), slots[0].data(), slots[1].data(), grad.data(), value.size(), alpha, eps,
              one_minus_b1, one_minus_b2);
}

RMSprop::RMSprop(RMSpropOptions options) : Optimizer(options.learning_rate), options_(options) {}

std::vector<std::string> RMSprop::slot_names() const {
  std::vector<std::string> names = {"rms"};
  if (options_.momentum > 0.0f) names.push_back("momentum");
  if (options_.centered) names.push_back("mg");
  return names;
}

void RMSprop::update(float lr, int64_t step, std::span<float> value, std::span<const float> grad,
                     std::vector<std::span<float>>& slots) {
  (void)step;
  const float rho = options_.rho;
  std::span<float> ms = slots[0];
  const bool use_momentum = options_.momentum > 0.0f;
  std::span<float> mom = use_momentum ? slots[1] : std::span<float>();
  std::span<float> mg = options_.centered ? slots[use_momentum ? 2 : 1] : std::span<float>();
  for (size_t i = 0; i < value.size(); ++i) {
    const float g = grad[i];
    ms[i] = rho * ms[i] + (1.0f - rho) * g * g;
    float denominator = ms[i];
    if (options_.centered) {
      mg[i] = rho * mg[i] + (1.0f - rho) * g;
      denominator -= mg[i] * mg[i];
    }
    const float increment = lr * g / std::sqrt(denominator + options_.epsilon);
    if (use_momentum) {
      mom[i] = options_.momentum * mom[i] + increment;
      value[i] -= mom[i];
    } else {
      value[i] -= increment;
    }
  }
}

}  // namespace sluice
