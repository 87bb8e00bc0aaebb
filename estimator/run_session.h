// The pieces train() and evaluate() share (estimator.cc, estimator_evaluate.cc): the Session
// their hooks see, and small helpers. Internal to estimator/; not installed.
#pragma once

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/estimator/estimator.h"
#include "sluice/formats/event_file_writer.h"
#include "sluice/strategy/strategy.h"

namespace sluice {
namespace estimator_internal {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start);

// Rows of a batch component: its first dimension.
int64_t batch_rows(const Tensor& t);

// Under a multi-worker strategy only the chief (worker 0) writes checkpoints and summaries, as
// TensorFlow's MultiWorkerMirroredStrategy; the other workers keep their (identical) state in
// memory and write summaries to a temporary directory removed afterwards.
bool is_chief(const RunConfig& config);

// A new directory under the system's temporary folder. Throws Internal when it cannot be made.
std::string make_temp_model_dir();

// Calls every hook's end() and rethrows nothing extra: used on the normal paths only.
void end_all(const std::vector<SessionRunHook*>& hooks, Session& session);

// The values hooks asked for by name: learning_rate, gradient_norm, weight_norm. Throws
// InvalidArgument naming another name.
std::map<std::string, double> compute_fetches(const std::vector<std::string>& fetches,
                                              float learning_rate, Sequential& model,
                                              bool training);

}  // namespace estimator_internal

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
    if (!worker_temp_dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(worker_temp_dir_, ignored);
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
    if (!writer_ && !estimator_internal::is_chief(estimator_.config_))
      worker_temp_dir_ = estimator_internal::make_temp_model_dir();
    if (!writer_) {
      writer_ =
          std::make_unique<EventFileWriter>(worker_temp_dir_.empty() ? logdir_ : worker_temp_dir_);
    }
    return *writer_;
  }
  std::vector<StageStatsSnapshot> input_stats() const override {
    return input_ ? input_->stats() : std::vector<StageStatsSnapshot>{};
  }
  bool on_any_worker(bool mine) override {
    return (mode_ == "train" ? estimator_.train_strategy() : estimator_.eval_strategy())
        .on_any_worker(mine);
  }
  void set_input(const InputPipeline* input) { input_ = input; }
  void close() {
    if (writer_) writer_->close();
  }

 private:
  Estimator& estimator_;
  std::string mode_;
  std::string logdir_;
  std::unique_ptr<EventFileWriter> writer_;
  std::string worker_temp_dir_;  // A non-chief worker's summaries (removed at the end).
  const InputPipeline* input_ = nullptr;
};

}  // namespace sluice
