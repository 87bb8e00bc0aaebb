// The Estimator's train / evaluate / predict semantics (reference §1–2): hook lifecycle and
// order, steps vs max_steps, resuming, pruning, fallback from a damaged checkpoint, NaN loss.
#include "sluice/estimator/estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "sluice/estimator/basic_session_run_hooks.h"
#include "sluice/estimator/checkpoint.h"
#include "sluice/model/dropout.h"
#include "tests/estimator/inputs.h"
#include "tests/estimator/testing.h"

namespace sluice {
namespace {

using testing::batches_input;
using testing::ModelDirTest;
using testing::read_events;
using testing::RecordingHook;
using testing::separable_input;
using testing::summary_steps;
using testing::tiny_spec;

std::vector<std::string> files_matching(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

using EstimatorTest = ModelDirTest;

TEST_F(EstimatorTest, HookCallsFollowTensorFlowsLifecycle) {
  Estimator est(tiny_spec(), config());
  std::vector<std::string> log;
  RecordingHook hook("h", &log);
  est.train(separable_input(64, 16), {&hook}, /*steps=*/3);
  EXPECT_EQ(log, (std::vector<std::string>{"h:begin", "h:after_create_session:0", "h:before_run:0",
                                           "h:after_run:1", "h:before_run:1", "h:after_run:2",
                                           "h:before_run:2", "h:after_run:3", "h:end:3"}));
  EXPECT_EQ(hook.last_values.batch_size, 16);
  EXPECT_TRUE(hook.last_values.metrics.count("accuracy"));
}

TEST_F(EstimatorTest, StopRequestLetsEveryHookSeeTheStepThenEndsInListOrder) {
  Estimator est(tiny_spec(), config());
  std::vector<std::string> log;
  RecordingHook a("a", &log), b("b", &log, /*stop_at=*/3), c("c", &log);
  est.train(separable_input(256, 16), {&a, &b, &c});
  const std::vector<std::string> tail(log.end() - 6, log.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"a:after_run:3", "b:after_run:3", "c:after_run:3",
                                            "a:end:3", "b:end:3", "c:end:3"}));
  EXPECT_EQ(std::count(log.begin(), log.end(), "a:before_run:3"), 0);
  EXPECT_EQ(est.global_step(), 3);
}

// Counts the optimizer's slots when the first step begins.
class SlotsAtFirstStep final : public SessionRunHook {
 public:
  explicit SlotsAtFirstStep(Optimizer& optimizer) : optimizer_(optimizer) {}
  SessionRunArgs before_run(SessionRunContext&) override {
    if (slots < 0) slots = static_cast<int>(optimizer_.slot_tensors().size());
    return {};
  }
  int slots = -1;

