// What sluice.torch builds its loaders from: the layout op (channels-first and uint8 batches,
// in C++) and the per-image op of a class folder (read, decode, resize, Keras' random geometry),
// whose randomness is drawn from the image's position in its epoch, so a resumed epoch gives the
// same images as a straight one.
#include <pybind11/stl.h>

#include "python/functions.h"
#include "python/layout.h"
#include "sluice/core/file_system.h"
#include "sluice/core/random.h"
#include "sluice/core/strings.h"
#include "sluice/formats/image.h"
#include "sluice/ops/affine_transform.h"
#include "sluice/ops/image_codec.h"
#include "sluice/ops/resize.h"
#include "sluice/strategy/distributed_sampler.h"

namespace sluice::python {
namespace {

DType layout_dtype_arg(py::handle value, const char* function) {
  const DType dtype = to_dtype(value, str_cat(function, ": dtype"));
  if (dtype != DType::kUInt8 && dtype != DType::kFloat32) {
    throw py::value_error(str_cat(function, ": dtype must be uint8 or float32"));
  }
  return dtype;
}

RandomTransformOptions augment_arg(py::handle value, const char* function) {
  RandomTransformOptions o;
  if (value.is_none()) return o;
  if (!PyDict_Check(value.ptr())) {
    throw_type_error(function, "augment", "a dict of Keras ImageDataGenerator geometry arguments",
                     value);
  }
  for (auto [key, v] : py::reinterpret_borrow<py::dict>(value)) {
    const std::string name = str_arg(key, function, "augment's keys");
    if (name == "rotation_range") {
      o.rotation_range = float_arg(v, function, "rotation_range");
    } else if (name == "width_shift_range") {
      o.width_shift_range = float_arg(v, function, "width_shift_range");
    } else if (name == "height_shift_range") {
      o.height_shift_range = float_arg(v, function, "height_shift_range");
    } else if (name == "shear_range") {
      o.shear_range = float_arg(v, function, "shear_range");
    } else if (name == "zoom_range") {
      if (py::isinstance<py::sequence>(v)) {
        py::sequence s = py::reinterpret_borrow<py::sequence>(v);
        o.zoom_range = ZoomRange(float_arg(s[0], function, "zoom_range"),
                                 float_arg(s[1], function, "zoom_range"));
      } else {
        o.zoom_range = ZoomRange(float_arg(v, function, "zoom_range"));
      }
    } else if (name == "horizontal_flip") {
      o.horizontal_flip = bool_arg(v, function, "horizontal_flip");
    } else if (name == "vertical_flip") {
      o.vertical_flip = bool_arg(v, function, "vertical_flip");
    } else {
      throw py::value_error(str_cat(function, ": augment has no argument '", name,
                                    "' (rotation_range, width_shift_range, height_shift_range, "
                                    "shear_range, zoom_range, horizontal_flip, vertical_flip)"));
    }
  }
  check_random_transform_options(o);
  return o;
}

// The op of a class folder's loader: a batch of listed files (positions, paths, labels) ->
// (images, labels). One task per batch, as image_data_generator's: each image is read, decoded
// (at a DCT scale when much larger than the target), resized, given Keras' random geometry drawn
// from (seed, position) and written straight into its slot of the batch, in the layout asked
// for; the batch is never copied.
struct FolderBatch {
  ImageSize size;
  int channels = 3;
  ResizeMethod method = ResizeMethod::kBilinear;
  RandomTransformOptions augment;
  bool augmented = false;
  Layout layout;
  uint64_t seed = 0;

