#include "sluice/model/activation_layer.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <span>
#include <utility>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"

namespace sluice {
namespace {

// f(begin, end) over ranges of whole rows of `cols` elements, in parallel where there are enough:
// the functions work elementwise or row by row (softmax), so the split never changes a result.
template <class F>
void for_row_ranges(int64_t elements, int64_t cols, const F& f) {
  if (elements == 0) return;
  constexpr int64_t kGrain = 16 * 1024;
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, elements / cols, std::max<int64_t>(1, kGrain / cols)),
      [&](const auto& rows) { f(rows.begin() * cols, rows.end() * cols); });
}

}  // namespace

Shape Activation::output_shape(const Shape& input_shape) const {
  if (input_shape.rank() < 1 && (activation_ == ActivationFunction::kSoftmax ||
                                 activation_ == ActivationFunction::kLogSoftmax)) {
    throw InvalidArgument(str_cat("Activation '", name(), "': ", activation_name(activation_),
                                  " needs a class axis"));
  }
  return input_shape;
}

Tensor Activation::forward(const Tensor& input, bool training) {
  (void)training;
  prepare(input);
  Tensor output = pool_.take(input.shape());
  const int64_t cols = input.rank() > 1 ? input.dim(input.rank() - 1) : 1;
  const std::span<const float> x = input.values<float>();
  const std::span<float> y = output.values<float>();
  for_row_ranges(input.num_elements(), cols, [&](int64_t begin, int64_t end) {
    const auto n = static_cast<size_t>(end - begin);
    activation_forward(activation_, x.subspan(begin, n), cols, y.subspan(begin, n));
  });
  output_ = output;
  return output;
}

Tensor Activation::backward(const Tensor& grad_output) {
  if (grad_output.shape() != output_.shape()) {
    throw InvalidArgument(str_cat("Activation '", name(), "' backward: gradient of shape ",
                                  grad_output.shape().to_string(), " for an output of shape ",
                                  output_.shape().to_string()));
  }
  Tensor grad_input = pool_.take(output_.shape());
  const int64_t cols = output_.rank() > 1 ? output_.dim(output_.rank() - 1) : 1;
  const std::span<const float> y = std::as_const(output_).values<float>();
  const std::span<const float> dy = grad_output.values<float>();
  const std::span<float> dx = grad_input.values<float>();
  for_row_ranges(output_.num_elements(), cols, [&](int64_t begin, int64_t end) {
    const auto n = static_cast<size_t>(end - begin);
    activation_backward(activation_, y.subspan(begin, n), dy.subspan(begin, n), cols,
                        dx.subspan(begin, n));
  });
  return grad_input;
}

}  // namespace sluice
