// InputContext: what Strategy::distribute_datasets_from_function tells the dataset function, as
// tf.distribute.InputContext — how many input pipelines there are, which one this is, and the
// replica count, so the function can shard its input and batch with the per-replica size.
#pragma once

#include <cstdint>

namespace sluice {

class InputContext {
 public:
  // Throws InvalidArgument unless 0 <= input_pipeline_id < num_input_pipelines and
  // num_replicas_in_sync >= num_input_pipelines >= 1.
  InputContext(int num_input_pipelines = 1, int input_pipeline_id = 0,
               int num_replicas_in_sync = 1);

  int num_input_pipelines() const { return num_input_pipelines_; }
  int input_pipeline_id() const { return input_pipeline_id_; }
  int num_replicas_in_sync() const { return num_replicas_in_sync_; }

  // global_batch_size / num_replicas_in_sync. Throws InvalidArgument (naming both numbers) for a
  // global batch size that is negative or not divisible by the replica count.
  int64_t get_per_replica_batch_size(int64_t global_batch_size) const;

 private:
  int num_input_pipelines_;
  int input_pipeline_id_;
  int num_replicas_in_sync_;
};

}  // namespace sluice