 private:
  Optimizer& optimizer_;
};

// The optimizer's slots are made before the first step, as Keras builds its optimizer before
// fit's loop, so that step does not pay for their memory; model.ckpt-0, written before them, holds
// only the optimizer's iterations.
TEST_F(EstimatorTest, TheOptimizersSlotsExistBeforeTheFirstStep) {
  ModelSpec spec = tiny_spec();
  SlotsAtFirstStep hook(*spec.optimizer);
  Estimator est(std::move(spec), config());
  est.train(separable_input(64, 16), {&hook}, /*steps=*/1);
  EXPECT_EQ(hook.slots, 2);  // The Dense layer's kernel and bias, each one momentum.
  int optimizer_tensors = 0;
  for (const auto& [key, tensor] : read_checkpoint_file(dir_ + "/model.ckpt-0")) {
    optimizer_tensors += key.rfind("optimizer/", 0) == 0;
  }
  EXPECT_EQ(optimizer_tensors, 1);
}

// A checkpoint, written from the weights and slots themselves, holds what state() gives at its
// step; state() is a copy that later steps leave as it was.
TEST_F(EstimatorTest, ACheckpointHoldsTheStateAtItsStepAndStateIsACopy) {
  Estimator est(tiny_spec(), config());
  est.train(separable_input(512, 8), {}, /*steps=*/2);
  const TensorMap at_step_2 = est.state();
  est.train(separable_input(512, 8), {}, /*steps=*/2);
  const TensorMap checkpoint = read_checkpoint_file(dir_ + "/model.ckpt-2");
  for (const auto& [key, tensor] : at_step_2) {
    ASSERT_TRUE(checkpoint.count(key)) << key;
    EXPECT_TRUE(checkpoint.at(key).equals(tensor)) << key;
  }
  const TensorMap at_step_4 = est.state();
  for (const std::string key : {"model/dense/kernel", "optimizer/dense/kernel/momentum"}) {
    EXPECT_FALSE(at_step_4.at(key).equals(at_step_2.at(key))) << key;
  }
}

TEST_F(EstimatorTest, EndOfInputStopsWithoutAfterRunAndStillEnds) {
  Estimator est(tiny_spec(), config());
  std::vector<std::string> log;
  RecordingHook hook("h", &log);
  est.train(separable_input(64, 16), {&hook}, /*steps=*/100);  // 4 batches.
  EXPECT_EQ(std::count_if(log.begin(), log.end(),
                          [](const std::string& s) { return s.rfind("h:after_run", 0) == 0; }),
            4);
  EXPECT_EQ(log[log.size() - 2], "h:before_run:4");  // The fetch that found the input's end.
  EXPECT_EQ(log.back(), "h:end:4");
  EXPECT_EQ(read_checkpoint_state(dir_)->model_checkpoint_path, "model.ckpt-4");
}

TEST_F(EstimatorTest, StepsAddToTheRestoredGlobalStepAcrossEstimators) {
  {
    Estimator est(tiny_spec(), config());
    est.train(separable_input(512, 8), {}, /*steps=*/10);
    EXPECT_EQ(est.global_step(), 10);
  }
  Estimator resumed(tiny_spec(/*learning_rate=*/0.1f, /*seed=*/99), config());
  resumed.train(separable_input(512, 8), {}, /*steps=*/10);
  EXPECT_EQ(resumed.global_step(), 20);
  EXPECT_EQ(read_checkpoint_state(dir_)->model_checkpoint_path, "model.ckpt-20");
  EXPECT_EQ(resumed.optimizer().iterations(), 20);  // Optimizer state came back too.

  Estimator evaluator(tiny_spec(0.1f, 7), config());
  const EvalResult result = evaluator.evaluate(separable_input(64, 16));
  EXPECT_EQ(result.at("global_step"), 20);
  // The evaluator restored the trained weights, not its own seed-7 initialisation.
  const TensorMap a = resumed.state(), b = evaluator.state();
  EXPECT_TRUE(a.at("model/dense/kernel").equals(b.at("model/dense/kernel")));
  EXPECT_GT(result.at("accuracy"), 0.9);
}

// Flatten → Dropout(0.5) → Dense(2): a model whose steps depend on its random stream.
ModelSpec dropout_spec() {
  Sequential model("dropout");
  model.add(Input({4, 4, 1}));
  model.add(std::make_unique<Flatten>());
  model.add(std::make_unique<Dropout>(0.5f, /*seed=*/5));
  model.add(std::make_unique<Dense>(2));
  model.build(3);
  return ModelSpec{std::move(model),
                   Loss("sparse_categorical_crossentropy", true),
                   std::make_unique<SGD>(SGDOptions{.learning_rate = 0.1f}),
                   {}};
}

TEST_F(EstimatorTest, ResumingContinuesTheDropoutStreamSoItEqualsAStraightRun) {
  Estimator straight(dropout_spec(), config());
  straight.train(separable_input(512, 8), {}, /*steps=*/6);
  const TensorMap expected = straight.state();
  EXPECT_EQ(expected.at("rng/dropout").item<int64_t>(), 6);  // Six training forwards.
  std::filesystem::remove_all(dir_);

  {
    Estimator first(dropout_spec(), config());
    first.train(separable_input(512, 8), {}, /*steps=*/3);
  }
  Estimator resumed(dropout_spec(), config());
  // The same batches as the straight run's steps 4-6.
  resumed.train(testing::skipped_input(separable_input(512, 8), 3), {}, /*steps=*/3);
  const TensorMap got = resumed.state();
  EXPECT_EQ(got.at("rng/dropout").item<int64_t>(), 6);
  EXPECT_TRUE(got.at("model/dense/kernel").equals(expected.at("model/dense/kernel")));
}

TEST_F(EstimatorTest, MaxStepsIsAbsoluteAndASecondCallIsANoOp) {
  Estimator est(tiny_spec(), config());
  est.train(separable_input(512, 8), {}, std::nullopt, /*max_steps=*/10);
  EXPECT_EQ(est.global_step(), 10);
  const auto before = files_matching(dir_, "");
  std::vector<std::string> log;
  RecordingHook hook("h", &log);
  est.train(separable_input(512, 8), {&hook}, std::nullopt, /*max_steps=*/10);
  EXPECT_TRUE(log.empty()) << "no hook is called when max_steps was reached";
  EXPECT_EQ(files_matching(dir_, ""), before) << "no new file";
  est.train(separable_input(512, 8), {&hook}, std::nullopt, /*max_steps=*/13);
  EXPECT_EQ(est.global_step(), 13);
}

TEST_F(EstimatorTest, LastStepBelowTheRestoredStepStopsAfterOneStep) {
  Estimator est(tiny_spec(), config());
  est.train(separable_input(512, 8), {}, /*steps=*/10);
  StopAtStepHook stop = StopAtStepHook::last_step(5);
  est.train(separable_input(512, 8), {&stop});
  EXPECT_EQ(est.global_step(), 11);
}

TEST_F(EstimatorTest, RejectsBadStepArguments) {
  Estimator est(tiny_spec(), config());
  EXPECT_THROW(est.train(separable_input(8, 4), {}, 0), InvalidArgument);
  EXPECT_THROW(est.train(separable_input(8, 4), {}, std::nullopt, -1), InvalidArgument);
  EXPECT_THROW(est.train(separable_input(8, 4), {}, 5, 5), InvalidArgument);
  EXPECT_THROW(est.evaluate(separable_input(8, 4), 0), InvalidArgument);
  RunConfig bad = config();
  bad.save_checkpoints_steps = 5;
  bad.save_checkpoints_secs = 10;
  EXPECT_THROW(Estimator(tiny_spec(), bad), InvalidArgument);
}

TEST_F(EstimatorTest, CheckpointsEveryNStepsAndPrunesToKeepCheckpointMax) {
  Estimator est(tiny_spec(), config(/*save_steps=*/5, /*keep=*/2));
  CheckpointSaverHook* saver = nullptr;
  std::vector<int64_t> saved;
  CheckpointSaverHook own(nullptr, std::nullopt, 5, [&](int64_t step) {
    saved.push_back(step);
    return false;
  });
  saver = &own;
  est.train(separable_input(512, 8), {saver}, /*steps=*/12);
  EXPECT_EQ(saved, (std::vector<int64_t>{0, 5, 10, 12}));
  EXPECT_EQ(files_matching(dir_, "model.ckpt-"),
            (std::vector<std::string>{"model.ckpt-10", "model.ckpt-12"}));
  const auto state = read_checkpoint_state(dir_);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->model_checkpoint_path, "model.ckpt-12");
  EXPECT_EQ(state->all_model_checkpoint_paths,
            (std::vector<std::string>{"model.ckpt-10", "model.ckpt-12"}));
  EXPECT_TRUE(files_matching(dir_, "checkpoint.tmp").empty());
}

