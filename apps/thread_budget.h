// --threads N, the whole process's thread budget, as a oneTBB limit held for a command's run.
#pragma once

#include <oneapi/tbb/global_control.h>

#include <cstddef>
#include <memory>

namespace sluice::app {

// Caps oneTBB's default arena (where the model's parallel loops run) at `threads` (none for 0).
// oneTBB counts the calling thread in the limit, but the input pipeline's consumer never works
// in the pipeline's arena, which needs its own worker: hence one more.
inline std::unique_ptr<oneapi::tbb::global_control> limit_threads(int threads) {
  if (threads <= 0) return nullptr;
  return std::make_unique<oneapi::tbb::global_control>(
      oneapi::tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads) + 1);
}

}  // namespace sluice::app
