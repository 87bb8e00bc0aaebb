#include "apps/prediction_grid.h"

#include <algorithm>
#include <array>
#include <fstream>

#include "core/errors.h"
#include "estimator/estimator.h"
#include "formats/png.h"

namespace sluice::app {
namespace {

constexpr int kCell = 64;   // Pixels per grid cell, image and frame.
constexpr int kTitle = 14;  // Title strip above each image.
constexpr int kGlyphScale = 2;
constexpr int kWidth = PredictionGrid::kSize * kCell;
constexpr int kHeight = PredictionGrid::kSize * (kCell + kTitle);

using Rgb = std::array<uint8_t, 3>;

// 3×5 bitmap glyphs for the title: digits and '/', one row per 3 bits (MSB left).
std::array<uint8_t, 5> glyph(char c) {
  static const std::array<std::array<uint8_t, 5>, 11> kGlyphs = {{
      {7, 5, 5, 5, 7},
      {2, 6, 2, 2, 7},
      {7, 1, 7, 4, 7},
      {7, 1, 7, 1, 7},
      {5, 5, 7, 1, 1},
      {7, 4, 7, 1, 7},
      {7, 4, 7, 5, 7},
      {7, 1, 1, 1, 1},
      {7, 5, 7, 5, 7},
      {7, 5, 7, 1, 7},
      {1, 1, 2, 4, 4},
  }};
  return c == '/' ? kGlyphs[10] : kGlyphs[static_cast<size_t>(c - '0')];
}

void set(Tensor& pixels, int x, int y, Rgb rgb) {
  if (x < 0 || y < 0 || x >= kWidth || y >= kHeight) return;
  uint8_t* p = pixels.data<uint8_t>() + (static_cast<size_t>(y) * kWidth + x) * 3;
  p[0] = rgb[0], p[1] = rgb[1], p[2] = rgb[2];
}

void text(Tensor& pixels, int x, int y, const std::string& s, Rgb rgb) {
  for (char c : s) {
    const auto g = glyph(c);
    for (int row = 0; row < 5; ++row) {
      for (int col = 0; col < 3; ++col) {
        if (!(g[row] >> (2 - col) & 1)) continue;
        for (int dy = 0; dy < kGlyphScale; ++dy) {
          for (int dx = 0; dx < kGlyphScale; ++dx) {
            set(pixels, x + col * kGlyphScale + dx, y + row * kGlyphScale + dy, rgb);
          }
        }
      }
    }
    x += 4 * kGlyphScale;
  }
}

}  // namespace

PredictionGrid::PredictionGrid() : pixels_(DType::kUInt8, {kHeight, kWidth, 3}) {
  for (uint8_t& v : pixels_.values<uint8_t>()) v = 255;
}

bool PredictionGrid::add(const Prediction& prediction) {
  return add(prediction.features, prediction.label, prediction.class_id);
}

bool PredictionGrid::add(const Tensor& image, std::optional<int64_t> label, int64_t predicted) {
  if (full()) return false;
  if (image.dtype() != DType::kFloat32 || image.rank() < 2 || image.rank() > 3 ||
      (image.rank() == 3 && image.dim(2) != 1 && image.dim(2) < 3)) {
    throw InvalidArgument("PredictionGrid: expected a float32 image [h, w, 1 or 3], got " +
                          image.debug_string(0));
  }
  const int gx = cells_ % kSize, gy = cells_ / kSize;
  ++cells_;
  const bool right = label && *label == predicted;
  const Rgb color = right ? Rgb{30, 90, 220} : Rgb{220, 40, 40};
  const int x0 = gx * kCell, y0 = gy * (kCell + kTitle);
  const std::string title =
      (label ? std::to_string(*label) : std::string()) + "/" + std::to_string(predicted);
  text(pixels_, x0 + 4, y0 + 2, title, color);
  const int h = static_cast<int>(image.dim(0)), w = static_cast<int>(image.dim(1));
  const int c = image.rank() > 2 ? static_cast<int>(image.dim(2)) : 1;
  // The image is scaled by a whole factor to fill the cell, or shrunk to fit when larger.
  const int inner = kCell - 6;
  const int scale = std::max(1, std::min(inner / std::max(h, 1), inner / std::max(w, 1)));
  int shown_h = h * scale, shown_w = w * scale;
  if (shown_h > inner || shown_w > inner) {
    const int longest = std::max(h, w);
    shown_h = std::max(1, h * inner / longest), shown_w = std::max(1, w * inner / longest);
  }
  for (int i = -2; i < inner + 2; ++i) {  // A two-pixel frame in the verdict's colour.
    for (int t = 0; t < 2; ++t) {
      set(pixels_, x0 + 1 + i, y0 + kTitle + 1 + t, color);
      set(pixels_, x0 + 1 + i, y0 + kTitle + kCell - 2 - t, color);
      set(pixels_, x0 + 1 + t, y0 + kTitle + 1 + i, color);
      set(pixels_, x0 + kCell - 2 - t, y0 + kTitle + 1 + i, color);
    }
  }
  const int sx = x0 + 3 + (inner - shown_w) / 2, sy = y0 + kTitle + 3 + (inner - shown_h) / 2;
  const float* v = image.data<float>();
  for (int y = 0; y < shown_h; ++y) {
    for (int x = 0; x < shown_w; ++x) {
      const size_t source = static_cast<size_t>(y * h / shown_h) * w + x * w / shown_w;
      const float* px = v + source * c;
      Rgb rgb;
      for (int k = 0; k < 3; ++k) {
        const float f = std::clamp(px[c >= 3 ? k : 0], 0.0f, 1.0f);
        rgb[static_cast<size_t>(k)] = static_cast<uint8_t>(f * 255.0f + 0.5f);
      }
      set(pixels_, sx + x, sy + y, rgb);
    }
  }
  return true;
}

void PredictionGrid::write_png(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << encode_png(pixels_);
  if (!out) throw InvalidArgument("PredictionGrid: cannot write " + path);
}

}  // namespace sluice::app