TEST_F(EstimatorTest, ListenerReturningTrueStopsTrainingAtThatSave) {
  Estimator est(tiny_spec(), config());
  CheckpointSaverHook saver(nullptr, std::nullopt, 5, [](int64_t step) { return step == 5; });
  est.train(separable_input(512, 8), {&saver}, /*steps=*/100);
  EXPECT_EQ(est.global_step(), 5);
}

TEST_F(EstimatorTest, TruncatedLatestCheckpointFallsBackToThePreviousWithAMessage) {
  {
    Estimator est(tiny_spec(), config(/*save_steps=*/5));
    est.train(separable_input(512, 8), {}, /*steps=*/10);
  }
  const std::string latest = path("model.ckpt-10");
  std::filesystem::resize_file(latest, std::filesystem::file_size(latest) / 2);

  Estimator est(tiny_spec(), config(5));
  ::testing::internal::CaptureStderr();
  const EvalResult result = est.evaluate(separable_input(32, 8));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(result.at("global_step"), 5);
  EXPECT_NE(err.find("model.ckpt-10"), std::string::npos) << err;
  EXPECT_NE(err.find("falling back to checkpoint " + path("model.ckpt-5")), std::string::npos)
      << err;
  // Training resumes from the fallback too.
  ::testing::internal::CaptureStderr();
  est.train(separable_input(512, 8), {}, /*steps=*/2);
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(est.global_step(), 7);
}

