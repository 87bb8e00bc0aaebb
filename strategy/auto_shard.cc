#include "strategy/auto_shard.h"

#include "core/errors.h"
#include "core/strings.h"
#include "dataset/dataset.h"
#include "strategy/distributed_dataset.h"

namespace sluice {
namespace {

void check_worker(int num_workers, int index) {
  if (num_workers < 1 || index < 0 || index >= num_workers) {
    throw InvalidArgument(
        str_cat("auto-shard: worker index ", index, " is outside [0, ", num_workers, ")"));
  }
}

}  // namespace

AutoShardPolicy parse_auto_shard_policy(std::string_view text) {
  if (text == "off") return AutoShardPolicy::kOff;
  if (text == "auto") return AutoShardPolicy::kAuto;
  if (text == "file") return AutoShardPolicy::kFile;
  if (text == "data") return AutoShardPolicy::kData;
  throw InvalidArgument(
      str_cat("unknown auto-shard policy '", text, "' (expected off, auto, file or data)"));
}

std::string_view auto_shard_policy_name(AutoShardPolicy policy) {
  switch (policy) {
    case AutoShardPolicy::kOff:
      return "off";
    case AutoShardPolicy::kAuto:
      return "auto";
    case AutoShardPolicy::kFile:
      return "file";
    case AutoShardPolicy::kData:
      return "data";
  }
  return "unknown";
}

AutoShardPolicy resolve_auto_shard_policy(AutoShardPolicy policy, bool file_based) {
  if (policy == AutoShardPolicy::kAuto) {
    return file_based ? AutoShardPolicy::kFile : AutoShardPolicy::kData;
  }
  if (policy == AutoShardPolicy::kFile && !file_based) {
    throw InvalidArgument(
        "auto-shard policy FILE needs a file-based source (TFRecord shards or image files); use "
        "DATA for this input");
  }
  return policy;
}

std::vector<std::string> shard_files(const std::vector<std::string>& files, int num_workers,
                                     int index) {
  check_worker(num_workers, index);
  if (static_cast<int64_t>(files.size()) < num_workers) {
    throw InvalidArgument(str_cat("auto-shard policy FILE: ", files.size(),
                                  " file(s) cannot be sharded over ", num_workers,
                                  " workers (need at least one file per worker); use DATA or OFF"));
  }
  std::vector<std::string> out;
  for (size_t i = static_cast<size_t>(index); i < files.size(); i += num_workers)
    out.push_back(files[i]);
  return out;
}

Element shard_global_batch(const Element& batch, int num_workers, int index) {
  check_worker(num_workers, index);
  if (num_workers == 1) return batch;
  return split_batch(batch, num_workers)[index];
}

Dataset shard_global_batches(const Dataset& batches, int num_workers, int index) {
  check_worker(num_workers, index);
  if (num_workers == 1) return batches;
  return batches.map([num_workers, index](Element batch) {
    return shard_global_batch(batch, num_workers, index);
  });
}

}  // namespace sluice
