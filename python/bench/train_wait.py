#!/usr/bin/env python3
"""How long a PyTorch training loop waits for input: the Fashion-MNIST CNN of
bench/peers/pytorch_fashion_cnn.py trained for --steps steps at batch 128, fed once by
sluice.torch.DataLoader and once by torch.utils.data.DataLoader(num_workers=2), side by side in
one run. The wait is the time from the end of one step to the arrival of the next batch; the
first batch of each loader counts too.

Data: Fashion-MNIST's IDX files (default; the PyTorch side reads the same arrays through a
map-style Dataset giving float32 [1, 28, 28] in [0, 1] as ToTensor does), or with --folder DIR a
JPEG class folder (sluice.torch.DataLoader against torchvision's ImageFolder + PIL, grayscale,
resized to 28x28).

    PYTHONPATH=build/python /usr/bin/python3 python/bench/train_wait.py [--steps 200]
        [--threads 2] [--workers 2] [--folder DIR]

The last line is key=value pairs.
"""
import argparse
import importlib.util
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def fashion_cnn():
    path = os.path.join(HERE, "..", "..", "bench", "peers", "pytorch_fashion_cnn.py")
    spec = importlib.util.spec_from_file_location("pytorch_fashion_cnn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ArrayDataset(torch.utils.data.Dataset):
    """Fashion-MNIST's uint8 arrays as PyTorch tutorials load them: ToTensor per item."""

    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.from_numpy(self.images[i][None].astype(np.float32) / 255), int(self.labels[i])


def train(loader, steps, threads):
    torch.manual_seed(1)
    model = fashion_cnn().FashionCnn()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    torch.set_num_threads(threads)
    waited = 0.0
    done = 0
    start = time.perf_counter()
    while done < steps:
        ready = time.perf_counter()
        for batch in loader:
            waited += time.perf_counter() - ready
            x, y = (batch["image"], batch["label"]) if isinstance(batch, dict) else batch
            optimizer.zero_grad()
            F.nll_loss(model(x), y).backward()
            optimizer.step()
            done += 1
            if done == steps:
                break
            ready = time.perf_counter()
    return waited, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--folder")
    args = parser.parse_args()

    import sluice
    from sluice.torch import DataLoader
    if args.folder:
        from torchvision import datasets, transforms
        ours = DataLoader(args.folder, args.batch, shuffle=True, seed=1, image_size=(28, 28),
                          color_mode="grayscale")
        theirs = torch.utils.data.DataLoader(
            datasets.ImageFolder(args.folder, transform=transforms.Compose(
                [transforms.Grayscale(), transforms.Resize((28, 28)), transforms.ToTensor()])),
            batch_size=args.batch, shuffle=True, num_workers=args.workers,
            persistent_workers=True)
    else:
        ours = DataLoader(sluice.data.fashion_mnist("train"), args.batch, shuffle=True, seed=1)
        peer = fashion_cnn()
        images = peer.read_idx(os.path.join(FASHION_MNIST, "train-images-idx3-ubyte.gz"))
        labels = peer.read_idx(os.path.join(FASHION_MNIST, "train-labels-idx1-ubyte.gz"))
        theirs = torch.utils.data.DataLoader(ArrayDataset(images, labels), batch_size=args.batch,
                                             shuffle=True, num_workers=args.workers,
                                             persistent_workers=True)
    # Alternating halves, so that neither side alone meets a cold start or a busy spell.
    sluice_wait = sluice_seconds = torch_wait = torch_seconds = 0.0
    for _ in range(2):
        w, s = train(theirs, args.steps // 2, args.threads)
        torch_wait, torch_seconds = torch_wait + w, torch_seconds + s
        w, s = train(ours, args.steps // 2, args.threads)
        sluice_wait, sluice_seconds = sluice_wait + w, sluice_seconds + s
    print(f"{'input':44s} {'wait s':>8s} {'total s':>8s} {'wait/step ms':>13s}")
    for name, wait, total in (("sluice.torch.DataLoader", sluice_wait, sluice_seconds),
                              (f"torch DataLoader(num_workers={args.workers})", torch_wait,
                               torch_seconds)):
        print(f"{name:44s} {wait:8.3f} {total:8.3f} {wait / args.steps * 1e3:13.3f}")
    print(f"steps={args.steps} sluice_wait_seconds={sluice_wait:.3f} "
          f"torch_wait_seconds={torch_wait:.3f} sluice_seconds={sluice_seconds:.3f} "
          f"torch_seconds={torch_seconds:.3f}")


if __name__ == "__main__":
    main()