TEST_F(EstimatorTest, NanLossFailsWithoutEndOrFinalCheckpoint) {
  Estimator est(tiny_spec(), config());
  std::vector<std::string> log;
  RecordingHook hook("h", &log);
  // Batches of 8; examples from 24 on are NaN, so the 4th step's loss is NaN.
  EXPECT_THROW(est.train(separable_input(64, 8, 1, /*nan_from=*/24), {&hook}, 100),
               NanLossDuringTrainingError);
  EXPECT_EQ(log.back(), "h:after_run:4");  // No end().
  EXPECT_EQ(files_matching(dir_, "model.ckpt-"), (std::vector<std::string>{"model.ckpt-0"}));
}

TEST_F(EstimatorTest, NanLossHookWithoutFailRequestsStop) {
  Estimator est(tiny_spec(), config());
  struct FakeSession final : Session {
    int64_t global_step() const override { return 4; }
    const std::string& model_dir() const override { return dir; }
    const std::string& mode() const override { return dir; }
    std::string save_checkpoint() override { return ""; }
    EventFileWriter& summary_writer() override { throw Internal("unused"); }
    std::string dir = "unused";
  } session;
  NanLossHook hook(/*fail_on_nan_loss=*/false);
  SessionRunContext context(session);
  SessionRunValues values;
  values.loss = 1.0;
  hook.after_run(context, values);
  EXPECT_FALSE(context.stop_requested());
  values.loss = std::nan("");
  hook.after_run(context, values);
  EXPECT_TRUE(context.stop_requested());
  values.loss = INFINITY;  // TensorFlow checks NaN only.
  SessionRunContext other(session);
  hook.after_run(other, values);
  EXPECT_FALSE(other.stop_requested());
}

TEST_F(EstimatorTest, EvaluateReturnsTheMeanLossOverExamplesEveryMetricAndTheGlobalStep) {
  Estimator est(tiny_spec(), config());
  est.train(separable_input(512, 8), {}, /*steps=*/5);
  // Batches of 4, 4 and 2: loss is the mean over the ten examples, as Keras weighs each batch by
  // its size (the unweighted mean of the batch losses would count the last two examples double).
  std::vector<std::string> log;
  RecordingHook hook("h", &log);
  const EvalResult result = est.evaluate(batches_input({4, 4, 2}), std::nullopt, {&hook});
  ASSERT_EQ(result.size(), 3u);
  EXPECT_EQ(result.at("global_step"), 5);
  EXPECT_GE(result.at("accuracy"), 0.0);
  EXPECT_LE(result.at("accuracy"), 1.0);

  // Recompute with the restored model by hand.
  Estimator check(tiny_spec(), config());
  double sum = 0, correct = 0;
  int n = 0;
  auto predictions = check.predict(batches_input({4, 4, 2}));
  std::vector<double> per_example;
  while (auto p = predictions.next()) {
    const auto logits = p->output.values<float>();
    const double m = std::max(logits[0], logits[1]);
    const double lse = m + std::log(std::exp(logits[0] - m) + std::exp(logits[1] - m));
    per_example.push_back(lse - logits[*p->label]);
    correct += p->class_id == *p->label;
    ++n;
  }
  ASSERT_EQ(n, 10);
  for (double loss : per_example) sum += loss;
  EXPECT_NEAR(result.at("loss"), sum / 10, 1e-5);
  const double b1 = (per_example[0] + per_example[1] + per_example[2] + per_example[3]) / 4;
  const double b2 = (per_example[4] + per_example[5] + per_example[6] + per_example[7]) / 4;
  const double b3 = (per_example[8] + per_example[9]) / 2;
  ASSERT_GT(std::abs((b1 + b2 + b3) / 3 - sum / 10), 1e-4);  // The two means differ here.
  EXPECT_NEAR(result.at("accuracy"), correct / n, 1e-6);
  EXPECT_EQ(std::count(log.begin(), log.end(), "h:end:5"), 1);

  // One event at the checkpoint's step in eval/, with loss and accuracy.
  const auto events = read_events(path("eval"));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_EQ(events[1].step(), 5);
  EXPECT_EQ(summary_steps(events, "loss"), (std::vector<int64_t>{5}));
  EXPECT_EQ(summary_steps(events, "accuracy"), (std::vector<int64_t>{5}));
  EXPECT_NEAR(events[1].summary().value(1).simple_value(), result.at("loss"), 1e-6);

  est.evaluate(batches_input({4}), std::nullopt, {}, "test");
  EXPECT_TRUE(std::filesystem::is_directory(path("eval_test")));
}

