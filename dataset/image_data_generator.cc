#include "sluice/dataset/image_data_generator.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <utility>

#include "sluice/core/errors.h"
#include "sluice/core/file_system.h"
#include "sluice/core/strings.h"
#include "sluice/dataset/saved_file.h"
#include "sluice/formats/archive.h"
#include "sluice/formats/image.h"
#include "sluice/graph/stage.h"
#include "sluice/graph/stages/sources.h"
#include "sluice/ops/crop.h"
#include "sluice/ops/image_codec.h"
#include "sluice/ops/resize.h"

namespace sluice {
namespace {

// What every iterator of one flow shares: the listing and the pass counter that makes each pass
// (epoch) draw a fresh order.
struct FlowState {
  std::vector<std::string> filenames;
  std::vector<int64_t> labels;
  int64_t num_classes = 0;
  std::string archive;  // Empty for a directory.
  std::vector<ArchiveMemberRef> members;
  OrderedReadOptions archive_read;
  bool shuffle = true;
  uint64_t seed = 0;
  std::atomic<uint64_t> passes{0};
};

// Fisher-Yates with sluice's generator, so the order is the same on every platform.
std::vector<int64_t> epoch_order(const FlowState& state, uint64_t seed, uint64_t pass) {
  std::vector<int64_t> order(state.filenames.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  if (!state.shuffle) return order;
  Random random(mix_seed(seed, 0x5348554646ull /* "SHUFF" */), pass);
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1],
              order[static_cast<size_t>(random.uniform_int(static_cast<int64_t>(i)))]);
  }
  return order;
}

// One pass, a batch per element: {"indices": int64 [b], "bytes": string [b]} in the pass's
// order. For a directory "bytes" holds empty strings (the parallel map reads the files); an
// archive is streamed here in that order.
class FlowSource final : public ElementSource {
 public:
  FlowSource(std::shared_ptr<FlowState> state, int64_t batch_size)
      : state_(std::move(state)),
        batch_size_(batch_size),
        seed_(state_->seed),
        pass_(state_->passes.fetch_add(1, std::memory_order_relaxed)),
        order_(epoch_order(*state_, seed_, pass_)) {
    open_archive();
  }

  bool next(Chunk& out, size_t max) override {
    const size_t start = out.size();
    while (out.size() - start < max && position_ < order_.size()) {
      const size_t b = std::min(order_.size() - position_, static_cast<size_t>(batch_size_));
      std::vector<int64_t> indices(order_.begin() + static_cast<std::ptrdiff_t>(position_),
                                   order_.begin() + static_cast<std::ptrdiff_t>(position_ + b));
      std::vector<std::string> bytes(b);
      if (reader_) {
        try {
          for (size_t i = 0; i < b; ++i) {
            if (!reader_->next(bytes[i])) throw DataLoss(str_cat(state_->archive, ": ended early"));
          }
        } catch (...) {
          // The archive cannot be read past this point: the error ends the pass.
          out.push_back(Item::failure(std::current_exception()));
          position_ = order_.size();
          break;
        }
      }
      position_ += b;
      out.push_back(Item{Element{{"indices", Tensor::from_vector(indices)},
                                 {"bytes", Tensor::from_strings(bytes)}},
                         nullptr});
    }
    return out.size() > start;
  }

  // The pass's seed and number (its order follows from them) and the position in it.
  void save(StateWriter& writer) const override {
    if (!state_->archive.empty()) save_file_size(writer, "archive_size", state_->archive);
    writer.write_int("seed", static_cast<int64_t>(seed_));
    writer.write_int("pass", static_cast<int64_t>(pass_));
    writer.write_int("position", static_cast<int64_t>(position_));
  }
  void restore(const StateReader& reader) override {
    if (!state_->archive.empty()) {
      check_file_size(reader, "archive_size", state_->archive, "flow_from_directory");
    }
    seed_ = static_cast<uint64_t>(reader.read_int("seed"));
    pass_ =
        static_cast<uint64_t>(reader.read_int("pass", 0, std::numeric_limits<int64_t>::max() - 1));
    state_->passes.store(pass_ + 1, std::memory_order_relaxed);
    order_ = epoch_order(*state_, seed_, pass_);
    position_ =
        static_cast<size_t>(reader.read_int("position", 0, static_cast<int64_t>(order_.size())));
    open_archive();
  }

