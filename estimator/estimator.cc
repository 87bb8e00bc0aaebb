#include "estimator/estimator.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "core/errors.h"
#include "estimator/basic_session_run_hooks.h"
#include "formats/event_file_writer.h"
#include "model/layer.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The global L2 norm of the gradients or values of `parameters`.
double global_norm(const std::vector<Parameter*>& parameters, bool gradients) {
  double sum = 0;
  for (const Parameter* p : parameters) {
    for (float v : (gradients ? p->gradient : p->value).values<float>()) sum += double(v) * v;
  }
  return std::sqrt(sum);
}

std::string make_temp_model_dir() {
  std::string pattern = (fs::temp_directory_path() / "sluice-model-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Internal("cannot create a temporary model_dir: " + std::string(std::strerror(errno)));
  }
  return pattern;
}

// Rows of a batch component: its first dimension.
int64_t batch_rows(const Tensor& t) { return t.rank() == 0 ? 1 : t.dim(0); }

}  // namespace

// The Session hooks see: one per train/evaluate call.
class Estimator::RunSession final : public Session {
 public:
  RunSession(Estimator& estimator, std::string mode, std::string logdir)
      : estimator_(estimator), mode_(std::move(mode)), logdir_(std::move(logdir)) {}
  ~RunSession() override {
    if (writer_) {
      try {
        writer_->close();
      } catch (const std::exception& e) {
        std::cerr << "sluice: closing event file " << writer_->path() << ": " << e.what() << "\n";
      }
    }
  }
  int64_t global_step() const override { return estimator_.global_step_; }
  const std::string& model_dir() const override { return estimator_.config_.model_dir; }
  const std::string& mode() const override { return mode_; }
  std::string save_checkpoint() override {
    if (mode_ != "train") throw FailedPrecondition("checkpoints are saved only while training");
    return estimator_.save_checkpoint();
  }
  EventFileWriter& summary_writer() override {
    if (!writer_) writer_ = std::make_unique<EventFileWriter>(logdir_);
    return *writer_;
  }
  void close() {
    if (writer_) writer_->close();
  }

 private:
  Estimator& estimator_;
  std::string mode_;
  std::string logdir_;
  std::unique_ptr<EventFileWriter> writer_;
};

Estimator::Estimator(ModelSpec spec, RunConfig config)
    : spec_(std::move(spec)),
      config_(std::move(config)),
      checkpoints_((config_.validate(),
                    config_.model_dir.empty() ? (config_.model_dir = make_temp_model_dir())
                                              : config_.model_dir),
                   config_.keep_checkpoint_max) {
  if (!spec_.model.built()) throw InvalidArgument("Estimator: the model must be built");
  if (!spec_.optimizer) throw InvalidArgument("Estimator: an optimizer is required");
  for (const std::string& name : spec_.metrics) {
    if (name == "loss" || name == "global_step") {
      throw InvalidArgument("Estimator: '" + name + "' is reserved and cannot name a metric");
    }
    metrics_.push_back(make_metric(name, spec_.loss.name()));
  }
  log("Using model_dir: " + config_.model_dir);
}

Estimator::~Estimator() = default;

void Estimator::log(const std::string& line) const {
  if (config_.log) *config_.log << line << "\n";
}