TEST_F(EstimatorTest, EvaluateStepsLimitsTheBatches) {
  Estimator est(tiny_spec(), config());
  std::vector<std::string> log;
  RecordingHook hook("h", &log);
  est.evaluate(separable_input(64, 8), 3, {&hook});
  EXPECT_EQ(std::count_if(log.begin(), log.end(),
                          [](const std::string& s) { return s.rfind("h:after_run", 0) == 0; }),
            3);
}

TEST_F(EstimatorTest, EvaluateWithoutACheckpointUsesTheInitialWeights) {
  Estimator est(tiny_spec(), config());
  const EvalResult result = est.evaluate(separable_input(16, 8));
  EXPECT_EQ(result.at("global_step"), 0);
  EXPECT_FALSE(std::filesystem::exists(path("checkpoint")));
}

TEST_F(EstimatorTest, PredictYieldsOneOutputPerExample) {
  Estimator est(tiny_spec(), config());
  est.train(separable_input(512, 8), {}, 30);
  auto predictions = est.predict(separable_input(20, 8));
  int n = 0, correct = 0;
  while (auto p = predictions.next()) {
    EXPECT_EQ(p->output.shape(), Shape({2}));
    EXPECT_EQ(p->features.shape(), Shape({4, 4, 1}));
    ASSERT_TRUE(p->label);
    correct += p->class_id == *p->label;
    ++n;
  }
  EXPECT_EQ(n, 20);
  EXPECT_GE(correct, 18);
}

TEST_F(EstimatorTest, WritesLossAndStepRateSummariesOnTheirSchedules) {
  RunConfig c = config();
  c.save_summary_steps = 5;
  c.log_step_count_steps = 10;
  Estimator est(tiny_spec(), c);
  est.train(separable_input(512, 8), {}, /*steps=*/25);
  const auto events = read_events(dir_);
  EXPECT_EQ(events.front().file_version(), "brain.Event:2");
  EXPECT_EQ(summary_steps(events, "loss"), (std::vector<int64_t>{1, 6, 11, 16, 21}));
  EXPECT_EQ(summary_steps(events, "learning_rate"), (std::vector<int64_t>{1, 6, 11, 16, 21}));
  EXPECT_EQ(summary_steps(events, "accuracy"), (std::vector<int64_t>{1, 6, 11, 16, 21}));
  // The first trigger (step 1) only sets the baseline.
  EXPECT_EQ(summary_steps(events, "global_step/sec"), (std::vector<int64_t>{11, 21}));
  int checkpoints = 0;
  for (const auto& e : events) checkpoints += e.has_session_log();
  EXPECT_EQ(checkpoints, 2);  // At session creation (0) and at the end (25).
}

TEST_F(EstimatorTest, LoggingAndTimeHistory) {
  std::ostringstream out;
  RunConfig c = config();
  c.log_step_count_steps = 3;
  c.log = &out;
  Estimator est(tiny_spec(), c);
  TimeHistoryHook history;
  est.train(separable_input(512, 8), {&history}, 7);
  const std::string text = out.str();
  EXPECT_NE(text.find("loss = "), std::string::npos);
  EXPECT_NE(text.find(", step = 1, accuracy = "), std::string::npos) << text;
  EXPECT_NE(text.find(", step = 4, "), std::string::npos) << text;
  EXPECT_NE(text.find(", step = 7, "), std::string::npos) << text;
  EXPECT_NE(text.find(" sec)"), std::string::npos) << text;
  EXPECT_NE(text.find("Saving checkpoints for 7 into"), std::string::npos) << text;
  EXPECT_NE(text.find("Loss for final step: "), std::string::npos) << text;
  EXPECT_EQ(history.step_seconds().size(), 7u);
  EXPECT_EQ(history.examples(), 56);
  EXPECT_GT(history.examples_per_second(), 0);
}

}  // namespace
}  // namespace sluice