 private:
  // The archive's members from the position on, in the pass's order.
  void open_archive() {
    if (state_->archive.empty()) return;
    std::vector<ArchiveMemberRef> members;
    members.reserve(order_.size() - position_);
    for (size_t k = position_; k < order_.size(); ++k) {
      members.push_back(state_->members[static_cast<size_t>(order_[k])]);
    }
    reader_.emplace(state_->archive, std::move(members), state_->archive_read);
  }

  std::shared_ptr<FlowState> state_;
  int64_t batch_size_;
  uint64_t seed_;
  uint64_t pass_;
  std::vector<int64_t> order_;
  size_t position_ = 0;
  std::optional<OrderedMemberReader> reader_;
};

// An RGB image [h, w, 3] with a fourth channel of 255, as PIL's convert("RGBA").
Tensor with_opaque_alpha(const Tensor& rgb) {
  const int64_t pixels = rgb.dim(0) * rgb.dim(1);
  Tensor rgba(DType::kUInt8, Shape{rgb.dim(0), rgb.dim(1), 4});
  const uint8_t* in = rgb.data<uint8_t>();
  uint8_t* out = rgba.data<uint8_t>();
  for (int64_t p = 0; p < pixels; ++p) {
    out[4 * p] = in[3 * p], out[4 * p + 1] = in[3 * p + 1], out[4 * p + 2] = in[3 * p + 2];
    out[4 * p + 3] = 255;
  }
  return rgba;
}

// Keras' keep_aspect_ratio window (load_img): the largest centred crop with the target's aspect
// ratio, in Python's floor-dividing integer arithmetic.
Tensor crop_to_aspect_ratio(const Tensor& image, ImageSize size) {
  const int64_t height = image.dim(0), width = image.dim(1);
  const int64_t crop_height = std::min(height, width * size.height / size.width);
  const int64_t crop_width = std::min(width, height * size.width / size.height);
  if (crop_height == height && crop_width == width) return image;
  return crop_to_bounding_box(image, (height - crop_height) / 2, (width - crop_width) / 2,
                              crop_height, crop_width);
}

bool has_size(const Tensor& image, ImageSize size) {
  return image.dim(0) == size.height && image.dim(1) == size.width;
}

// The image to resize to `size`: decoded (at a DCT scale that stays at or above `size`), with
// Keras' keep_aspect_ratio crop when it needs resizing at all. JPEG has no alpha: for 4 channels
// it is decoded as RGB and made opaque. A grey JPEG asked for as RGB stays one channel: the
// transform writes it as RGB, resizing and warping one channel instead of three copies of it.
// Decoder errors name `path`.
Tensor decode_for_size(std::string_view bytes, ImageSize size, int channels, bool keep_aspect_ratio,
                       const std::string& path) {
  Tensor image;
  const bool jpeg = channels >= 3 && sniff_image_format(bytes) == ImageFormat::kJpeg;
  if (jpeg && channels == 4) {
    image = with_opaque_alpha(decode_image_at_least(bytes, size, 3, path));
  } else if (jpeg) {
    image = decode_image_at_least(bytes, size, 0, path);  // Its own channels: 1 or 3.
  } else {
    image = decode_image_at_least(bytes, size, channels, path);
  }
  if (!has_size(image, size) && keep_aspect_ratio) image = crop_to_aspect_ratio(image, size);
  return image;
}

// Keras' standardize after the transform, in place on one image [h, w, c] at x: the
// preprocessing_function, rescale (unless the transform already applied it), then sample-wise
// centring and normalisation in float32, the statistics summed in double.
void standardize_values(const ImageDataGeneratorOptions& o, bool rescale, float* x,
                        const Shape& shape) {
  const int64_t n = shape.num_elements();
  if (o.preprocessing_function) {
    // The function gets a tensor of its own: it may keep it, and x is a slot of a reused batch.
    Tensor image(DType::kFloat32, shape);
    std::copy(x, x + n, image.data<float>());
    const Tensor result = o.preprocessing_function(image);
    if (result.dtype() != DType::kFloat32 || result.shape() != shape) {
      throw InvalidArgument(
          str_cat("image_data_generator: preprocessing_function must return float32", shape,
                  ", got ", dtype_name(result.dtype()), result.shape()));
    }
    std::copy(result.data<float>(), result.data<float>() + n, x);
  }
  if (rescale && o.rescale != 0) {
    for (int64_t i = 0; i < n; ++i) x[i] *= o.rescale;
  }
  if (n == 0) return;
  if (o.samplewise_center) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += x[i];
    const auto mean = static_cast<float>(sum / static_cast<double>(n));
    for (int64_t i = 0; i < n; ++i) x[i] -= mean;
  }
  if (o.samplewise_std_normalization) {
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < n; ++i) sum += x[i];
    const double mean = sum / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
    const float denominator =
        static_cast<float>(std::sqrt(squares / static_cast<double>(n))) + 1e-6f;
    for (int64_t i = 0; i < n; ++i) x[i] /= denominator;
  }
}

