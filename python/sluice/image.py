"""tf.image's ops, run in C++: call one on a NumPy image to run it now, or give it to
Dataset.map (ds.map(sluice.image.resize(size=(128, 128)))) to run it on every element without
the GIL. Random ops draw from the map's seed (or their own `seed`), per element."""
from ._ops import OpFactory
from ._sluice import image as _image

_NAMES = ["decode_jpeg", "decode_png", "decode_image", "decode_and_resize", "resize",
          "resize_with_pad", "crop_to_bounding_box", "pad_to_bounding_box", "central_crop",
          "random_crop", "flip_left_right", "flip_up_down", "random_flip_left_right",
          "random_flip_up_down", "convert_image_dtype", "rgb_to_grayscale", "grayscale_to_rgb",
          "adjust_brightness", "adjust_contrast", "random_brightness", "random_contrast",
          "rescale", "normalize"]
globals().update({name: OpFactory(getattr(_image, name)) for name in _NAMES})
__all__ = list(_NAMES)
