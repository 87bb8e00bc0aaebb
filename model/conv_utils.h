// Window geometry shared by convolution and pooling, as TensorFlow computes it
// (GetWindowedOutputSizeVerboseV2): `valid` takes only whole windows; `same` gives ceil(in/stride)
// outputs and splits the padding with the extra pixel after (bottom/right), unlike PyTorch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace sluice {

enum class Padding { kValid, kSame };

// "valid" / "same"; throws Unimplemented otherwise.
Padding padding_from_name(std::string_view name);
std::string_view padding_name(Padding padding);

// A height × width pair; a single number means a square.
struct Size2D {
  Size2D(int64_t size) : height(size), width(size) {}  // NOLINT: implicit, as Keras' ints.
  Size2D(int64_t h, int64_t w) : height(h), width(w) {}
  int64_t height;
  int64_t width;
  bool operator==(const Size2D&) const = default;
};

struct WindowGeometry {
  int64_t output = 0;      // Output length; 0 when the window does not fit (valid).
  int64_t pad_before = 0;  // Padding at the top/left.
  int64_t pad_after = 0;   // Padding at the bottom/right (>= pad_before).
  int64_t input = 0;
  int64_t window = 1;
  int64_t stride = 1;

  // The input positions [begin, end) that output position o covers, padding left out.
  struct Span {
    int64_t begin;
    int64_t end;
  };
  Span span(int64_t o) const {
    const int64_t start = o * stride - pad_before;
    return {std::max<int64_t>(0, start), std::min(input, start + window)};
  }
};

// REQUIRES: input >= 0, window >= 1, stride >= 1.
WindowGeometry window_geometry(int64_t input, int64_t window, int64_t stride, Padding padding);

}  // namespace sluice