double uniform(Random& random, double low, double high) {
  return low + (high - low) * random.uniform_double();
}

int color_channels(ColorMode mode) {
  switch (mode) {
    case ColorMode::kGrayscale:
      return 1;
    case ColorMode::kRgba:
      return 4;
    case ColorMode::kRgb:
      break;
  }
  return 3;
}

// Keras' labels for a batch: one-hot float32 [b, K] for categorical, the class index as float32
// [b] for binary and sparse.
Tensor batch_labels(const FlowState& state, std::span<const int64_t> indices, ClassMode mode) {
  const auto b = static_cast<int64_t>(indices.size());
  if (mode == ClassMode::kCategorical) {
    Tensor labels(DType::kFloat32, Shape{b, state.num_classes});
    float* p = labels.data<float>();
    for (int64_t i = 0; i < b; ++i) {
      p[i * state.num_classes +
        state.labels[static_cast<size_t>(indices[static_cast<size_t>(i)])]] = 1;
    }
    return labels;
  }
  Tensor labels(DType::kFloat32, Shape{b});
  for (int64_t i = 0; i < b; ++i) {
    labels.data<float>()[i] =
        static_cast<float>(state.labels[static_cast<size_t>(indices[static_cast<size_t>(i)])]);
  }
  return labels;
}

}  // namespace

ImageDataGenerator::ImageDataGenerator(ImageDataGeneratorOptions options)
    : options_(options),
      geometry_{.rotation_range = options.rotation_range,
                .width_shift_range = options.width_shift_range,
                .height_shift_range = options.height_shift_range,
                .shear_range = options.shear_range,
                .zoom_range = options.zoom_range,
                .horizontal_flip = options.horizontal_flip,
                .vertical_flip = options.vertical_flip} {
  check_random_transform_options(geometry_);
  const auto refuse = [](bool set, const char* name) {
    if (set) {
      throw Unimplemented(str_cat("image_data_generator: ", name,
                                  " needs statistics of the data set (Keras' fit()), which sluice "
                                  "does not compute; use samplewise_center / "
                                  "samplewise_std_normalization or normalize() in a map"));
    }
  };
  refuse(options.featurewise_center, "featurewise_center");
  refuse(options.featurewise_std_normalization, "featurewise_std_normalization");
  refuse(options.zca_whitening, "zca_whitening");
  if (!(options.channel_shift_range >= 0)) {
    throw InvalidArgument(str_cat("image_data_generator: channel_shift_range must be >= 0, got ",
                                  options.channel_shift_range));
  }
  if (options.brightness_range) {
    const BrightnessRange& b = *options.brightness_range;
    if (!(b.lower >= 0 && b.lower <= b.upper)) {
      throw InvalidArgument(
          str_cat("image_data_generator: brightness_range must be [lower, upper] "
                  "with 0 <= lower <= upper, got [",
                  b.lower, ", ", b.upper, "]"));
    }
  }
  if (!(options.validation_split >= 0 && options.validation_split < 1)) {
    throw InvalidArgument(str_cat("image_data_generator: validation_split must be in [0, 1), got ",
                                  options.validation_split));
  }
  // Keras: samplewise_std_normalization overrides samplewise_center (turns it on).
  if (options_.samplewise_std_normalization) options_.samplewise_center = true;
}

TransformParams ImageDataGenerator::get_random_transform(int64_t height, int64_t width,
                                                         Random& random) const {
  TransformParams p;
  p.geometry = random_transform_params(geometry_, height, width, random);
  if (options_.channel_shift_range != 0) {
    p.channel_shift_intensity =
        uniform(random, -options_.channel_shift_range, options_.channel_shift_range);
  }
  if (options_.brightness_range) {
    p.brightness =
        uniform(random, options_.brightness_range->lower, options_.brightness_range->upper);
  }
  return p;
}

