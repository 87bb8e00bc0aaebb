#!/usr/bin/env python3
"""PyTorch peer of `sluice bench images`: the same image folder through torchvision's ImageFolder
(PIL decoding) and a DataLoader with num_workers=2, at the same batch and size.

Transforms: Resize((size, size)) then ToTensor (float32 in [0, 1]); with --augment the tutorials'
Keras augmentation in torchvision terms — RandomAffine(degrees=0, shear=0.2, scale=(0.8, 1.2))
(shear in degrees, as Keras' shear_range; torchvision's scale is one zoom for both axes where
Keras draws two) and RandomHorizontalFlip — before ToTensor. One warm-up epoch (page cache,
worker start-up), then the best of --epochs timed epochs, each a full pass with shuffle=True;
cpu_us_per_image is the least CPU time (this process and its workers) an epoch took per image.
Run with Debian's python3-torch and python3-torchvision:
  /usr/bin/python3 bench/peers/pytorch_dataloader.py DIR [--size 128] [--batch 32] [--augment]
The last line is key=value pairs, as sluice's commands print.
"""
import argparse
import os
import time

import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--augment", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    steps = [transforms.Resize((args.size, args.size))]
    if args.augment:
        steps += [transforms.RandomAffine(degrees=0, shear=0.2, scale=(0.8, 1.2)),
                  transforms.RandomHorizontalFlip()]
    steps.append(transforms.ToTensor())
    dataset = datasets.ImageFolder(args.dir, transform=transforms.Compose(steps))
    loader = DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=args.workers,
                        persistent_workers=args.workers > 0)
    torch.set_num_threads(1)

    def cpu_seconds():
        # This process and its (persistent) workers: on a shared machine the work per image,
        # which the load changes less than the wall-clock rate.
        total = time.process_time()
        iterator = getattr(loader, "_iterator", None)
        for worker in getattr(iterator, "_workers", []) if iterator is not None else []:
            try:
                with open(f"/proc/{worker.pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                pass
        return total

    def epoch():
        images = 0
        cpu = cpu_seconds()
        start = time.perf_counter()
        for x, _ in loader:
            images += x.shape[0]
        seconds = time.perf_counter() - start
        return images, seconds, cpu_seconds() - cpu

    epoch()  # Warm-up.
    runs = [epoch() for _ in range(max(args.epochs, 1))]
    images, seconds, _ = min(runs, key=lambda r: r[1])
    cpu = min(r[2] for r in runs)
    print(f"pytorch DataLoader: ImageFolder + PIL, num_workers={args.workers}, "
          f"batch={args.batch}, size={args.size}, augment={args.augment}")
    print(f"images={images} seconds={seconds:.3f} cpu_us_per_image={cpu * 1e6 / images:.1f} "
          f"images_per_sec={images / seconds:.0f}")


if __name__ == "__main__":
    main()
