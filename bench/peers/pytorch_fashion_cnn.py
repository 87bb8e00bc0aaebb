#!/usr/bin/env python3
"""PyTorch peer of bench/model_bench.cc: the fashion-cnn training step at batch 128 on 2 threads,
and one full epoch of Fashion-MNIST's training split.

The PyTorch/XLA MNIST tutorial's model (conv 1→10 5×5, maxpool, relu, BN, conv 10→20 5×5,
maxpool, relu, BN, flatten 320, Dense 50 relu, Dense 10, log_softmax) trained with nll_loss and
SGD(lr 0.01, momentum 0.5); with --wide, sluice's fashion-cnn-wide, the same network with 16 and
32 filters and 64 units. The step is timed on random inputs after a warm-up. The epoch loads
the 60,000 training images into memory as float32 in [0, 1] (untimed), then times a seeded shuffle
and every batch of 128 (the last holds 96): gather, forward, loss, backward, SGD step — what
BM_FashionCnnEpoch does. The epoch is skipped when the dataset is not installed. Run with
Debian's python3-torch:
  /usr/bin/python3 bench/peers/pytorch_fashion_cnn.py [--steps N] [--threads T] [--data DIR]
      [--wide]
The last line is key=value pairs, as sluice's commands print.
"""
import argparse
import gzip
import os
import time

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F


class FashionCnn(nn.Module):
    def __init__(self, conv1=10, conv2=20, dense=50):
        super().__init__()
        self.conv1 = nn.Conv2d(1, conv1, kernel_size=5)
        self.bn1 = nn.BatchNorm2d(conv1)
        self.conv2 = nn.Conv2d(conv1, conv2, kernel_size=5)
        self.bn2 = nn.BatchNorm2d(conv2)
        self.fc1 = nn.Linear(4 * 4 * conv2, dense)
        self.fc2 = nn.Linear(dense, 10)

    def forward(self, x):
        x = self.bn1(F.relu(F.max_pool2d(self.conv1(x), 2)))
        x = self.bn2(F.relu(F.max_pool2d(self.conv2(x), 2)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def read_idx(path):
    """An IDX file (optionally gzip-compressed) as a numpy array of its uint8 values."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def train_epoch(model, optimizer, images, labels, batch):
    """One shuffled epoch; returns (seconds, mean loss)."""
    generator = torch.Generator().manual_seed(7)
    n = images.shape[0]
    start = time.perf_counter()
    order = torch.randperm(n, generator=generator)
    loss_sum = 0.0
    for begin in range(0, n, batch):
        idx = order[begin:begin + batch]
        x, y = images[idx], labels[idx]
        optimizer.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * idx.shape[0]
    return time.perf_counter() - start, loss_sum / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--wide", action="store_true", help="fashion-cnn-wide's widths")
    args = parser.parse_args()
    widths = (16, 32, 64) if args.wide else (10, 20, 50)
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    model = FashionCnn(*widths)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    images = torch.rand(args.batch, 1, 28, 28)
    labels = torch.randint(0, 10, (args.batch,))

    def step():
        optimizer.zero_grad()
        loss = F.nll_loss(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(20):  # warm-up
        step()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds = time.perf_counter() - start
    ms = seconds / args.steps * 1e3
    result = (f"torch={torch.__version__} model={'fashion-cnn-wide' if args.wide else 'fashion-cnn'} "
              f"threads={args.threads} batch={args.batch} "
              f"steps={args.steps} ms_per_step={ms:.3f} "
              f"images_per_sec={args.batch * args.steps / seconds:.0f}")

    images_path = os.path.join(args.data, "train-images-idx3-ubyte.gz")
    labels_path = os.path.join(args.data, "train-labels-idx1-ubyte.gz")
    if os.path.exists(images_path) and os.path.exists(labels_path):
        images = torch.from_numpy(read_idx(images_path).astype(np.float32) / 255.0)
        images = images.reshape(-1, 1, 28, 28)
        labels = torch.from_numpy(read_idx(labels_path).astype(np.int64))
        torch.manual_seed(1)
        model = FashionCnn(*widths)
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
        epoch_seconds, mean_loss = train_epoch(model, optimizer, images, labels, args.batch)
        print(f"epoch: {images.shape[0]} images in {epoch_seconds:.3f} s, mean loss {mean_loss:.4f}")
        result += (f" epoch_seconds={epoch_seconds:.3f} "
                   f"epoch_images_per_sec={images.shape[0] / epoch_seconds:.0f}")
    else:
        print(f"epoch skipped: Fashion-MNIST not found in {args.data}")
    print(result)


if __name__ == "__main__":
    main()
