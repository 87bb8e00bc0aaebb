// `sluice predict`: predicts the test split with the latest checkpoint of a model_dir and draws
// the tutorials' result plot: a 5×5 grid of test images, each titled "actual/predicted" class
// ids, framed blue when right and red when wrong.
#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/model_setup.h"
#include "apps/report.h"
#include "apps/train_data.h"
#include "core/errors.h"
#include "estimator/estimator.h"
#include "formats/png.h"

namespace sluice::app {
namespace {

constexpr int kGrid = 5;
constexpr int kCell = 64;      // Pixels per grid cell, image and frame.
constexpr int kTitle = 14;     // Title strip above each image.
constexpr int kGlyphScale = 2;

// 3×5 bitmap glyphs for the title: digits and '/', one row per 3 bits (MSB left).
std::array<uint8_t, 5> glyph(char c) {
  static const std::array<std::array<uint8_t, 5>, 11> kGlyphs = {{
      {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
      {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
      {1, 1, 2, 4, 4},
  }};
  return c == '/' ? kGlyphs[10] : kGlyphs[static_cast<size_t>(c - '0')];
}

struct Canvas {
  int width, height;
  Tensor pixels;  // uint8 [height, width, 3]
  Canvas(int w, int h) : width(w), height(h), pixels(DType::kUInt8, {h, w, 3}) {
    for (uint8_t& v : pixels.values<uint8_t>()) v = 255;
  }
  void set(int x, int y, std::array<uint8_t, 3> rgb) {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    uint8_t* p = pixels.data<uint8_t>() + (static_cast<size_t>(y) * width + x) * 3;
    p[0] = rgb[0], p[1] = rgb[1], p[2] = rgb[2];
  }
  void text(int x, int y, const std::string& s, std::array<uint8_t, 3> rgb) {
    for (char c : s) {
      const auto g = glyph(c);
      for (int row = 0; row < 5; ++row) {
        for (int col = 0; col < 3; ++col) {
          if (!(g[row] >> (2 - col) & 1)) continue;
          for (int dy = 0; dy < kGlyphScale; ++dy) {
            for (int dx = 0; dx < kGlyphScale; ++dx) {
              set(x + col * kGlyphScale + dx, y + row * kGlyphScale + dy, rgb);
            }
          }
        }
      }
      x += 4 * kGlyphScale;
    }
  }
};

// Draws one example (float [h, w, c] in [0, 1]) into the cell at (gx, gy).
void draw_cell(Canvas& canvas, int gx, int gy, const Prediction& p) {
  const bool right = p.label && *p.label == p.class_id;
  const std::array<uint8_t, 3> color = right ? std::array<uint8_t, 3>{30, 90, 220}
                                             : std::array<uint8_t, 3>{220, 40, 40};
  const int x0 = gx * kCell, y0 = gy * (kCell + kTitle);
  const std::string title =
      (p.label ? std::to_string(*p.label) : std::string("")) + "/" + std::to_string(p.class_id);
  canvas.text(x0 + 4, y0 + 2, title, color);
  const Tensor& image = p.features;
  const int h = static_cast<int>(image.dim(0)), w = static_cast<int>(image.dim(1));
  const int c = image.rank() > 2 ? static_cast<int>(image.dim(2)) : 1;
  const int inner = kCell - 6;
  const int scale = std::max(1, std::min(inner / std::max(h, 1), inner / std::max(w, 1)));
  const int ix = x0 + 3 + (inner - w * scale) / 2, iy = y0 + kTitle + 3 + (inner - h * scale) / 2;
  for (int i = -2; i < inner + 2; ++i) {  // A two-pixel frame in the verdict's colour.
    for (int t = 0; t < 2; ++t) {
      canvas.set(x0 + 1 + i, y0 + kTitle + 1 + t, color);
      canvas.set(x0 + 1 + i, y0 + kTitle + kCell - 2 - t, color);
      canvas.set(x0 + 1 + t, y0 + kTitle + 1 + i, color);
      canvas.set(x0 + kCell - 2 - t, y0 + kTitle + 1 + i, color);
    }
  }
  const float* v = image.data<float>();
  for (int y = 0; y < h * scale; ++y) {
    for (int x = 0; x < w * scale; ++x) {
      const float* px = v + (static_cast<size_t>(y / scale) * w + x / scale) * c;
      std::array<uint8_t, 3> rgb;
      for (int k = 0; k < 3; ++k) {
        const float f = std::clamp(px[c >= 3 ? k : 0], 0.0f, 1.0f);
        rgb[static_cast<size_t>(k)] = static_cast<uint8_t>(f * 255.0f + 0.5f);
      }
      canvas.set(ix + x, iy + y, rgb);
    }
  }
}

struct PredictFlags {
  std::string model_dir;
  std::string data;
  std::string grid;
  bool json = false;
};

void run_predict(const PredictFlags& flags) {
  ModelChoice choice = load_model_choice(flags.model_dir);
  if (!flags.data.empty()) choice.data = flags.data;
  const TrainData data = open_train_data(choice.data, choice.batch, kAutotune);
  RunConfig config;
  config.model_dir = flags.model_dir;
  Estimator estimator(make_model_spec(choice), config);
  Predictions predictions = estimator.predict(data.test);
  Canvas canvas(kGrid * kCell, kGrid * (kCell + kTitle));
  int64_t images = 0, labelled = 0, correct = 0;
  while (auto p = predictions.next()) {
    if (images < kGrid * kGrid) {
      draw_cell(canvas, static_cast<int>(images % kGrid), static_cast<int>(images / kGrid), *p);
      auto name = [&](int64_t id) {
        return id >= 0 && id < static_cast<int64_t>(data.class_names.size())
                   ? data.class_names[static_cast<size_t>(id)]
                   : std::to_string(id);
      };
      std::printf("%lld: actual %s, predicted %s\n", static_cast<long long>(images),
                  p->label ? name(*p->label).c_str() : "?", name(p->class_id).c_str());
    }
    ++images;
    if (p->label) {
      ++labelled;
      correct += *p->label == p->class_id;
    }
  }
  if (!flags.grid.empty()) {
    std::ofstream out(flags.grid, std::ios::binary | std::ios::trunc);
    out << encode_png(canvas.pixels);
    if (!out) throw Internal("cannot write --grid " + flags.grid);
    std::printf("grid of the first %d test images written to %s (titles: actual/predicted; "
                "blue right, red wrong)\n", kGrid * kGrid, flags.grid.c_str());
  }
  Report report;
  report.add("images", static_cast<long long>(images));
  report.add("accuracy", labelled > 0 ? double(correct) / double(labelled) : 0.0, 4);
  report.print(flags.json);
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto flags = std::make_shared<PredictFlags>();
  CLI::App* cmd = app.add_subcommand(
      "predict", "Predict the test split with the latest checkpoint of a model_dir and draw a "
                 "5x5 grid of results");
  cmd->add_option("--model-dir", flags->model_dir, "the directory train wrote")->required();
  cmd->add_option("--data", flags->data, "data to predict (default: the training data's test split)");
  cmd->add_option("--grid", flags->grid, "write the 5x5 PNG grid here");
  cmd->add_flag("--json", flags->json, "print the last line as one JSON object");
  cmd->callback([flags] { run_predict(*flags); });
}

}  // namespace sluice::app
