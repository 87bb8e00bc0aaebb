// TensorList: the tensors of one element, contiguous, the first held inline (a small vector of
// tensors), so that an element of one component costs no allocation of its own.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

#include "sluice/core/tensor.h"

namespace sluice {

// The tensors of one element, contiguous, the first held inline: an element of one component (a
// scalar from range, a decoded image, a batch) costs no allocation of its own, which per element
// of a cheap pipeline is as much as the work (and more once a second thread makes the allocator
// lock). Elements of more components keep them all on the heap.
class TensorList {
 public:
  TensorList() = default;
  explicit TensorList(Tensor only) : first_(std::move(only)), size_(1) {}
  TensorList(std::initializer_list<Tensor> tensors) {
    reserve(tensors.size());
    for (const Tensor& t : tensors) push_back(t);
  }
  explicit TensorList(std::vector<Tensor> tensors) {
    if (tensors.size() == 1) {
      first_ = std::move(tensors[0]);
      size_ = 1;
    } else {
      rest_ = std::move(tensors);
      size_ = rest_.size();
    }
  }
  TensorList(const TensorList&) = default;
  TensorList(TensorList&& other) noexcept
      : first_(std::move(other.first_)),
        rest_(std::move(other.rest_)),
        size_(std::exchange(other.size_, 0)) {}
  TensorList& operator=(const TensorList&) = default;
  TensorList& operator=(TensorList&& other) noexcept {
    if (this != &other) {
      first_ = std::move(other.first_);
      rest_ = std::move(other.rest_);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Tensor* begin() { return rest_.empty() ? &first_ : rest_.data(); }
  Tensor* end() { return begin() + size_; }
  const Tensor* begin() const { return rest_.empty() ? &first_ : rest_.data(); }
  const Tensor* end() const { return begin() + size_; }
  Tensor& operator[](size_t i) { return begin()[i]; }
  const Tensor& operator[](size_t i) const { return begin()[i]; }

  void reserve(size_t n) {
    if (n > 1) rest_.reserve(n);
  }
  void push_back(Tensor tensor) {
    if (size_ == 0) {
      first_ = std::move(tensor);
    } else {
      if (size_ == 1) rest_.push_back(std::move(first_));
      rest_.push_back(std::move(tensor));
    }
    ++size_;
  }

 private:
  Tensor first_;              // The tensor of a list of one (rest_ empty).
  std::vector<Tensor> rest_;  // Every tensor of a longer list.
  size_t size_ = 0;
};

}  // namespace sluice
