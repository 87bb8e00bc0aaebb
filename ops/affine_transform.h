// The geometry of Keras' ImageDataGenerator: rotation, shift, shear, zoom and flips composed into
// one affine map from output to input pixel coordinates and applied in a single bilinear
// resampling pass (scipy.ndimage.affine_transform with order=1, as Keras' interpolation_order=1).
// The random draw (random_transform_params) is separate from the application, as Keras'
// get_random_transform / apply_transform.
#pragma once

#include <cstdint>

#include "sluice/core/random.h"
#include "sluice/core/tensor.h"

namespace sluice {

// How pixels that map outside the input are filled (Keras' fill_mode, passed to scipy as mode):
// kNearest repeats the edge (aaaa|abcd|dddd), kConstant uses cval (no blending across the edge),
// kReflect mirrors about the edge (dcba|abcd|dcba), kWrap wraps with scipy's "wrap" period of
// size - 1 (the first and last pixel overlap).
enum class FillMode { kNearest, kConstant, kReflect, kWrap };

// One transform, in Keras' units. Angles are in DEGREES. tx is the shift drawn from
// height_shift_range and ty from width_shift_range, in pixels; zx and zy are zoom factors (> 1
// shows a larger area: the content shrinks).
//
// Axes follow keras-preprocessing >= 1.1.2 and tf-keras exactly: the matrix is built in an (x, y)
// frame centred on (height / 2 - 0.5, width / 2 - 0.5) and then permuted to (row, column), so tx
// and zx act on columns, ty and zy on rows, and for non-square images the centre is transposed.
// Square images (the usual case) are unaffected by this quirk.
struct AffineTransformParams {
  double theta = 0;  // Rotation, degrees.
  double tx = 0;
  double ty = 0;
  double shear = 0;  // Shear angle, degrees.
  double zx = 1;
  double zy = 1;
  bool flip_horizontal = false;  // Reverse the columns (after the affine map, as Keras).
  bool flip_vertical = false;    // Reverse the rows.
};

// Keras' zoom_range: a float z means [1 - z, 1 + z]; two values are the bounds as given.
struct ZoomRange {
  ZoomRange(double z = 0) : lower(1 - z), upper(1 + z) {}  // NOLINT: implicit, as Keras' float.
  ZoomRange(double lower_bound, double upper_bound) : lower(lower_bound), upper(upper_bound) {}
  double lower;
  double upper;
};

// The geometric arguments of ImageDataGenerator, with Keras' meanings and defaults.
struct RandomTransformOptions {
  double rotation_range = 0;  // theta ~ U(-r, r) degrees.
  // A shift range below 1 is a fraction of the image size, 1 or more a number of pixels; the
  // shift is drawn from U(-r, r).
  double width_shift_range = 0;
  double height_shift_range = 0;
  double shear_range = 0;  // Degrees, as Keras >= 2.1.3: 0.2 means at most 0.2 degrees.
  ZoomRange zoom_range = 0;
  bool horizontal_flip = false;  // Each flips with probability 0.5.
  bool vertical_flip = false;
};

// Throws InvalidArgument for negative ranges or zoom bounds that are not positive and ordered.
void check_random_transform_options(const RandomTransformOptions& options);

// Draws one transform for an image of height × width in Keras' order: rotation, height shift,
// width shift, shear, zoom (zx then zy, independent), horizontal flip, vertical flip. A draw is
// made only when its range is non-zero (zoom: unless both bounds are 1); the two flip draws are
// always made, so enabling a flip does not shift the other draws.
AffineTransformParams random_transform_params(const RandomTransformOptions& options, int64_t height,
                                              int64_t width, Random& random);

// The map from output pixel (row, col) to input coordinates: input_row = m[0] * row + m[1] * col
// + m[2], input_col = m[3] * row + m[4] * col + m[5] (flips folded in).
struct AffineMatrix {
  double m[6] = {1, 0, 0, 0, 1, 0};
  bool is_identity() const;
};
AffineMatrix keras_affine_matrix(const AffineTransformParams& params, int64_t height,
                                 int64_t width);

// Applies `params` to an image [height, width, channels] of uint8 or float32 (a batch
// [n, h, w, c] gets the same transform on every image), returning the same dtype and shape.
// Bilinear (order 1); uint8 results are rounded to nearest, as scipy's integer output. An
// identity transform returns `image` itself. Throws InvalidArgument for other ranks or dtypes.
Tensor apply_affine_transform(const Tensor& image, const AffineTransformParams& params,
                              FillMode fill_mode = FillMode::kNearest, float cval = 0);

// How apply_affine_transform_to_float lays out its output.
struct FloatImageLayout {
  // [channels, height, width] (PyTorch's layout) instead of [height, width, channels].
  bool channels_first = false;
  // The output's channels: 0 for the image's own; for a one-channel image, any count, each the
  // image's one (a grey image as RGB, as PIL's convert("RGB") makes it), computed once.
  int64_t channels = 0;
};

// The same resampling fused with the conversion to float32 and a scale (Keras' rescale applied
// after augmentation): out = transformed(image) * scale, written to `out` as `layout` says, in
// the same pass. For the hot path of image_data_generator: without rotation each output row
// blends its two input rows once and then each pixel along that row; with rotation uint8 images
// use fixed-point weights (error below 0.15 of one uint8 step).
// REQUIRES: image is [h, w, c] uint8 or float32; out holds h * w * (layout.channels or c) floats.
// Throws InvalidArgument for a layout.channels that neither is 0 nor repeats one channel.
void apply_affine_transform_to_float(const Tensor& image, const AffineTransformParams& params,
                                     FillMode fill_mode, float cval, float scale, float* out,
                                     const FloatImageLayout& layout = {});

}  // namespace sluice
