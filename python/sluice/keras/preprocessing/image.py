"""Keras' ImageDataGenerator(...).flow_from_directory(...) on sluice's C++ pipeline, under
Keras' argument names, order and defaults.

    gen = ImageDataGenerator(rescale=1 / 255, shear_range=0.2, zoom_range=0.2,
                             horizontal_flip=True)
    train = gen.flow_from_directory("data/train", target_size=(128, 128), batch_size=32,
                                    class_mode="binary", seed=1)
    for x, y in train:   # one epoch: len(train) batches, reshuffled on every pass
        ...

As in the C++ library: one pass per iteration (Keras' iterator loops forever); randomness from
sluice's seeded generator, so a seed gives the same batches whatever the thread count;
featurewise_* and zca_whitening are refused (they need Keras' fit()); data_format
"channels_first" gives [b, c, h, w] batches, the transpose done in C++ in the batch's task.
"""
import numpy as np

from ..._sluice import keras as _keras


class DirectoryIterator:
    """What flow_from_directory returns: an iterable of (x, y) batches (x alone for
    class_mode=None) with Keras' DirectoryIterator attributes."""

    def __init__(self, flow, class_mode):
        self._flow = flow
        self._class_mode = class_mode
        self.dataset = flow.dataset
        self.class_indices = dict(flow.class_indices)
        self.filenames = list(flow.filenames)
        self.classes = np.asarray(flow.classes, dtype=np.int32)
        self.samples = self.n = flow.samples
        self.num_classes = len(self.class_indices)

    def __len__(self):
        return self.dataset.cardinality()

    def __iter__(self):
        for batch in self.dataset:
            if self._class_mode is None:
                yield batch["image"]
            else:
                yield batch["image"], batch["label"]


class ImageDataGenerator:
    """Keras' ImageDataGenerator; see the module's documentation for the differences."""

    def __init__(self, *args, **kwargs):
        self._generator = _keras.ImageDataGenerator(*args, **kwargs)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode="rgb",
                            classes=None, class_mode="categorical", batch_size=32, shuffle=True,
                            seed=None, save_to_dir=None, save_prefix="", save_format="png",
                            follow_links=False, subset=None, interpolation="nearest",
                            keep_aspect_ratio=False, **sluice_options):
        """The folder's images (a directory of class folders, or a zip/tar of one) in batches.
        sluice_options: num_parallel_calls (default AUTOTUNE), verbose (prints "Found N images
        belonging to K classes.", default True)."""
        flow = self._generator.flow_from_directory(
            directory, target_size, color_mode, classes, class_mode, batch_size, shuffle, seed,
            save_to_dir, save_prefix, save_format, follow_links, subset, interpolation,
            keep_aspect_ratio, **sluice_options)
        return DirectoryIterator(flow, class_mode)

    def random_transform(self, x, seed=None):
        """One image [h, w, c] transformed at random and standardized, as float32."""
        return self._generator.random_transform(x, seed)

    def standardize(self, x):
        """preprocessing_function, rescale, sample-wise centring and normalisation."""
        return self._generator.standardize(x)


def image_data_generator(*args, **kwargs):
    """ImageDataGenerator(*args, **kwargs), under the C++ library's name."""
    return ImageDataGenerator(*args, **kwargs)