void ImageDataGenerator::transform_into(const Tensor& image, const TransformParams& params,
                                        int64_t channels, float* out) const {
  const int64_t pixels = image.dim(0) * image.dim(1);
  const int64_t n = pixels * channels;
  // Colour changes and preprocessing_function work in 0-255 units, so rescale waits for them;
  // without them the resampling pass applies it for free.
  const bool late_rescale = params.channel_shift_intensity || params.brightness ||
                            static_cast<bool>(options_.preprocessing_function);
  const float scale = !late_rescale && options_.rescale != 0 ? options_.rescale : 1.0f;
  apply_affine_transform_to_float(image, params.geometry, options_.fill_mode, options_.cval, scale,
                                  out, {.channels = channels});
  // Keras applies the flips between these two; both are per-pixel, so the order does not matter.
  if (params.channel_shift_intensity) {
    apply_channel_shift(out, n, static_cast<float>(*params.channel_shift_intensity));
  }
  if (params.brightness) {
    apply_brightness_shift(out, pixels, channels, static_cast<float>(*params.brightness));
  }
  standardize_values(options_, late_rescale, out, Shape{image.dim(0), image.dim(1), channels});
}

Tensor ImageDataGenerator::apply_transform(const Tensor& image,
                                           const TransformParams& params) const {
  if (image.rank() != 3 || (image.dtype() != DType::kUInt8 && image.dtype() != DType::kFloat32)) {
    throw InvalidArgument(
        str_cat("image_data_generator: apply_transform expects one image [h, w, "
                "c] of uint8 or float32, got ",
                dtype_name(image.dtype()), image.shape()));
  }
  Tensor out(DType::kFloat32, image.shape());
  float* x = out.data<float>();
  const int64_t pixels = image.dim(0) * image.dim(1), channels = image.dim(2);
  apply_affine_transform_to_float(image, params.geometry, options_.fill_mode, options_.cval, 1.0f,
                                  x);
  if (params.channel_shift_intensity) {
    apply_channel_shift(x, pixels * channels, static_cast<float>(*params.channel_shift_intensity));
  }
  if (params.brightness) {
    // The checks of the tensor op (channels 1, 3 or 4).
    return apply_brightness_shift(out, static_cast<float>(*params.brightness));
  }
  return out;
}

Tensor ImageDataGenerator::standardize(const Tensor& image) const {
  if (image.dtype() != DType::kFloat32) {
    throw InvalidArgument(str_cat("image_data_generator: standardize expects float32 pixels, got ",
                                  dtype_name(image.dtype()), image.shape()));
  }
  Tensor out = image.clone();
  if (image.rank() != 3) {
    throw InvalidArgument(
        str_cat("image_data_generator: standardize expects one image [h, w, c], got shape ",
                image.shape()));
  }
  standardize_values(options_, true, out.data<float>(), out.shape());
  return out;
}

Tensor ImageDataGenerator::random_transform(const Tensor& image, Random& random) const {
  if (image.rank() != 3) {
    throw InvalidArgument(
        str_cat("image_data_generator: random_transform expects one image [h, w, c], got shape ",
                image.shape()));
  }
  return standardize(
      apply_transform(image, get_random_transform(image.dim(0), image.dim(1), random)));
}

