// Keras' random affine transform: the draw of its parameters, its matrix (rotation, shift, shear,
// zoom, flip, as ImageDataGenerator composes them), and its application through the warp kernels
// of ops/affine_warp.h.
#include "sluice/ops/affine_transform.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/ops/affine_warp.h"

namespace sluice {
namespace {

// Keras builds 3×3 homogeneous matrices with np.dot; so do we, in double.
struct Mat3 {
  double a[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
};

Mat3 mul(const Mat3& x, const Mat3& y) {
  Mat3 z;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += x.a[i][k] * y.a[k][j];
      z.a[i][j] = s;
    }
  }
  return z;
}

double deg2rad(double degrees) { return degrees * std::numbers::pi / 180.0; }

double uniform(Random& random, double low, double high) {
  return low + (high - low) * random.uniform_double();
}

// cval as scipy stores it in an integer output: rounded and clamped.
uint8_t cval_u8(float cval) {
  return static_cast<uint8_t>(std::clamp(std::nearbyint(cval), 0.0f, 255.0f));
}

struct Dims {
  int64_t batch, height, width, channels;
};

Dims dims_of(const Tensor& image, const char* op) {
  if (image.rank() != 3 && image.rank() != 4) {
    throw InvalidArgument(str_cat(op,
                                  ": expected an image [height, width, channels] or a batch "
                                  "[n, height, width, channels], got shape ",
                                  image.shape().to_string()));
  }
  if (image.dtype() != DType::kUInt8 && image.dtype() != DType::kFloat32) {
    throw InvalidArgument(
        str_cat(op, ": expected uint8 or float32 pixels, got ", dtype_name(image.dtype())));
  }
  const int o = image.rank() - 3;
  return Dims{o ? image.dim(0) : 1, image.dim(o), image.dim(o + 1), image.dim(o + 2)};
}

}  // namespace

void check_random_transform_options(const RandomTransformOptions& o) {
  auto non_negative = [](double v, const char* name) {
    if (!(v >= 0))
      throw InvalidArgument(str_cat("image_data_generator: ", name, " must be >= 0, got ", v));
  };
  non_negative(o.rotation_range, "rotation_range");
  non_negative(o.width_shift_range, "width_shift_range");
  non_negative(o.height_shift_range, "height_shift_range");
  non_negative(o.shear_range, "shear_range");
  if (!(o.zoom_range.lower > 0) || !(o.zoom_range.lower <= o.zoom_range.upper)) {
    throw InvalidArgument(
        str_cat("image_data_generator: zoom_range must be positive bounds "
                "[lower, upper] with lower <= upper, got [",
                o.zoom_range.lower, ", ", o.zoom_range.upper, "]"));
  }
}

AffineTransformParams random_transform_params(const RandomTransformOptions& o, int64_t height,
                                              int64_t width, Random& random) {
  AffineTransformParams p;
  if (o.rotation_range != 0) p.theta = uniform(random, -o.rotation_range, o.rotation_range);
  if (o.height_shift_range != 0) {
    p.tx = uniform(random, -o.height_shift_range, o.height_shift_range);
    if (o.height_shift_range < 1) p.tx *= static_cast<double>(height);
  }
  if (o.width_shift_range != 0) {
    p.ty = uniform(random, -o.width_shift_range, o.width_shift_range);
    if (o.width_shift_range < 1) p.ty *= static_cast<double>(width);
  }
  if (o.shear_range != 0) p.shear = uniform(random, -o.shear_range, o.shear_range);
  if (o.zoom_range.lower != 1 || o.zoom_range.upper != 1) {
    p.zx = uniform(random, o.zoom_range.lower, o.zoom_range.upper);
    p.zy = uniform(random, o.zoom_range.lower, o.zoom_range.upper);
  }
  // Keras: (np.random.random() < 0.5) * horizontal_flip: drawn whether or not enabled.
  const bool flip_h = random.uniform_double() < 0.5;
  const bool flip_v = random.uniform_double() < 0.5;
  p.flip_horizontal = flip_h && o.horizontal_flip;
  p.flip_vertical = flip_v && o.vertical_flip;
  return p;
}

bool AffineMatrix::is_identity() const {
  return m[0] == 1 && m[1] == 0 && m[2] == 0 && m[3] == 0 && m[4] == 1 && m[5] == 0;
}

