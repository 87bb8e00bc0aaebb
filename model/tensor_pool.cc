#include "sluice/model/tensor_pool.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "sluice/core/memory_block.h"

namespace sluice::internal {
namespace {

struct FreeBuffer {
  float* data;
  int64_t count;
};

// At least one element, so that an empty tensor still has a buffer to give back.
size_t buffer_bytes(int64_t count) {
  return static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float);
}

void free_buffer(const FreeBuffer& b) { free_block(b.data, buffer_bytes(b.count)); }

}  // namespace

struct TensorPool::Shared {
  std::mutex mutex;
  std::vector<FreeBuffer> free;  // At most kMaxFree.

  ~Shared() {
    for (const FreeBuffer& b : free) free_buffer(b);
  }

  // The newest buffers are kept: when the shapes change (a smaller last batch), the pool follows.
  void give_back(float* data, int64_t count) {
    std::optional<FreeBuffer> evicted;
    {
      std::lock_guard lock(mutex);
      if (free.size() == kMaxFree) {
        evicted = free.front();
        free.erase(free.begin());
      }
      free.push_back({data, count});
    }
    if (evicted) free_buffer(*evicted);
  }
};

TensorPool::TensorPool() : shared_(std::make_shared<Shared>()) {}

TensorPool::~TensorPool() = default;

Tensor TensorPool::take(const Shape& shape) {
  const int64_t count = shape.num_elements();
  float* data = nullptr;
  {
    std::lock_guard lock(shared_->mutex);
    auto& free = shared_->free;
    for (size_t i = 0; i < free.size(); ++i) {
      if (free[i].count == count) {
        data = free[i].data;
        free.erase(free.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  if (data == nullptr) data = static_cast<float*>(allocate_block(buffer_bytes(count)));
  return Tensor::from_external(DType::kFloat32, shape, data,
                               [shared = shared_, data, count] { shared->give_back(data, count); });
}

}  // namespace sluice::internal
