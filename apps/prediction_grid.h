// PredictionGrid: the tutorials' result plot — a 5×5 grid of test images, each titled with its
// "actual/predicted" class ids and framed blue when the prediction is right, red when wrong —
// drawn into an RGB image and written as a PNG. Used by `sluice predict --grid` and the examples.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/tensor.h"

namespace sluice {
struct Prediction;  // estimator/estimator.h
}

namespace sluice::app {

class PredictionGrid {
 public:
  static constexpr int kSize = 5;  // Cells per side.

  PredictionGrid();

  // Draws the next cell (row by row): `image` float32 [h, w, c] with c 1 or 3, values in [0, 1]
  // (clamped), scaled up by a whole factor to fill the cell. An unknown label titles "/predicted"
  // and frames red. Returns false, drawing nothing, once the grid is full. Throws InvalidArgument
  // for another dtype or rank.
  bool add(const Tensor& image, std::optional<int64_t> label, int64_t predicted);
  bool add(const Prediction& prediction);

  int cells() const { return cells_; }
  bool full() const { return cells_ >= kSize * kSize; }
  // uint8 [height, width, 3].
  const Tensor& pixels() const { return pixels_; }

  // Writes pixels() as a PNG, replacing `path`. Throws InvalidArgument when it cannot be written.
  void write_png(const std::string& path) const;

 private:
  Tensor pixels_;
  int cells_ = 0;
};

}  // namespace sluice::app
