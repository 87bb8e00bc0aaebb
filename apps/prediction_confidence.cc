#include "apps/prediction_confidence.h"

#include <algorithm>
#include <cmath>

namespace sluice::app {

double prediction_confidence(const Prediction& prediction, const Loss& loss) {
  const auto row = prediction.output.values<float>();
  if (row.empty()) return 0.0;
  double p = 0;
  if (row.size() == 1) {
    const double v = row[0];
    p = loss.from_logits() ? 1.0 / (1.0 + std::exp(-v)) : v;
    if (prediction.class_id == 0) p = 1.0 - p;
  } else {
    const size_t c = static_cast<size_t>(prediction.class_id);
    if (c >= row.size()) return 0.0;
    if (loss.name() == "nll_loss") {
      p = std::exp(static_cast<double>(row[c]));
    } else if (loss.from_logits()) {
      // softmax(row)[c], shifted by the largest logit so no exp overflows.
      const double top = *std::max_element(row.begin(), row.end());
      double sum = 0;
      for (float v : row) sum += std::exp(static_cast<double>(v) - top);
      p = std::exp(static_cast<double>(row[c]) - top) / sum;
    } else {
      p = row[c];
    }
  }
  return std::isfinite(p) ? std::clamp(p, 0.0, 1.0) : 0.0;
}

}  // namespace sluice::app
