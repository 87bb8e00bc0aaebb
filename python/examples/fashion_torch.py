#!/usr/bin/env python3
"""Trains the Fashion-MNIST CNN of bench/peers/pytorch_fashion_cnn.py (two conv blocks, SGD with
momentum, nll_loss) in PyTorch, fed by sluice: the Debian Fashion-MNIST files (the default), or a
JPEG folder with train/ and test/ class sub-folders. Prints the training rate, the time the loop
waited for input, and the test accuracy.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/fashion_torch.py [--epochs 1]
        [--data DIR] [--batch 128] [--threads 2] [--steps N] [--eval-batches N]

The last line is key=value pairs, as sluice's commands print.
"""
import argparse
import importlib.util
import os
import time

import torch
import torch.nn.functional as F

import sluice
from sluice.torch import DataLoader


def fashion_cnn():
    """The model of the PyTorch peer benchmark, loaded from its file beside this repository's
    benchmarks so both measure the same network."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "bench", "peers", "pytorch_fashion_cnn.py")
    spec = importlib.util.spec_from_file_location("pytorch_fashion_cnn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FashionCnn()


def loaders(data, batch, seed):
    """(train, test) loaders: Fashion-MNIST's IDX files, or a folder's train/ and test/."""
    if os.path.isdir(os.path.join(data, "train")):
        common = dict(image_size=(28, 28), color_mode="grayscale", seed=seed)
        return (DataLoader(os.path.join(data, "train"), batch, shuffle=True, **common),
                DataLoader(os.path.join(data, "test"), 1000, **common))
    return (DataLoader(sluice.data.fashion_mnist("train", data), batch, shuffle=True, seed=seed),
            DataLoader(sluice.data.fashion_mnist("test", data), 1000))


def split(batch):
    return (batch["image"], batch["label"]) if isinstance(batch, dict) else batch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=0, help="stop each epoch after N steps")
    parser.add_argument("--eval-batches", type=int, default=0, help="evaluate N batches only")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model = fashion_cnn()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.5)
    train, test = loaders(args.data, args.batch, args.seed)

    examples = steps = 0
    waited = 0.0
    start = time.perf_counter()
    for epoch in range(args.epochs):
        train.set_epoch(epoch)
        model.train()
        ready = time.perf_counter()
        for i, batch in enumerate(train):
            waited += time.perf_counter() - ready
            x, y = split(batch)
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            optimizer.step()
            examples += x.shape[0]
            steps += 1
            ready = time.perf_counter()
            if args.steps and i + 1 >= args.steps:
                break
        print(f"epoch {epoch + 1}/{args.epochs}: loss {loss.item():.4f}", flush=True)
    seconds = time.perf_counter() - start

    model.eval()
    correct = total = 0
    with torch.no_grad():
        for i, batch in enumerate(test):
            x, y = split(batch)
            correct += int((model(x).argmax(1) == y).sum())
            total += y.shape[0]
            if args.eval_batches and i + 1 >= args.eval_batches:
                break
    print(f"epochs={args.epochs} steps={steps} train_seconds={seconds:.2f} "
          f"examples_per_sec={examples / seconds:.0f} input_wait_seconds={waited:.3f} "
          f"test_accuracy={correct / total:.4f}")


if __name__ == "__main__":
    main()