TensorMap Estimator::state() const {
  TensorMap state;
  state.emplace("global_step", Tensor::scalar<int64_t>(global_step_));
  state.emplace("rng/seed", Tensor::scalar<int64_t>(
                                static_cast<int64_t>(config_.tf_random_seed.value_or(0))));
  for (Parameter* p : const_cast<Sequential&>(spec_.model).parameters()) {
    state.emplace("model/" + p->path, p->value.clone());
  }
  for (auto& [key, tensor] : spec_.optimizer->state()) {
    state.emplace("optimizer/" + key, std::move(tensor));
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
      throw InvalidArgument("checkpoint tensor 'model/" + p->path + "' is " +
                            std::string(dtype_name(t.dtype())) + t.shape().to_string() +
                            " but the model's parameter is " +
                            std::string(dtype_name(p->value.dtype())) +
                            p->value.shape().to_string());
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
}

std::string Estimator::restore_latest() {
  auto restored = checkpoints_.restore_latest();
  if (!restored) return "";
  load_state(restored->tensors);
  log("Restoring parameters from " + restored->path);
  return restored->path;
}

std::string Estimator::save_checkpoint() { return checkpoints_.save(global_step_, state()); }

InputPipeline Estimator::make_input(const InputFn& input_fn) const {
  return InputPipeline(input_fn, config_.input_options);
}

namespace {

// Calls every hook's end() and rethrows nothing extra: used on the normal paths only.
void end_all(const std::vector<SessionRunHook*>& hooks, Session& session) {
  for (SessionRunHook* h : hooks) h->end(session);
}

std::map<std::string, double> compute_fetches(const std::vector<std::string>& fetches,
                                              float learning_rate, Sequential& model,
                                              bool training) {
  std::map<std::string, double> results;
  for (const std::string& name : fetches) {
    if (name == "learning_rate") {
      results[name] = learning_rate;
    } else if (name == "gradient_norm") {
      results[name] = training ? global_norm(model.trainable_parameters(), true) : 0.0;
    } else if (name == "weight_norm") {
      results[name] = global_norm(model.trainable_parameters(), false);
    } else {
      throw InvalidArgument("a hook asked for the unknown value '" + name +
                            "' (known: learning_rate, gradient_norm, weight_norm)");
    }
  }
  return results;
}

}  // namespace

Estimator& Estimator::train(const InputFn& input_fn, const std::vector<SessionRunHook*>& hooks,
                            std::optional<int64_t> steps, std::optional<int64_t> max_steps) {
  if (steps && max_steps) throw InvalidArgument("Can not provide both steps and max_steps.");
  if (steps && *steps <= 0) throw InvalidArgument("Must specify steps > 0, given: " + std::to_string(*steps));
  if (max_steps && *max_steps <= 0) {
    throw InvalidArgument("Must specify max_steps > 0, given: " + std::to_string(*max_steps));
  }
  restore_latest();
  if (max_steps && global_step_ >= *max_steps) {
    log("Skipping training since max_steps has already saved.");
    return *this;
  }

  // The Estimator's hooks around the user's, in TensorFlow's order (see the header).
  std::vector<std::unique_ptr<SessionRunHook>> own_before, own_after;
  bool user_saver = false;
  for (SessionRunHook* h : hooks) user_saver |= dynamic_cast<CheckpointSaverHook*>(h) != nullptr;
  const int64_t save_steps = config_.save_checkpoints_steps.value_or(0);
  const double save_secs = config_.save_checkpoints_secs.value_or(
      config_.save_checkpoints_steps ? 0.0 : 600.0);
  if (!user_saver && (save_steps > 0 || save_secs > 0)) {
    own_before.push_back(std::make_unique<CheckpointSaverHook>(
        config_.log, save_secs > 0 ? std::optional<double>(save_secs) : std::nullopt,
        save_steps > 0 ? std::optional<int64_t>(save_steps) : std::nullopt));
  }
  if (config_.log_step_count_steps > 0) {
    own_before.push_back(std::make_unique<StepCounterHook>(config_.log, config_.log_step_count_steps));
  }
  if (config_.save_summary_steps > 0) {
    own_before.push_back(std::make_unique<SummarySaverHook>(config_.save_summary_steps));
  }
  if (steps) own_after.push_back(std::make_unique<StopAtStepHook>(StopAtStepHook::num_steps(*steps)));
  if (max_steps) {
    own_after.push_back(std::make_unique<StopAtStepHook>(StopAtStepHook::last_step(*max_steps)));
  }
  own_after.push_back(std::make_unique<NanLossHook>(true, config_.log));
  if (config_.log_step_count_steps > 0) {
    own_after.push_back(std::make_unique<LoggingHook>(config_.log, config_.log_step_count_steps));
  }
  std::vector<SessionRunHook*> all;
  for (auto& h : own_before) all.push_back(h.get());
  all.insert(all.end(), hooks.begin(), hooks.end());
  for (auto& h : own_after) all.push_back(h.get());

  RunSession session(*this, "train", config_.model_dir);
  for (SessionRunHook* h : all) h->begin();
  for (SessionRunHook* h : all) h->after_create_session(session);

  InputPipeline input = make_input(input_fn);
  Sequential& model = spec_.model;
  int64_t steps_run = 0;
  double last_loss = 0;
  std::vector<SessionRunArgs> args(all.size());
  while (true) {
    SessionRunContext context(session);
    for (size_t i = 0; i < all.size(); ++i) args[i] = all[i]->before_run(context);

    const auto start = Clock::now();
    std::optional<Element> batch = input.next();
    const double wait = seconds_since(start);
    if (!batch) break;  // End of input: no after_run for this step, end() for every hook.

    const Tensor& x = (*batch)[spec_.features_key];
    const Tensor& y = (*batch)[spec_.labels_key];
    const Tensor prediction = model.forward(x, /*training=*/true);
    const LossResult loss = spec_.loss(y, prediction);
    model.backward(loss.gradient);
    const float regularization = add_regularization_gradients(model.parameters());
    const float learning_rate = spec_.optimizer->current_learning_rate();

    SessionRunValues values;
    values.loss = double(loss.loss) + regularization;
    values.batch_size = batch_rows(x);
    values.input_wait_seconds = wait;
    // Fetches that read gradients are computed before the update consumes them.
    std::vector<std::map<std::string, double>> results(all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      if (!args[i].fetches.empty()) {
        results[i] = compute_fetches(args[i].fetches, learning_rate, model, true);
      }
    }
    spec_.optimizer->apply_gradients(model.trainable_parameters());
    ++global_step_;
    ++steps_run;
    for (auto& m : metrics_) {
      m->reset_state();
      m->update_state(y, prediction);
      values.metrics[m->name()] = m->result();
    }
    values.global_step = global_step_;
    values.step_seconds = seconds_since(start);
    last_loss = values.loss;

    for (size_t i = 0; i < all.size(); ++i) {
      values.results = std::move(results[i]);
      all[i]->after_run(context, values);
    }
    if (context.stop_requested()) break;
  }
  end_all(all, session);
  session.close();
  if (steps_run == 0) {
    log("Training with estimator made no steps. Perhaps input is empty or misspecified.");
  } else {
    std::ostringstream line;
    line << "Loss for final step: " << last_loss << ".";
    log(line.str());
  }
  return *this;
}

EvalResult Estimator::evaluate(const InputFn& input_fn, std::optional<int64_t> steps,
                               const std::vector<SessionRunHook*>& hooks, const std::string& name) {
  if (steps && *steps <= 0) throw InvalidArgument("Must specify steps > 0, given: " + std::to_string(*steps));
  const std::string checkpoint = restore_latest();
  if (checkpoint.empty()) {
    log("Could not find trained model in model_dir: " + config_.model_dir +
        ", running initialization to evaluate.");
  }
  const std::string eval_dir =
      (fs::path(config_.model_dir) / (name.empty() ? "eval" : "eval_" + name)).string();
  RunSession session(*this, "eval", eval_dir);
  for (SessionRunHook* h : hooks) h->begin();
  for (SessionRunHook* h : hooks) h->after_create_session(session);
  for (auto& m : metrics_) m->reset_state();

  InputPipeline input = make_input(input_fn);
  Sequential& model = spec_.model;
  double loss_sum = 0;
  int64_t batches = 0;
  std::vector<SessionRunArgs> args(hooks.size());
  while (!steps || batches < *steps) {
    SessionRunContext context(session);
    for (size_t i = 0; i < hooks.size(); ++i) args[i] = hooks[i]->before_run(context);
    const auto start = Clock::now();
    std::optional<Element> batch = input.next();
    const double wait = seconds_since(start);
    if (!batch) break;
    const Tensor& x = (*batch)[spec_.features_key];
    const Tensor& y = (*batch)[spec_.labels_key];
    const Tensor prediction = model.forward(x, /*training=*/false);
    const LossResult loss = spec_.loss(y, prediction);
    // tf.metrics.mean over batch losses: every batch counts the same, a short last one included.
    loss_sum += loss.loss;
    ++batches;
    SessionRunValues values;
    values.global_step = global_step_;
    values.loss = loss.loss;
    values.batch_size = batch_rows(x);
    values.input_wait_seconds = wait;
    for (auto& m : metrics_) {
      m->update_state(y, prediction);
      values.metrics[m->name()] = m->result();  // Streaming: every batch so far.
    }
    values.step_seconds = seconds_since(start);
    for (size_t i = 0; i < hooks.size(); ++i) {
      values.results = args[i].fetches.empty()
                           ? std::map<std::string, double>{}
                           : compute_fetches(args[i].fetches,
                                             spec_.optimizer->current_learning_rate(), model, false);
      hooks[i]->after_run(context, values);
    }
    if (context.stop_requested()) break;
  }
  end_all(hooks, session);

  EvalResult result;
  result["loss"] = batches > 0 ? loss_sum / double(batches) : 0.0;
  for (auto& m : metrics_) result[m->name()] = m->result();
  std::vector<std::pair<std::string, float>> scalars;
  std::string line = "Saving dict for global step " + std::to_string(global_step_) + ":";
  bool first = true;
  for (const auto& [key, value] : result) {
    scalars.emplace_back(key, static_cast<float>(value));
    std::ostringstream item;
    item << (first ? " " : ", ") << key << " = " << value;
    line += item.str();
    first = false;
  }
  result["global_step"] = static_cast<double>(global_step_);
  session.summary_writer().add_scalars(global_step_, scalars);
  session.close();
  log(line);
  return result;
}

Predictions Estimator::predict(const InputFn& input_fn) {
  if (restore_latest().empty()) {
    log("Could not find trained model in model_dir: " + config_.model_dir +
        ", running initialization to predict.");
  }
  return Predictions(*this, make_input(input_fn));
}

std::optional<Prediction> Predictions::next() {
  while (index_ >= size_) {
    std::optional<Element> batch = input_.next();
    if (!batch) return std::nullopt;
    const ModelSpec& spec = estimator_->spec_;
    features_ = (*batch)[spec.features_key];
    has_labels_ = batch->has(spec.labels_key);
    if (has_labels_) labels_ = (*batch)[spec.labels_key];
    outputs_ = estimator_->spec_.model.forward(features_, /*training=*/false);
    size_ = batch_rows(outputs_);
    index_ = 0;
  }
  Prediction p;
  p.output = outputs_.select(index_);
  p.features = features_.select(index_);
  const auto row = p.output.values<float>();
  if (row.size() == 1) {
    p.class_id = row[0] > 0.5f ? 1 : 0;
  } else {
    p.class_id = std::max_element(row.begin(), row.end()) - row.begin();
  }
  if (has_labels_) {
    const Tensor label = labels_.select(index_);
    switch (label.dtype()) {
      case DType::kInt64: p.label = label.values<int64_t>()[0]; break;
      case DType::kInt32: p.label = label.values<int32_t>()[0]; break;
      case DType::kUInt8: p.label = label.values<uint8_t>()[0]; break;
      case DType::kFloat32: p.label = static_cast<int64_t>(label.values<float>()[0]); break;
      default: break;
    }
  }
  ++index_;
  return p;
}

}  // namespace sluice
