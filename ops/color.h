// Colour ops of tf.image: grayscale_to_rgb, rgb_to_grayscale (ITU-R 601 luma weights 0.2989,
// 0.5870, 0.1140), adjust_brightness / adjust_contrast and their random versions. uint8 images
// are adjusted in float32 and converted back with saturation, as TF; float32 ones stay float32.
#pragma once

#include <cstdint>

#include "core/random.h"
#include "core/tensor.h"

namespace sluice {

// Repeats the single channel (last axis of size 1) three times. Any numeric dtype.
Tensor grayscale_to_rgb(const Tensor& images);
// The weighted sum of the three channels (last axis of size 3), keeping the dtype and a last axis
// of size 1.
Tensor rgb_to_grayscale(const Tensor& images);

// Adds `delta` to every value of the float32 image (in [0, 1] units for a uint8 one).
Tensor adjust_brightness(const Tensor& image, float delta);
// x -> (x - mean) * contrast_factor + mean, the mean taken per image and channel over height and
// width. REQUIRES an image [H, W, C] or batch [N, H, W, C].
Tensor adjust_contrast(const Tensor& images, float contrast_factor);

// adjust_brightness by one delta drawn uniformly from [-max_delta, max_delta). Throws
// InvalidArgument for a negative max_delta.
Tensor random_brightness(const Tensor& image, float max_delta, Random& random);
Tensor random_brightness(const Tensor& image, float max_delta, uint64_t seed);
// adjust_contrast by one factor drawn uniformly from [lower, upper). Throws InvalidArgument unless
// 0 <= lower < upper.
Tensor random_contrast(const Tensor& images, float lower, float upper, Random& random);
Tensor random_contrast(const Tensor& images, float lower, float upper, uint64_t seed);

}  // namespace sluice
