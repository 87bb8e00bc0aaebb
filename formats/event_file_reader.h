// Reading TensorBoard event files back: the scalar summaries of every events.out.tfevents.* file
// of a directory, by step and tag — what tf.estimator's early-stopping hooks read from an
// evaluation directory (read_eval_metrics), so they work across processes and restarts.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace sluice {

// Step → tag → value of every simple_value summary in the event files directly in `dir`, files
// read in name order (later values of a step and tag replace earlier ones, as TensorBoard shows
// them). A missing directory gives an empty map. Throws DataLoss naming the file for a corrupt
// record or an unparsable Event.
std::map<int64_t, std::map<std::string, float>> read_scalar_summaries(const std::string& dir);

}  // namespace sluice
