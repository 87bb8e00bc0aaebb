"""Keras' ImageDataGenerator(...).flow_from_directory(...) under Keras' argument names."""
import numpy as np

from sluice.keras.preprocessing.image import ImageDataGenerator, image_data_generator


def test_flow_from_directory_gives_keras_batches(image_folder):
    gen = ImageDataGenerator(rescale=1 / 255, shear_range=0.2, zoom_range=0.2,
                             horizontal_flip=True)
    flow = gen.flow_from_directory(image_folder, target_size=(24, 20), batch_size=5,
                                   class_mode="binary", seed=4, verbose=False)
    assert flow.class_indices == {"cat": 0, "dog": 1}
    assert flow.samples == 12 and len(flow) == 3 and flow.classes.tolist() == [0] * 6 + [1] * 6
    batches = list(flow)
    assert [x.shape for x, _ in batches] == [(5, 24, 20, 3)] * 2 + [(2, 24, 20, 3)]
    x, y = batches[0]
    assert x.dtype == np.float32 and 0 <= x.min() and x.max() <= 1
    assert set(np.concatenate([y for _, y in batches]).tolist()) == {0.0, 1.0}
    again = [x for x, _ in gen.flow_from_directory(image_folder, target_size=(24, 20),
                                                    batch_size=5, class_mode="binary", seed=4,
                                                    verbose=False)]
    np.testing.assert_array_equal(again[0], x)


def test_channels_first_is_the_transposed_batch(image_folder):
    def first(data_format):
        gen = image_data_generator(rescale=1 / 255, zoom_range=0.2, data_format=data_format)
        flow = gen.flow_from_directory(image_folder, target_size=(12, 14), batch_size=4,
                                       class_mode=None, seed=2, verbose=False)
        return next(iter(flow))

    last, first_ = first("channels_last"), first("channels_first")
    assert first_.shape == (4, 3, 12, 14)
    np.testing.assert_array_equal(first_, last.transpose(0, 3, 1, 2))


def test_preprocessing_function_runs_python_inside_the_cpp_batches(image_folder):
    calls = []

    def darken(x):
        calls.append(x.shape)
        return x * 0 + 51  # In 0-255 units, before rescale.

    gen = ImageDataGenerator(rescale=1 / 255, preprocessing_function=darken)
    flow = gen.flow_from_directory(image_folder, target_size=(8, 8), batch_size=6,
                                   class_mode="sparse", seed=1, verbose=False)
    batches = [x for x, _ in flow]
    np.testing.assert_allclose(np.concatenate(batches), 0.2, rtol=1e-6)
    assert len(calls) == 12 and calls[0] == (8, 8, 3)