DirectoryFlow ImageDataGenerator::flow_from_directory(
    const std::string& directory, const FlowFromDirectoryOptions& options) const {
  if (options.batch_size <= 0) {
    throw InvalidArgument(
        str_cat("flow_from_directory: batch_size must be positive, got ", options.batch_size));
  }
  if (options.target_size.height <= 0 || options.target_size.width <= 0) {
    throw InvalidArgument(str_cat("flow_from_directory: target_size must be positive, got ",
                                  options.target_size.height, "x", options.target_size.width));
  }
  // Listed with sparse labels: the labels are made here (Keras does not require two classes for
  // binary, and gives float32 labels for sparse).
  ImageFolder folder = image_folder(directory, {.classes = options.classes,
                                                .class_mode = ClassMode::kSparse,
                                                .follow_links = options.follow_links,
                                                .verbose = options.verbose,
                                                .validation_split = options_.validation_split,
                                                .subset = options.subset});
  auto state = std::make_shared<FlowState>();
  state->filenames = folder.filenames;
  state->labels = folder.labels;
  state->num_classes = static_cast<int64_t>(folder.class_names.size());
  state->archive = folder.archive;
  state->members = folder.members;
  state->archive_read = folder.archive_read;
  state->shuffle = options.shuffle;
  state->seed = seed_or_random(options.seed);

  const auto n = static_cast<int64_t>(folder.filenames.size());
  const int64_t batch_size = options.batch_size;
  std::string listed;
  for (const std::string& f : state->filenames) listed.append(f).push_back('\0');
  std::string parameters = str_cat("files=", n, " #", digest(listed), ", batch_size=", batch_size,
                                   ", shuffle=", state->shuffle ? "true" : "false");
  Dataset source = Dataset::from_plan(
      make_source("image_data_generator", (n + batch_size - 1) / batch_size, std::move(parameters),
                  [state, batch_size] { return std::make_unique<FlowSource>(state, batch_size); }));

  const ImageSize size = options.target_size;
  const int channels = color_channels(options.color_mode);
  const bool keep_aspect_ratio = options.keep_aspect_ratio;
  const int64_t per_image = size.height * size.width * channels;
  const ResizeMethod method = options.interpolation;
  const ClassMode mode = options.class_mode;
  const ImageDataGenerator generator = *this;
  // Without geometry, colour changes or standardization the transform is only the rescale:
  // resize_into then writes each resized image straight into its batch slot, rescale folded in.
  const ImageDataGeneratorOptions& o = options_;
  const bool rescale_only =
      o.rotation_range == 0 && o.width_shift_range == 0 && o.height_shift_range == 0 &&
      o.shear_range == 0 && o.zoom_range.lower == 1 && o.zoom_range.upper == 1 &&
      !o.horizontal_flip && !o.vertical_flip && o.channel_shift_range == 0 && !o.brightness_range &&
      !o.preprocessing_function && !o.samplewise_center && !o.samplewise_std_normalization;
  const float rescale = o.rescale != 0 ? o.rescale : 1.0f;
  std::shared_ptr<const FlowState> shared = state;
  // One task per batch: each image is decoded, resized and transformed straight into its slot of
  // the batch, so an image is written once and never copied. Image j of the pass draws its
  // transform from (seed, pass, j) alone.
  auto load_batch = [shared, size, channels, per_image, method, keep_aspect_ratio, mode, generator,
                     batch_size, rescale_only, rescale](Element e, const ElementContext& ctx) {
    const auto indices = e[0].values<int64_t>();
    const auto b = static_cast<int64_t>(indices.size());
    // Every pixel of every slot is written below; the buffer cache recycles the batches' memory.
    Tensor images =
        Tensor::uninitialized(DType::kFloat32, Shape{b, size.height, size.width, channels});
    // The bytes of one file at a time, in a buffer the thread keeps: no allocation per image.
    // One huge file does not pin its size on the thread for good.
    thread_local std::string file_bytes;
    constexpr size_t kKeptBufferBytes = size_t{16} << 20;
    for (int64_t i = 0; i < b; ++i) {
      const int64_t index = indices[static_cast<size_t>(i)];
      const std::string& path = shared->filenames[static_cast<size_t>(index)];
      float* slot = images.data<float>() + i * per_image;
      Tensor image;
      try {
        if (shared->archive.empty()) {
          image = decode_for_size(read_whole_file(path, file_bytes), size, channels,
                                  keep_aspect_ratio, path);
          if (file_bytes.size() > kKeptBufferBytes) std::string().swap(file_bytes);
        } else {
          image = decode_for_size(e[1].values<std::string>()[static_cast<size_t>(i)], size,
                                  channels, keep_aspect_ratio, path);
        }
        if (!has_size(image, size)) {
          if (rescale_only && image.dim(2) == channels) {
            resize_into(image, size, slot, rescale, method);
            continue;
          }
          image = resize(image, size, method);
        }
      } catch (...) {
        std::rethrow_exception(
            add_error_context(std::current_exception(), str_cat(" [file ", path, "]")));
      }
      Random random(ctx.seed, static_cast<uint64_t>(ctx.index * batch_size + i));
      const TransformParams params =
          generator.get_random_transform(size.height, size.width, random);
      generator.transform_into(image, params, channels, slot);
    }
    if (mode == ClassMode::kNone) return Element{{"image", std::move(images)}};
    if (mode == ClassMode::kInput) return Element{{"image", images}, {"label", images}};
    return Element{{"image", std::move(images)}, {"label", batch_labels(*shared, indices, mode)}};
  };
  Dataset batches = source.map(
      std::move(load_batch),
      {.num_parallel_calls = options.num_parallel_calls, .seed = mix_seed(state->seed, 1)});

  return DirectoryFlow{
      std::move(batches),          std::move(folder.class_names), std::move(folder.class_indices),
      std::move(folder.filenames), std::move(folder.labels),      n};
}

}  // namespace sluice
