"""sluice.image and sluice.io: C++ ops called now on NumPy values, or given to map."""
import os

import numpy as np
import pytest

import sluice
from sluice.data import AUTOTUNE, Dataset, TFRecordDataset


def jpeg_files(folder):
    return sorted(os.path.join(folder, c, f) for c in ("cat", "dog")
                  for f in os.listdir(os.path.join(folder, c)))


def test_decode_eagerly_matches_pil(image_folder):
    from PIL import Image
    path = jpeg_files(image_folder)[0]
    with open(path, "rb") as f:
        image = sluice.image.decode_jpeg(f.read(), channels=3)
    assert image.shape == (40, 48, 3) and image.dtype == np.uint8
    reference = np.asarray(Image.open(path).convert("RGB"))
    assert np.abs(image.astype(int) - reference).mean() < 2  # Both libjpeg, maybe other IDCTs.


def test_a_pipeline_of_ops_runs_in_the_map(image_folder):
    files = jpeg_files(image_folder)
    ds = (Dataset.from_tensor_slices(files)
          .map(sluice.io.read_file)
          .map(sluice.image.decode_image, num_parallel_calls=AUTOTUNE)
          .map(sluice.image.resize(size=(16, 20)), num_parallel_calls=AUTOTUNE)
          .batch(12))
    batch = next(iter(ds))
    assert batch.shape == (12, 16, 20, 3) and batch.dtype == np.float32
    direct = sluice.image.resize(sluice.image.decode_image(sluice.io.read_file(files[3])),
                                 size=(16, 20))
    np.testing.assert_allclose(batch[3], direct)


def test_an_op_reads_the_component_it_is_told(image_folder):
    files = jpeg_files(image_folder)
    labels = np.arange(len(files))
    ds = (Dataset.from_tensor_slices({"path": files, "label": labels})
          .map(sluice.io.read_file.on("path"))
          .map(sluice.image.decode_jpeg(channels=1).on("path")))
    first = next(iter(ds))
    assert first["path"].shape == (40, 48, 1) and first["label"] == 0
    tuples = Dataset.from_tensor_slices((files, labels)).map(sluice.io.read_file)
    raw, label = next(iter(tuples))
    assert raw[:2] == b"\xff\xd8" and label == 0


def test_image_ops_eagerly():
    image = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    np.testing.assert_array_equal(sluice.image.flip_left_right(image), image[:, ::-1])
    np.testing.assert_array_equal(sluice.image.flip_up_down(image), image[::-1])
    crop = sluice.image.crop_to_bounding_box(image, 1, 2, 2, 3)
    np.testing.assert_array_equal(crop, image[1:3, 2:5])
    as_float = sluice.image.convert_image_dtype(image, "float32")
    np.testing.assert_allclose(as_float, image / np.float32(255), rtol=1e-6)
    assert sluice.image.rgb_to_grayscale(image).shape == (4, 6, 1)
    same = sluice.image.random_flip_left_right(image, seed=3)
    np.testing.assert_array_equal(sluice.image.random_flip_left_right(image, seed=3), same)
    with pytest.raises(ValueError, match="method"):
        sluice.image.resize(image, size=(2, 2), method="lanczos9")
    with pytest.raises(TypeError, match="size is required"):
        sluice.image.resize(image)


def test_parse_example_over_tfrecords(records):
    features = {"label": sluice.io.FixedLenFeature([], "int64"),
                "image/encoded": sluice.io.FixedLenFeature([], "string"),
                "values": sluice.io.VarLenFeature(np.float32)}
    ds = TFRecordDataset(records).batch(4).map(sluice.io.parse_example(features=features))
    batches = list(ds)
    assert [b["label"].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0]["image/encoded"].tolist() == [b"img0", b"img1", b"img2", b"img3"]
    assert batches[0]["values/row_lengths"].tolist() == [2, 2, 2, 2]
    np.testing.assert_allclose(batches[0]["values"][:4], [0, 0.5, 1, 1.5])
    single = next(iter(TFRecordDataset(records[1]).map(
        sluice.io.parse_single_example(features={"label": sluice.io.FixedLenFeature([1], "int64")}))))
    assert single["label"].tolist() == [5]
