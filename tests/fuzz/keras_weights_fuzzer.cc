// Fuzzes load_weights: the input is written as an HDF5 file and loaded, in order and by name,
// into the small model of keras_model.h. The first byte picks the mode; the rest is the file. A
// failed load must leave the model's weights unchanged.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "model/keras_json.h"
#include "model/keras_weights.h"
#include "tests/fuzz/fuzzing.h"
#include "tests/fuzz/keras_model.h"

namespace {

std::vector<float> snapshot(sluice::Sequential& model) {
  std::vector<float> values;
  for (sluice::Parameter* p : model.parameters()) {
    const auto v = p->value.values<float>();
    values.insert(values.end(), v.begin(), v.end());
  }
  return values;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static sluice::Sequential model = sluice::model_from_json(sluice::fuzzing::kSmallKerasModel, 1);
  const bool by_name = data[0] & 1;
  const std::string path = sluice::fuzzing::write_input("weights.h5", data + 1, size - 1);
  const std::vector<float> before = snapshot(model);
  bool loaded = false;
  sluice::fuzzing::expect_only_sluice_errors([&] {
    sluice::load_weights(model, path, {.by_name = by_name});
    loaded = true;
  });
  if (!loaded) {
    const std::vector<float> after = snapshot(model);
    if (after.size() != before.size() ||
        std::memcmp(after.data(), before.data(), before.size() * sizeof(float)) != 0) {
      sluice::fuzzing::finding("a failed load_weights changed the model");
    }
  }
  return 0;
}
