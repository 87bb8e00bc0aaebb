// PredictionCsv: what `sluice predict --output FILE` writes, one row per predicted example
// after a header row, as a spreadsheet or pandas.read_csv reads it:
//
//   index,label,label_name,predicted,predicted_name,confidence
//   0,9,Ankle boot,9,Ankle boot,0.981234
//
// `index` is the example's position in the predicted data; label and label_name are empty when
// the data has no labels; confidence is prediction_confidence(). Fields are quoted as RFC 4180
// says (a field holding a comma, a double quote or a line break is put in double quotes, its
// quotes doubled); rows end with "\n".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {
struct Prediction;  // estimator/estimator.h
}

namespace sluice::app {

class PredictionCsv {
 public:
  // Names class i class_names[i], and a class without a name by its id.
  explicit PredictionCsv(std::vector<std::string> class_names);

  void add(int64_t index, const Prediction& prediction, double confidence);

  // The header and every row added so far.
  const std::string& text() const { return text_; }
  int64_t rows() const { return rows_; }

  // Writes text() to `path` through a temporary file and a rename, so a reader never sees half a
  // file. Throws an Error naming the file when it cannot be written.
  void write(const std::string& path) const;

 private:
  std::vector<std::string> class_names_;
  std::string text_;
  int64_t rows_ = 0;
};

// `value` as one CSV field (RFC 4180).
std::string csv_field(std::string_view value);

}  // namespace sluice::app
