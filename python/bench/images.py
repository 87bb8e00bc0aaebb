#!/usr/bin/env python3
"""The augmented 128x128 JPEG folder pipeline from Python, side by side with PyTorch's
DataLoader (ImageFolder + PIL, num_workers=2) on the same folder, in one run.

The transform is bench/peers/pytorch_dataloader.py's --augment: shear 0.2, zoom 0.2,
horizontal flip, resize to 128, float32, batch 32. sluice runs it two ways: Keras'
ImageDataGenerator(...).flow_from_directory (NHWC batches, as the C++ `sluice bench images`)
and sluice.torch.DataLoader (NCHW torch tensors, as a PyTorch loop takes them). Images count
when their batch is in the Python loop (as NumPy arrays or torch tensors). Each side has a
warm-up epoch, then the best of --epochs timed epochs.

    PYTHONPATH=build/python /usr/bin/python3 python/bench/images.py [DIR] [--images N]
        [--epochs 3] [--workers 2]

Without DIR a folder of N JPEGs (default 2000, 2 classes, 320x240 photos-like gradients with
noise) is written to a temporary directory first. The last line is key=value pairs.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "..", "..", "bench", "peers", "pytorch_dataloader.py")


def write_folder(root, images):
    from PIL import Image
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:240, 0:320].astype(np.float32)
    for i in range(images):
        label = f"class{i % 2}"
        os.makedirs(os.path.join(root, label), exist_ok=True)
        a, b, c = rng.uniform(0.2, 1.0, 3)
        base = np.stack([128 + 100 * np.sin(xx * a / 40 + yy * b / 50),
                         128 + 100 * np.cos(yy * c / 30),
                         128 + 80 * np.sin((xx + yy) / 60 * a)], axis=-1)
        pixels = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
        Image.fromarray(pixels).save(os.path.join(root, label, f"{i:05d}.jpg"), quality=90)


def best_epoch(make_batches, epochs):
    """Warm-up, then the best of `epochs` epochs: (images, seconds)."""
    def one():
        images = 0
        start = time.perf_counter()
        for batch in make_batches():
            images += batch.shape[0]
        return images, time.perf_counter() - start
    one()
    return min((one() for _ in range(epochs)), key=lambda r: r[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?")
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    import sluice
    from sluice.keras.preprocessing.image import ImageDataGenerator
    from sluice.torch import DataLoader

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir
        if folder is None:
            folder = os.path.join(tmp, "images")
            write_folder(folder, args.images)

        gen = ImageDataGenerator(rescale=1 / 255, shear_range=0.2, zoom_range=0.2,
                                 horizontal_flip=True)
        flow = gen.flow_from_directory(folder, target_size=(128, 128), batch_size=32,
                                       class_mode="binary", seed=1, verbose=False)
        keras_images, keras_seconds = best_epoch(lambda: (x for x, _ in flow), args.epochs)

        loader = DataLoader(folder, batch_size=32, shuffle=True, seed=1, image_size=(128, 128),
                            augment=dict(shear_range=0.2, zoom_range=0.2, horizontal_flip=True))
        epoch = [0]

        def torch_batches():
            epoch[0] += 1
            loader.set_epoch(epoch[0])
            return (x for x, _ in loader)
        torch_images, torch_seconds = best_epoch(torch_batches, args.epochs)

        peer = subprocess.run(
            [sys.executable, PEER, folder, "--size", "128", "--batch", "32", "--augment",
             "--workers", str(args.workers), "--epochs", str(args.epochs)],
            capture_output=True, text=True, check=True).stdout
        peer_last = dict(kv.split("=") for kv in peer.strip().splitlines()[-1].split())
        peer_rate = float(peer_last["images_per_sec"])

    keras_rate = keras_images / keras_seconds
    torch_rate = torch_images / torch_seconds
    print(f"{'pipeline':58s} {'images/s':>10s}")
    print(f"{'sluice ImageDataGenerator.flow_from_directory (NHWC numpy)':58s} {keras_rate:10.0f}")
    print(f"{'sluice.torch.DataLoader (NCHW torch)':58s} {torch_rate:10.0f}")
    print(f"{f'torch DataLoader(ImageFolder, num_workers={args.workers})':58s} {peer_rate:10.0f}")
    print(f"images={keras_images} keras_images_per_sec={keras_rate:.0f} "
          f"torch_loader_images_per_sec={torch_rate:.0f} pytorch_images_per_sec={peer_rate:.0f} "
          f"keras_speedup={keras_rate / peer_rate:.2f} torch_loader_speedup={torch_rate / peer_rate:.2f}")


if __name__ == "__main__":
    main()
