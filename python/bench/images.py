#!/usr/bin/env python3
"""The augmented 128x128 JPEG folder pipeline from Python, side by side with PyTorch's
DataLoader (ImageFolder + PIL, num_workers=2) on the same folder, in one run.

The transform is bench/peers/pytorch_dataloader.py's --augment: shear 0.2, zoom 0.2,
horizontal flip, resize to 128, float32, batch 32. sluice runs it two ways: Keras'
ImageDataGenerator(...).flow_from_directory (NHWC batches, as the C++ `sluice bench images`)
and sluice.torch.DataLoader (NCHW torch tensors, as a PyTorch loop takes them). The PyTorch side
is the peer script's pipeline built in this process: ImageFolder with Resize((128, 128)),
RandomAffine(degrees=0, shear=0.2, scale=(0.8, 1.2)), RandomHorizontalFlip and ToTensor, in a
DataLoader(num_workers=2, persistent_workers=True). Images count when their batch is in the
Python loop (as NumPy arrays or torch tensors). After a warm-up epoch of each, the three take
turns epoch by epoch (so a busy spell of the machine meets all of them), and each keeps its best
of --epochs.

    PYTHONPATH=build/python /usr/bin/python3 python/bench/images.py [DIR] [--images N]
        [--image-size 500x375] [--epochs 3] [--workers 2]

Without DIR a folder of N JPEGs (default 1000, 2 classes, --image-size 500x375 like the photos
of Kaggle's cats and dogs, smooth gradients with noise) is written to a temporary directory
first. The last
line is key=value pairs.
"""
import argparse
import os
import tempfile
import time

import numpy as np


def write_folder(root, images, width=500, height=375):
    from PIL import Image
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    for i in range(images):
        label = f"class{i % 2}"
        os.makedirs(os.path.join(root, label), exist_ok=True)
        a, b, c = rng.uniform(0.2, 1.0, 3)
        base = np.stack([128 + 100 * np.sin(xx * a / 40 + yy * b / 50),
                         128 + 100 * np.cos(yy * c / 30),
                         128 + 80 * np.sin((xx + yy) / 60 * a)], axis=-1)
        pixels = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
        Image.fromarray(pixels).save(os.path.join(root, label, f"{i:05d}.jpg"), quality=90)


def epoch_rate(batches):
    images = 0
    start = time.perf_counter()
    for batch in batches:
        images += batch.shape[0]
    return images, images / (time.perf_counter() - start)


def pytorch_loader(folder, workers):
    """bench/peers/pytorch_dataloader.py's --augment pipeline."""
    import torch
    from torchvision import datasets, transforms
    steps = transforms.Compose([
        transforms.Resize((128, 128)),
        transforms.RandomAffine(degrees=0, shear=0.2, scale=(0.8, 1.2)),
        transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    torch.set_num_threads(1)
    return torch.utils.data.DataLoader(datasets.ImageFolder(folder, transform=steps),
                                       batch_size=32, shuffle=True, num_workers=workers,
                                       persistent_workers=workers > 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?")
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--image-size", default="500x375", help="WIDTHxHEIGHT of written images")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    from sluice.keras.preprocessing.image import ImageDataGenerator
    from sluice.torch import DataLoader

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir
        if folder is None:
            folder = os.path.join(tmp, "images")
            width, height = map(int, args.image_size.split("x"))
            write_folder(folder, args.images, width, height)

        gen = ImageDataGenerator(rescale=1 / 255, shear_range=0.2, zoom_range=0.2,
                                 horizontal_flip=True)
        # As `sluice bench images --augment`: bilinear resize, a prefetch(2) after the batches.
        flow = gen.flow_from_directory(folder, target_size=(128, 128), batch_size=32,
                                       class_mode="sparse", seed=1, interpolation="bilinear",
                                       verbose=False)
        keras_batches = flow.dataset.prefetch(2)
        loader = DataLoader(folder, batch_size=32, shuffle=True, seed=1, image_size=(128, 128),
                            augment=dict(shear_range=0.2, zoom_range=0.2, horizontal_flip=True))
        peer = pytorch_loader(folder, args.workers)
        epoch = [0]

        def runs():
            epoch[0] += 1
            loader.set_epoch(epoch[0])
            return {"keras": epoch_rate(b["image"] for b in keras_batches),
                    "torch_loader": epoch_rate(x for x, _ in loader),
                    "pytorch": epoch_rate(x for x, _ in peer)}

        runs()  # Warm-up: page cache, worker start-up.
        rates = [runs() for _ in range(args.epochs)]
        best = {k: max(r[k][1] for r in rates) for k in rates[0]}
        images = rates[0]["keras"][0]
        del peer

    keras_rate, torch_rate, peer_rate = best["keras"], best["torch_loader"], best["pytorch"]
    print(f"{'pipeline':58s} {'images/s':>10s}")
    print(f"{'sluice ImageDataGenerator.flow_from_directory (NHWC numpy)':58s} {keras_rate:10.0f}")
    print(f"{'sluice.torch.DataLoader (NCHW torch)':58s} {torch_rate:10.0f}")
    print(f"{f'torch DataLoader(ImageFolder, num_workers={args.workers})':58s} {peer_rate:10.0f}")
    print(f"images={images} keras_images_per_sec={keras_rate:.0f} "
          f"torch_loader_images_per_sec={torch_rate:.0f} pytorch_images_per_sec={peer_rate:.0f} "
          f"keras_speedup={keras_rate / peer_rate:.2f} torch_loader_speedup={torch_rate / peer_rate:.2f}")


if __name__ == "__main__":
    main()
