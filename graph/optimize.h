// Static rewrites of a plan before it runs, as tf.data's graph optimizations, applied to the
// iterator's plan and to every dataset a stage makes while running (ExecContext::prepare). None
// changes what a pipeline produces; each removes work or a hand-off between threads:
//   - no-op elimination: take(-1), skip(0), repeat(1), prefetch(0), with_options();
//   - map fusion: adjacent maps of the same kind become one stage running both functions;
//   - map_and_batch fusion: a parallel map followed by batch maps each batch in one task and
//     writes the results straight into the batch;
//   - shuffle_and_repeat fusion: shuffle(reshuffle_each_iteration) followed by repeat;
//   - prefetch folding: a prefetch right after map_and_batch enlarges that stage's buffer, by
//     its size or, for AUTOTUNE, by batches tuned as the prefetch would tune its own.
#pragma once

#include "sluice/graph/options.h"
#include "sluice/graph/plan.h"

namespace sluice {

// The options of every with_options() in the plan merged, the outermost winning.
Options collect_options(const PlanPtr& plan);

PlanPtr optimize(const PlanPtr& plan);

}  // namespace sluice