AffineMatrix keras_affine_matrix(const AffineTransformParams& p, int64_t height, int64_t width) {
  // apply_affine_transform: R · T · Sh · Z, each factor only when not neutral.
  Mat3 t;
  bool any = false;
  if (p.theta != 0) {
    const double th = deg2rad(p.theta);
    Mat3 r;
    r.a[0][0] = std::cos(th), r.a[0][1] = -std::sin(th);
    r.a[1][0] = std::sin(th), r.a[1][1] = std::cos(th);
    t = r, any = true;
  }
  if (p.tx != 0 || p.ty != 0) {
    Mat3 s;
    s.a[0][2] = p.tx, s.a[1][2] = p.ty;
    t = any ? mul(t, s) : s, any = true;
  }
  if (p.shear != 0) {
    const double sh = deg2rad(p.shear);
    Mat3 s;
    s.a[0][1] = -std::sin(sh), s.a[1][1] = std::cos(sh);
    t = any ? mul(t, s) : s, any = true;
  }
  if (p.zx != 1 || p.zy != 1) {
    Mat3 z;
    z.a[0][0] = p.zx, z.a[1][1] = p.zy;
    t = any ? mul(t, z) : z, any = true;
  }
  AffineMatrix out;
  double* m = out.m;
  if (any) {
    // transform_matrix_offset_center(t, h, w): the first axis is centred on h / 2 - 0.5.
    const double ox = static_cast<double>(height) / 2 - 0.5;
    const double oy = static_cast<double>(width) / 2 - 0.5;
    Mat3 offset, reset;
    offset.a[0][2] = ox, offset.a[1][2] = oy;
    reset.a[0][2] = -ox, reset.a[1][2] = -oy;
    t = mul(mul(offset, t), reset);
    // Swap x and y to NumPy's (row, col): M' = P M P.
    m[0] = t.a[1][1], m[1] = t.a[1][0], m[2] = t.a[1][2];
    m[3] = t.a[0][1], m[4] = t.a[0][0], m[5] = t.a[0][2];
  }
  // The flips come after the affine map; reading the affine output at the mirrored position
  // folds them into the same pass.
  if (p.flip_horizontal) {
    m[2] += m[1] * static_cast<double>(width - 1), m[5] += m[4] * static_cast<double>(width - 1);
    m[1] = -m[1], m[4] = -m[4];
  }
  if (p.flip_vertical) {
    m[2] += m[0] * static_cast<double>(height - 1), m[5] += m[3] * static_cast<double>(height - 1);
    m[0] = -m[0], m[3] = -m[3];
  }
  return out;
}

Tensor apply_affine_transform(const Tensor& image, const AffineTransformParams& params,
                              FillMode fill_mode, float cval) {
  const Dims d = dims_of(image, "apply_affine_transform");
  const AffineMatrix matrix = keras_affine_matrix(params, d.height, d.width);
  if (matrix.is_identity() || image.num_elements() == 0) return image;
  const internal::AffineWarpKernels& kernels = internal::affine_warp_kernels();
  Tensor out(image.dtype(), image.shape());
  const int64_t per_image = d.height * d.width * d.channels;
  for (int64_t b = 0; b < d.batch; ++b) {
    if (image.dtype() == DType::kUInt8) {
      kernels.warp_u8(image.data<uint8_t>() + b * per_image, d.height, d.width, d.channels, matrix,
                      fill_mode, cval_u8(cval), out.data<uint8_t>() + b * per_image);
    } else {
      kernels.warp_float(image.data<float>() + b * per_image, d.height, d.width, d.channels, matrix,
                         fill_mode, cval, out.data<float>() + b * per_image);
    }
  }
  return out;
}

void apply_affine_transform_to_float(const Tensor& image, const AffineTransformParams& params,
                                     FillMode fill_mode, float cval, float scale, float* out,
                                     const FloatImageLayout& layout) {
  const Dims d = dims_of(image, "apply_affine_transform");
  if (image.rank() != 3) {
    throw InvalidArgument(str_cat("apply_affine_transform: expected one image [h, w, c], got ",
                                  image.shape().to_string()));
  }
  if (layout.channels != 0 && layout.channels != d.channels && d.channels != 1) {
    throw InvalidArgument(str_cat("apply_affine_transform: ", d.channels,
                                  " channels cannot be written as ", layout.channels,
                                  " (only one channel repeats)"));
  }
  const AffineMatrix matrix = keras_affine_matrix(params, d.height, d.width);
  const internal::AffineWarpKernels& kernels = internal::affine_warp_kernels();
  if (image.dtype() == DType::kUInt8) {
    kernels.warp_u8_to_float(image.data<uint8_t>(), d.height, d.width, d.channels, matrix,
                             fill_mode, cval, scale, layout, out);
  } else {
    kernels.warp_float_to_float(image.data<float>(), d.height, d.width, d.channels, matrix,
                                fill_mode, cval, scale, layout, out);
  }
}

}  // namespace sluice
