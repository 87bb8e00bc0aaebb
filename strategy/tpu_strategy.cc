#include "sluice/strategy/tpu_strategy.h"

#include <iostream>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/dataset/dataset.h"

namespace sluice {

TPUStrategy::TPUStrategy(const TPUClusterResolver& resolver, int threads, std::ostream* log)
    : Strategy(resolver.num_accelerators(), threads), resolver_(resolver) {
  if (log) {
    *log << "TPUStrategy: no TPU hardware is attached; the " << num_replicas_in_sync()
         << " cores of TPU system '" << resolver_.tpu() << "' are simulated on " << num_threads()
         << " CPU thread" << (num_threads() == 1 ? "" : "s") << " of " << resolver_.host() << "\n";
  }
}

void TPUStrategy::validate_input(const Dataset& dataset, bool per_replica_batches) const {
  const std::optional<int64_t> batch = dataset.static_batch_size();
  // XLA compiles every step for fixed shapes: a partial last batch would be a new program.
  if (!batch) {
    throw InvalidArgument(
        "TPUStrategy needs inputs of static shape, but the dataset's batch dimension is not "
        "static: a last batch may be partial, or a stage after the batching (such as interleave "
        "or flat_map, which cannot see into the datasets they make) hides the batches' size. "
        "Batch with drop_remainder=true after such stages, e.g. "
        "dataset.batch(batch_size, /*drop_remainder=*/true)");
  }
  const int cores = num_replicas_in_sync();
  if (!per_replica_batches && *batch % cores != 0) {
    throw InvalidArgument(str_cat("TPUStrategy: the global batch size ", *batch,
                                  " is not divisible by the ", cores,
                                  " TPU cores (num_replicas_in_sync); use a multiple of ", cores));
  }
}

}  // namespace sluice
