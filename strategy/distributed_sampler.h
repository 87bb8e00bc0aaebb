// DistributedSampler: which example indices each of `num_replicas` processes reads in an epoch,
// with the arithmetic of PyTorch's torch.utils.data.DistributedSampler, so a PyTorch training
// script ported to sluice splits its data the same way: an optional seeded shuffle of all
// indices (torch.randperm with a generator seeded with seed + epoch, reproduced exactly), then
// either the tail dropped so every replica gets as many (drop_last) or the list padded by
// wrapping around to a multiple of the replica count, then every num_replicas-th index from
// `rank` on. Every replica computes the same permutation, so the replicas' shares are disjoint
// (without padding) and together cover the dataset.
#pragma once

#include <cstdint>
#include <vector>

namespace sluice {

class DistributedSampler {
 public:
  // Throws InvalidArgument for dataset_size < 0, num_replicas < 1 or rank outside
  // [0, num_replicas), as PyTorch raises ValueError.
  DistributedSampler(int64_t dataset_size, int num_replicas, int rank, bool shuffle = true,
                     uint64_t seed = 0, bool drop_last = false);

  // The epoch whose permutation indices() gives (PyTorch's set_epoch; 0 until called).
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  // This replica's indices for the epoch, in reading order; size() of them.
  std::vector<int64_t> indices() const;
  // Indices per replica (len() of PyTorch's sampler).
  int64_t size() const { return num_samples_; }

 private:
  int64_t dataset_size_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t epoch_ = 0;
  int64_t num_samples_ = 0;
};

// torch.randperm(n, generator=torch.Generator().manual_seed(seed)) on the CPU: a Fisher-Yates
// pass driven by a 32-bit Mersenne Twister seeded with the seed's low 32 bits.
std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed);

}  // namespace sluice
