#include "ops/color.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/errors.h"
#include "core/strings.h"
#include "ops/convert.h"
#include "ops/image_shape.h"

namespace sluice {
namespace {

int64_t last_dim(const Tensor& t) { return t.rank() == 0 ? 0 : t.dim(t.rank() - 1); }

void check_last_dim(const Tensor& t, int64_t size, const char* op) {
  if (t.dtype() == DType::kString || last_dim(t) != size) {
    throw InvalidArgument(str_cat(op, ": expected numbers with a last axis of size ", size,
                                  ", got ", dtype_name(t.dtype()), t.shape()));
  }
}

// Runs `adjust` on a float32 version of the image and converts the result back to its dtype.
template <class F>
Tensor in_float(const Tensor& image, const char* op, F adjust) {
  if (image.dtype() != DType::kUInt8 && image.dtype() != DType::kFloat32) {
    throw InvalidArgument(str_cat(op, ": expected a uint8 or float32 image, got ",
                                  dtype_name(image.dtype()), image.shape()));
  }
  Tensor values = convert_image_dtype(image, DType::kFloat32);
  // Work in place when the float values are already a copy of our own.
  Tensor adjusted =
      image.dtype() == DType::kFloat32 ? Tensor(DType::kFloat32, image.shape()) : values;
  adjust(values.data<float>(), adjusted.data<float>());
  return convert_image_dtype(adjusted, image.dtype());
}

}  // namespace

Tensor grayscale_to_rgb(const Tensor& images) {
  check_last_dim(images, 1, "grayscale_to_rgb");
  std::vector<int64_t> dims(images.shape().dims().begin(), images.shape().dims().end());
  dims.back() = 3;
  Tensor result(images.dtype(), Shape(dims));
  const size_t element = dtype_size(images.dtype());
  const auto* in = static_cast<const unsigned char*>(images.raw_data());
  auto* out = static_cast<unsigned char*>(result.raw_data());
  for (int64_t i = 0; i < images.num_elements(); ++i) {
    for (int c = 0; c < 3; ++c) std::memcpy(out + (3 * i + c) * element, in + i * element, element);
  }
  return result;
}

Tensor rgb_to_grayscale(const Tensor& images) {
  check_last_dim(images, 3, "rgb_to_grayscale");
  std::vector<int64_t> dims(images.shape().dims().begin(), images.shape().dims().end());
  dims.back() = 1;
  const Tensor rgb = convert_image_dtype(images, DType::kFloat32);
  Tensor gray(DType::kFloat32, Shape(dims));
  const float* in = rgb.data<float>();
  float* out = gray.data<float>();
  for (int64_t i = 0; i < gray.num_elements(); ++i) {
    out[i] = in[3 * i] * 0.2989f + in[3 * i + 1] * 0.5870f + in[3 * i + 2] * 0.1140f;
  }
  return convert_image_dtype(gray, images.dtype());
}

Tensor adjust_brightness(const Tensor& image, float delta) {
  const int64_t n = image.num_elements();
  return in_float(image, "adjust_brightness", [&](const float* in, float* out) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] + delta;
  });
}

Tensor adjust_contrast(const Tensor& images, float contrast_factor) {
  const ImageShape s = image_shape(images, "adjust_contrast");
  return in_float(images, "adjust_contrast", [&](const float* in, float* out) {
    const int64_t pixels = s.height * s.width, c_count = s.channels;
    std::vector<double> sum(c_count);
    std::vector<float> mean(c_count);
    for (int64_t n = 0; n < s.batch; ++n) {
      const float* image = in + n * s.image_elements();
      float* result = out + n * s.image_elements();
      std::fill(sum.begin(), sum.end(), 0.0);
      for (int64_t p = 0; p < pixels; ++p) {
        for (int64_t c = 0; c < c_count; ++c) sum[c] += image[p * c_count + c];
      }
      for (int64_t c = 0; c < c_count; ++c) {
        mean[c] = static_cast<float>(sum[c] / static_cast<double>(pixels));
      }
      for (int64_t p = 0; p < pixels; ++p) {
        for (int64_t c = 0; c < c_count; ++c) {
          const int64_t i = p * c_count + c;
          result[i] = (image[i] - mean[c]) * contrast_factor + mean[c];
        }
      }
    }
  });
}

Tensor random_brightness(const Tensor& image, float max_delta, Random& random) {
  if (!(max_delta >= 0.0f)) {
    throw InvalidArgument(
        str_cat("random_brightness: max_delta must be non-negative, got ", max_delta));
  }
  return adjust_brightness(image, random.uniform(-max_delta, max_delta));
}

Tensor random_brightness(const Tensor& image, float max_delta, uint64_t seed) {
  Random random(seed);
  return random_brightness(image, max_delta, random);
}

Tensor random_contrast(const Tensor& images, float lower, float upper, Random& random) {
  if (!(lower >= 0.0f && upper > lower)) {
    throw InvalidArgument(str_cat("random_contrast: expected 0 <= lower < upper, got lower ", lower,
                                  " upper ", upper));
  }
  return adjust_contrast(images, random.uniform(lower, upper));
}

Tensor random_contrast(const Tensor& images, float lower, float upper, uint64_t seed) {
  Random random(seed);
  return random_contrast(images, lower, upper, random);
}

}  // namespace sluice
