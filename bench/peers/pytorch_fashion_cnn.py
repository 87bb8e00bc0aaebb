#!/usr/bin/env python3
"""PyTorch peer of bench/model_bench.cc: the fashion-cnn training step at batch 128 on 2 threads.

The PyTorch/XLA MNIST tutorial's model (conv 1→10 5×5, maxpool, relu, BN, conv 10→20 5×5,
maxpool, relu, BN, flatten 320, Dense 50 relu, Dense 10, log_softmax) trained with nll_loss and
SGD(lr 0.01, momentum 0.5) on random inputs, timed after a warm-up. Run with Debian's
python3-torch: /usr/bin/python3 bench/peers/pytorch_fashion_cnn.py [--steps N] [--threads T]
The last line is key=value pairs, as sluice's commands print.
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class FashionCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.bn1 = nn.BatchNorm2d(10)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.bn2 = nn.BatchNorm2d(20)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = self.bn1(F.relu(F.max_pool2d(self.conv1(x), 2)))
        x = self.bn2(F.relu(F.max_pool2d(self.conv2(x), 2)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    model = FashionCnn()
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
    print(f"torch={torch.__version__} threads={args.threads} batch={args.batch} "
          f"steps={args.steps} ms_per_step={ms:.3f} images_per_sec={args.batch * args.steps / seconds:.0f}")


if __name__ == "__main__":
    main()
