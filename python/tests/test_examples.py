"""The examples run: a few training steps of fashion_torch.py, on Fashion-MNIST's files and on
a JPEG class folder."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "fashion_torch.py")
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def run_example(*args):
    out = subprocess.run([sys.executable, EXAMPLE, "--steps", "3", "--eval-batches", "1", *args],
                         capture_output=True, text=True, timeout=240, check=True).stdout
    last = dict(kv.split("=") for kv in out.strip().splitlines()[-1].split())
    assert int(last["steps"]) == 3
    assert float(last["examples_per_sec"]) > 0
    assert 0 <= float(last["test_accuracy"]) <= 1
    return last


@pytest.mark.skipif(not os.path.exists(os.path.join(FASHION_MNIST, "train-images-idx3-ubyte.gz")),
                    reason="the Debian package dataset-fashion-mnist is not installed")
def test_fashion_torch_trains_on_fashion_mnist():
    run_example("--batch", "32")


def test_fashion_torch_trains_on_a_jpeg_folder(image_folder, tmp_path):
    os.symlink(image_folder, tmp_path / "train")
    os.symlink(image_folder, tmp_path / "test")
    run_example("--data", str(tmp_path), "--batch", "4")
