"""sluice.torch.DataLoader: batches, DistributedSampler's sharding and epochs, and
StatefulDataLoader's state_dict."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sluice.data import Dataset  # noqa: E402
from sluice.torch import DataLoader  # noqa: E402

AUGMENT = dict(shear_range=0.2, zoom_range=0.2, horizontal_flip=True)


def folder_loader(folder, **kwargs):
    args = dict(batch_size=4, shuffle=True, seed=5, image_size=(16, 16), augment=AUGMENT)
    args.update(kwargs)
    return DataLoader(folder, **args)


def test_folder_batches_are_nchw_floats_by_default(image_folder):
    loader = folder_loader(image_folder)
    assert len(loader) == 3 and loader.classes == ["cat", "dog"]
    batches = list(loader)
    images, labels = batches[0]
    assert images.shape == (4, 3, 16, 16) and images.dtype == torch.float32
    assert 0 <= float(images.min()) and float(images.max()) <= 1
    assert labels.dtype == torch.int64
    assert sorted(torch.cat([y for _, y in batches]).tolist()) == [0] * 6 + [1] * 6
    raw = list(folder_loader(image_folder, dtype=torch.uint8, channels_first=False))[0][0]
    assert raw.shape == (4, 16, 16, 3) and raw.dtype == torch.uint8
    # The same images, in another layout and dtype.
    np.testing.assert_allclose(raw.permute(0, 3, 1, 2).numpy() / 255, images.numpy(), atol=0.5 / 255 + 1e-6)


def test_epochs_reshuffle_and_repeat_for_the_same_epoch(image_folder):
    loader = folder_loader(image_folder)
    first = [y.tolist() for _, y in loader]
    assert [y.tolist() for _, y in loader] == first
    loader.set_epoch(1)
    assert [y.tolist() for _, y in loader] != first


def test_replicas_split_the_epoch(image_folder):
    seen = []
    for rank in range(3):
        loader = folder_loader(image_folder, num_replicas=3, rank=rank, batch_size=2)
        assert len(loader) == 2
        seen.append([x for x, _ in loader])
    # Every image appears once across the replicas (12 = 3 x 4): no two batches share one.
    flat = torch.cat([torch.cat(r) for r in seen]).flatten(1)
    assert flat.shape[0] == 12
    assert len({tuple(row[:8].tolist()) for row in flat}) == 12
    short = folder_loader(image_folder, num_replicas=5, rank=4, batch_size=2, drop_last=True)
    assert len(short) == 1


def test_state_dict_resumes_with_the_straight_run_batches(image_folder):
    loader = folder_loader(image_folder, batch_size=3)
    loader.set_epoch(2)
    straight = list(loader)
    it = iter(loader)
    next(it)
    state = loader.state_dict()
    assert state["epoch"] == 2 and state["batches_yielded"] == 1
    resumed = folder_loader(image_folder, batch_size=3)
    resumed.load_state_dict(state)
    rest = list(resumed)
    assert len(rest) == len(straight) - 1
    for (x, y), (sx, sy) in zip(rest, straight[1:]):
        assert torch.equal(x, sx) and torch.equal(y, sy)


def test_dataset_batches_with_layout():
    images = np.random.default_rng(0).integers(0, 256, (10, 6, 5, 1), dtype=np.uint8)
    ds = Dataset.from_tensor_slices({"image": images, "label": np.arange(10)})
    loader = DataLoader(ds, batch_size=4, drop_last=True)
    batches = list(loader)
    assert len(loader) == len(batches) == 2
    assert batches[0]["image"].shape == (4, 1, 6, 5)
    torch.testing.assert_close(batches[1]["image"],
                               torch.from_numpy(images[4:8].transpose(0, 3, 1, 2) / np.float32(255)))
    with pytest.raises(ValueError, match="rank"):
        DataLoader(ds, batch_size=2, num_replicas=2, rank=2)


def test_the_sampler_is_pytorchs_and_orders_the_folder(image_folder):
    from torch.utils.data import DistributedSampler as TorchSampler

    from sluice.torch import DistributedSampler
    for replicas, rank, drop_last in ((1, 0, False), (3, 2, False), (5, 1, True)):
        ours = DistributedSampler(23, replicas, rank, shuffle=True, seed=11, drop_last=drop_last)
        theirs = TorchSampler(range(23), replicas, rank, shuffle=True, seed=11,
                              drop_last=drop_last)
        ours.set_epoch(4)
        theirs.set_epoch(4)
        assert ours.indices().tolist() == list(theirs) and len(ours) == len(theirs)
    loader = folder_loader(image_folder, batch_size=12, augment=None, num_replicas=1)
    loader.set_epoch(3)
    labels = next(iter(loader))[1].tolist()
    sampler = TorchSampler(range(12), 1, 0, shuffle=True, seed=5)
    sampler.set_epoch(3)
    assert labels == [0 if i < 6 else 1 for i in sampler]


def test_grey_jpegs_give_the_batches_of_their_rgb_conversion(tmp_path):
    # A grey JPEG is warped as one channel and written as three: the batches must be those of the
    # same pixels stored as RGB (PNG, lossless), bit for bit, in both layouts.
    from PIL import Image
    rng = np.random.default_rng(3)
    for name in ("a", "b"):
        (tmp_path / "grey" / name).mkdir(parents=True)
        (tmp_path / "rgb" / name).mkdir(parents=True)
        for i in range(3):
            grey = tmp_path / "grey" / name / f"{i}.jpg"
            Image.fromarray(rng.integers(0, 256, (20, 24), dtype=np.uint8)).save(grey, quality=90)
            with Image.open(grey) as decoded:
                decoded.convert("RGB").save(tmp_path / "rgb" / name / f"{i}.png")
    for channels_first in (True, False):
        batches = [list(folder_loader(str(tmp_path / kind), channels_first=channels_first))
                   for kind in ("grey", "rgb")]
        assert len(batches[0]) == len(batches[1]) == 2
        for (x, y), (x_rgb, y_rgb) in zip(*batches):
            assert torch.equal(y, y_rgb)
            assert torch.equal(x, x_rgb)
