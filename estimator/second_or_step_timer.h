// SecondOrStepTimer: "every N steps or every N seconds", the trigger most built-in hooks share
// (tf.compat.v1.train.SecondOrStepTimer). It fires on the first step it is asked about, never twice
// for one step, and then when N steps or N seconds have passed since it last fired.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

namespace sluice {

class SecondOrStepTimer {
 public:
  // Exactly one of the two must be positive; throws InvalidArgument otherwise.
  SecondOrStepTimer(std::optional<double> every_secs, std::optional<int64_t> every_steps);

  bool should_trigger_for_step(int64_t step) const;
  // Whether it fires by seconds (each process by its own clock) rather than by steps.
  bool counts_seconds() const { return every_secs_.has_value(); }
  // Marks `step` as triggered now; returns (seconds, steps) since the previous trigger, or
  // nullopt on the first.
  std::optional<std::pair<double, int64_t>> update_last_triggered_step(int64_t step);
  std::optional<int64_t> last_triggered_step() const { return last_step_; }
  void reset() { last_step_.reset(); }

 private:
  using Clock = std::chrono::steady_clock;
  std::optional<double> every_secs_;
  std::optional<int64_t> every_steps_;
  std::optional<int64_t> last_step_;
  Clock::time_point last_time_{};
};

}  // namespace sluice
