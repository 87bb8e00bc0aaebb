// The workers' values of one worker's share of a tensor, as a reduce-scatter brings them together
// before their sum: one pointer per worker, in worker order, with a null pointer where the worker's
// own values stand (they are the share itself, and also where the sum goes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sluice {

template <class T>
using WorkerParts = std::vector<const T*>;

// own[0, length) = the sum of the parts' elements [offset, offset + length) in worker order
// (v0 + v1 + …), the order every worker adds in, so that all get the same bits. A block at a time
// through a buffer, since `own` is both a source and the destination.
template <class T>
void add_in_worker_order(T* own, const WorkerParts<T>& parts, int64_t offset, int64_t length) {
  const auto source = [&](size_t r) { return parts[r] != nullptr ? parts[r] + offset : own; };
  constexpr int64_t kBlock = 1024;
  T block[kBlock];
  for (int64_t b = 0; b < length; b += kBlock) {
    const int64_t n = std::min(kBlock, length - b);
    std::copy(source(0) + b, source(0) + b + n, block);
    for (size_t r = 1; r < parts.size(); ++r) {
      const T* values = source(r) + b;
      for (int64_t j = 0; j < n; ++j) block[j] += values[j];
    }
    std::copy(block, block + n, own + b);
  }
}

}  // namespace sluice