  Element operator()(Element e, const ElementContext&) const {
    if (e.size() != 3 || e[0].rank() != 1) {
      throw InvalidArgument(
          str_cat("folder loader: expects a batch (positions, paths, labels), "
                  "got ",
                  e.debug_string()));
    }
    const auto positions = e[0].values<int64_t>();
    const StringElements paths = e[1].strings();
    const auto b = static_cast<int64_t>(positions.size());
    const DType dtype = layout.dtype.value_or(DType::kFloat32);
    const Shape image_shape = layout.channels_first ? Shape{channels, size.height, size.width}
                                                    : Shape{size.height, size.width, channels};
    const int64_t per_image = image_shape.num_elements();
    Tensor images = Tensor::uninitialized(dtype, image_shape.prepend(b));
    // uint8 batches keep the pixels' units; float32 ones are in [0, 1], as ToTensor.
    const float scale = dtype == DType::kUInt8 ? 1.0f : 1.0f / 255;
    // float32 batches are warped straight into their slots, in either layout.
    const bool direct = dtype == DType::kFloat32;
    thread_local std::string file_bytes;
    thread_local std::vector<float> pixels;
    for (int64_t i = 0; i < b; ++i) {
      const std::string path(paths[i]);
      Tensor image;
      try {
        const std::string_view bytes = read_whole_file(path, file_bytes);
        // A grey JPEG stays one channel where the warp writes the float32 RGB slot itself: one
        // channel resized and warped instead of three copies of it.
        const bool grey_stays =
            direct && channels == 3 && sniff_image_format(bytes) == ImageFormat::kJpeg;
        image = decode_image_at_least(bytes, size, grey_stays ? 0 : channels, path);
        if (image.dim(0) != size.height || image.dim(1) != size.width) {
          image = resize(image, size, method);
        }
      } catch (...) {
        std::rethrow_exception(
            add_error_context(std::current_exception(), str_cat(" [file ", path, "]")));
      }
      AffineTransformParams params;
      if (augmented) {
        Random random(seed, static_cast<uint64_t>(positions[static_cast<size_t>(i)]));
        params = random_transform_params(augment, size.height, size.width, random);
      }
      char* slot = static_cast<char*>(images.raw_data()) +
                   i * per_image * static_cast<int64_t>(dtype_size(dtype));
      if (direct) {
        apply_affine_transform_to_float(
            image, params, FillMode::kNearest, 0, scale, reinterpret_cast<float*>(slot),
            {.channels_first = layout.channels_first, .channels = channels});
        continue;
      }
      pixels.resize(static_cast<size_t>(per_image));
      apply_affine_transform_to_float(image, params, FillMode::kNearest, 0, scale, pixels.data());
      write_image(pixels.data(), size.height, size.width, channels,
                  {.channels_first = layout.channels_first, .dtype = dtype}, slot);
    }
    return Element{std::move(images), e[2]};
  }
};

}  // namespace

void bind_torch(py::module_& root) {
  py::module_ m = root.def_submodule("torch", "C++ parts of sluice.torch");
  m.def(
      "layout",
      [](py::object channels_first, py::object dtype, py::object uint8_scale,
         py::object image_rank) {
        const char* f = "layout()";
        const Layout layout{
            .channels_first = bool_arg(channels_first, f, "channels_first"),
            .dtype = layout_dtype_arg(dtype, f),
            .uint8_scale = static_cast<float>(float_arg(uint8_scale, f, "uint8_scale"))};
        const int rank = static_cast<int>(int_arg(image_rank, f, "image_rank"));
        return Op::of_whole_element("layout", [layout, rank](Element e, const ElementContext&) {
          return to_layout(std::move(e), layout, rank);
        });
      },
      py::arg("channels_first"), py::arg("dtype"), py::arg("uint8_scale") = 1.0,
      py::arg("image_rank") = 3,
      "An op putting the element's images (the 'image' component, else every numeric component "
      "of rank image_rank) in channels-first order and/or another dtype (uint8 values times "
      "uint8_scale), in one C++ pass.");
  m.def(
      "folder_batch",
      [](py::object image_size, py::object channels, py::object interpolation, py::object augment,
         py::object channels_first, py::object dtype, py::object seed) {
        const char* f = "folder_image()";
        FolderBatch op;
        py::sequence size = py::reinterpret_borrow<py::sequence>(image_size);
        op.size = {int_arg(size[0], f, "image_size"), int_arg(size[1], f, "image_size")};
        op.channels = static_cast<int>(int_arg(channels, f, "channels"));
        const std::string method = str_arg(interpolation, f, "interpolation");
        if (method == "nearest") {
          op.method = ResizeMethod::kNearest;
        } else if (method == "bilinear") {
          op.method = ResizeMethod::kBilinear;
        } else if (method == "area") {
          op.method = ResizeMethod::kArea;
        } else if (method == "bicubic") {
          op.method = ResizeMethod::kBicubic;
        } else {
          throw py::value_error(str_cat(f,
                                        ": interpolation must be nearest, bilinear, area or "
                                        "bicubic; got '",
                                        method, "'"));
        }
        op.augmented = !augment.is_none();
        op.augment = augment_arg(augment, f);
        op.layout = {.channels_first = bool_arg(channels_first, f, "channels_first"),
                     .dtype = layout_dtype_arg(dtype, f)};
        op.seed = seed_arg(seed, f, "seed").value_or(0);
        return Op::of_whole_element("folder_batch", op);
      },
      py::arg("image_size"), py::arg("channels"), py::arg("interpolation"), py::arg("augment"),
      py::arg("channels_first"), py::arg("dtype"), py::arg("seed"),
      "The op of a class folder's batches (positions, paths, labels) -> (images, labels): "
      "read, decode (at a DCT scale when much larger), resize, Keras' random geometry drawn "
      "from (seed, position), written into the batch in the layout.");
  py::class_<DistributedSampler>(m, "DistributedSampler", R"doc(
Which example indices replica `rank` of `num_replicas` reads in an epoch, with the arithmetic of
torch.utils.data.DistributedSampler (its seeded randperm reproduced exactly, set_epoch, drop_last
or wrap-around padding).)doc")
      .def(py::init([](py::object dataset_size, py::object num_replicas, py::object rank,
                       py::object shuffle, py::object seed, py::object drop_last) {
             const char* f = "DistributedSampler()";
             return DistributedSampler(int_arg(dataset_size, f, "dataset_size"),
                                       static_cast<int>(int_arg(num_replicas, f, "num_replicas")),
                                       static_cast<int>(int_arg(rank, f, "rank")),
                                       bool_arg(shuffle, f, "shuffle"), *seed_arg(seed, f, "seed"),
                                       bool_arg(drop_last, f, "drop_last"));
           }),
           py::arg("dataset_size"), py::arg("num_replicas") = 1, py::arg("rank") = 0,
           py::arg("shuffle") = true, py::arg("seed") = 0, py::arg("drop_last") = false)
      .def(
          "set_epoch",
          [](DistributedSampler& s, py::object epoch) {
            s.set_epoch(int_arg(epoch, "DistributedSampler.set_epoch()", "epoch"));
          },
          py::arg("epoch"))
      .def_property_readonly("epoch", &DistributedSampler::epoch)
      .def(
          "indices",
          [](const DistributedSampler& s) {
            std::vector<int64_t> indices;
            {
              py::gil_scoped_release release;
              indices = s.indices();
            }
            return to_python(Tensor::from_vector(indices));
          },
          "This replica's indices for the epoch, in reading order (int64 array).")
      .def("__iter__",
           [](const DistributedSampler& s) {
             return py::iter(
                 py::module_::import("builtins")
                     .attr("list")(to_python(Tensor::from_vector(s.indices())).attr("tolist")()));
           })
      .def("__len__", &DistributedSampler::size);
  root.def(
      "mix_seed",
      [](py::object a, py::object b) {
        return mix_seed(*seed_arg(required(a, "mix_seed()", "a"), "mix_seed()", "a"),
                        *seed_arg(required(b, "mix_seed()", "b"), "mix_seed()", "b"));
      },
      py::arg("a"), py::arg("b"), "sluice's seed mixing: a seed derived from two.");
}

}  // namespace sluice::python
