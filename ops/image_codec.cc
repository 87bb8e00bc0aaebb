#include "sluice/ops/image_codec.h"

#include <algorithm>
#include <exception>
#include <string>
#include <string_view>

#include "sluice/core/errors.h"
#include "sluice/core/file_system.h"
#include "sluice/core/strings.h"
#include "sluice/formats/image.h"
#include "sluice/ops/convert.h"

namespace sluice {
namespace {

// The bytes of a string scalar, or InvalidArgument naming `op`. A view: a scalar cut from a
// packed batch (unbatch) is read in place, not made into std::strings with the rest of it.
std::string_view scalar_bytes(const Tensor& contents, const char* op) {
  if (contents.dtype() != DType::kString || contents.rank() != 0) {
    throw InvalidArgument(str_cat(op, ": expected a string scalar, got ",
                                  dtype_name(contents.dtype()), contents.shape()));
  }
  return contents.strings()[0];
}

}  // namespace

Tensor read_file(std::string_view filename) {
  try {
    return Tensor::scalar(read_whole_file(std::string(filename)));
  } catch (...) {
    std::rethrow_exception(add_error_context(std::current_exception(), " (in read_file)"));
  }
}

Tensor read_file(const Tensor& filename) { return read_file(scalar_bytes(filename, "read_file")); }

Tensor decode_jpeg(const Tensor& contents, int channels, int ratio) {
  JpegDecodeOptions options;
  options.channels = channels;
  options.scale_denominator = ratio;
  return decode_jpeg(scalar_bytes(contents, "decode_jpeg"), options, "decode_jpeg");
}

Tensor decode_png(const Tensor& contents, int channels) {
  return decode_png(scalar_bytes(contents, "decode_png"), channels, "decode_png");
}

Tensor decode_image(const Tensor& contents, int channels, DType dtype) {
  if (dtype != DType::kUInt8 && dtype != DType::kFloat32) {
    throw InvalidArgument(
        str_cat("decode_image: dtype must be uint8 or float32, got ", dtype_name(dtype)));
  }
  const Tensor image =
      decode_image(scalar_bytes(contents, "decode_image"), channels, "decode_image");
  return convert_image_dtype(image, dtype);
}

Tensor decode_image_at_least(std::string_view bytes, ImageSize size, int channels,
                             std::string_view source) {
  if (size.height <= 0 || size.width <= 0) {
    throw InvalidArgument(str_cat("decode: the target size must be positive, got [", size.height,
                                  ", ", size.width, "] for ", source));
  }
  if (sniff_image_format(bytes) != ImageFormat::kJpeg) return decode_image(bytes, channels, source);
  JpegDecodeOptions options;
  options.channels = channels;
  // Sizes are clamped so that int never overflows; a larger target means no DCT scaling anyway.
  options.min_height = static_cast<int>(std::min<int64_t>(size.height, 1 << 30));
  options.min_width = static_cast<int>(std::min<int64_t>(size.width, 1 << 30));
  return decode_jpeg(bytes, options, source);
}

Tensor decode_and_resize(const Tensor& contents, ImageSize size, ResizeMethod method,
                         bool antialias, int channels) {
  const std::string_view bytes = scalar_bytes(contents, "decode_and_resize");
  return resize(decode_image_at_least(bytes, size, channels, "decode_and_resize"), size, method,
                antialias);
}

}  // namespace sluice
