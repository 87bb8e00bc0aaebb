// The shape of a Tensor: up to kMaxRank non-negative dimensions, stored inline so that making,
// copying and comparing shapes never allocates.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>

namespace sluice {

class Shape {
 public:
  static constexpr int kMaxRank = 8;

  Shape() = default;  // A scalar: rank 0, one element.
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);

  int rank() const { return rank_; }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t operator[](int i) const { return dims_[i]; }
  std::span<const int64_t> dims() const { return {dims_.data(), static_cast<size_t>(rank_)}; }
  int64_t num_elements() const;

  // REQUIRES: 0 <= i < rank(), size >= 0.
  void set_dim(int i, int64_t size);
  // [n] + this shape. Throws InvalidArgument if the rank would pass kMaxRank.
  Shape prepend(int64_t n) const;
  // This shape without its first dimension. REQUIRES: rank() >= 1.
  Shape drop_first() const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  std::string to_string() const;  // "[2, 3]", "[]" for a scalar.

 private:
  void assign(std::span<const int64_t> dims);

  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

std::ostream& operator<<(std::ostream& out, const Shape& shape);

}  // namespace sluice
