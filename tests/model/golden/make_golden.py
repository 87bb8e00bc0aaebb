#!/usr/bin/env python3
"""Writes tests/model/golden/golden.txt: PyTorch reference values for sluice's golden tests.

Fixed inputs come from NumPy with a seed, are rounded to float32 and run through PyTorch in float64
(so the references carry no float32 rounding of their own), then stored as float32. Tensors are
written in sluice's layouts: images NHWC, conv kernels HWIO ([kh, kw, in, out]), Dense kernels
[in, out]; PyTorch's NCHW / OIHW / [out, in] are converted here.

Format: per tensor two lines, "<name> <dim> <dim> ..." and its values in row-major order as
C99 hex floats (exact). Regenerate with Debian's python3-torch (1.13):
    /usr/bin/python3 tests/model/golden/make_golden.py
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20240605)
records = []


def f32(shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def put(name, array):
    a = np.asarray(array, dtype=np.float32)
    records.append((name, a.shape, a.ravel()))


def t64(a):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def nhwc(t):  # NCHW tensor -> NHWC array
    return t.detach().permute(0, 2, 3, 1).numpy()


def nchw(a):  # NHWC array -> NCHW float64 tensor with grad
    return t64(np.transpose(a, (0, 3, 1, 2)))


def conv_case(name, n, h, w, cin, cout, k, stride, pad):
    """pad = (top, bottom, left, right): TensorFlow's 'same' split, given explicitly."""
    x = f32((n, h, w, cin))
    kernel = f32((k, k, cin, cout), -0.5, 0.5)  # HWIO
    bias = f32((cout,), -0.5, 0.5)
    xt = nchw(x)
    wt = t64(np.transpose(kernel, (3, 2, 0, 1)))  # OIHW
    bt = t64(bias)
    top, bottom, left, right = pad
    y = F.conv2d(F.pad(xt, (left, right, top, bottom)), wt, bt, stride=stride)
    upstream = f32(tuple(nhwc(y).shape))
    y.backward(torch.tensor(np.transpose(upstream, (0, 3, 1, 2)), dtype=torch.float64))
    put(f"{name}.x", x)
    put(f"{name}.kernel", kernel)
    put(f"{name}.bias", bias)
    put(f"{name}.y", nhwc(y))
    put(f"{name}.dy", upstream)
    put(f"{name}.dx", nhwc(xt.grad))
    put(f"{name}.dkernel", wt.grad.permute(2, 3, 1, 0).numpy())
    put(f"{name}.dbias", bt.grad.numpy())


def dense_case():
    x = f32((4, 7))
    kernel = f32((7, 5))  # [in, out]
    bias = f32((5,))
    xt, wt, bt = t64(x), t64(kernel.T), t64(bias)  # torch Linear weight is [out, in]
    y = F.linear(xt, wt, bt)
    upstream = f32((4, 5))
    y.backward(torch.tensor(upstream, dtype=torch.float64))
    put("dense.x", x)
    put("dense.kernel", kernel)
    put("dense.bias", bias)
    put("dense.y", y.detach().numpy())
    put("dense.dy", upstream)
    put("dense.dx", xt.grad.numpy())
    put("dense.dkernel", wt.grad.numpy().T)
    put("dense.dbias", bt.grad.numpy())


def batchnorm_case():
    x = f32((4, 3, 3, 5), -2.0, 3.0)
    gamma = f32((5,), 0.5, 1.5)
    beta = f32((5,), -0.5, 0.5)
    xt, gt, bt = nchw(x), t64(gamma), t64(beta)
    running_mean = torch.zeros(5, dtype=torch.float64)
    running_var = torch.ones(5, dtype=torch.float64)
    y = F.batch_norm(xt, running_mean, running_var, gt, bt, training=True, momentum=0.1, eps=1e-5)
    upstream = f32(x.shape)
    y.backward(torch.tensor(np.transpose(upstream, (0, 3, 1, 2)), dtype=torch.float64))
    put("bn.x", x)
    put("bn.gamma", gamma)
    put("bn.beta", beta)
    put("bn.y", nhwc(y))
    put("bn.dy", upstream)
    put("bn.dx", nhwc(xt.grad))
    put("bn.dgamma", gt.grad.numpy())
    put("bn.dbeta", bt.grad.numpy())
    put("bn.running_mean", running_mean.numpy())
    put("bn.running_var", running_var.numpy())


def pool_case(name, fn, pool, stride):
    x = f32((2, 6, 7, 3))
    xt = nchw(x)
    y = fn(xt, pool, stride)
    upstream = f32(tuple(nhwc(y).shape))
    y.backward(torch.tensor(np.transpose(upstream, (0, 3, 1, 2)), dtype=torch.float64))
    put(f"{name}.x", x)
    put(f"{name}.y", nhwc(y))
    put(f"{name}.dy", upstream)
    put(f"{name}.dx", nhwc(xt.grad))


def loss_cases():
    logits = f32((6, 10), -3.0, 3.0)
    labels = np.array([3, 0, 9, 9, 5, 1])
    put("loss.logits", logits)
    put("loss.labels", labels.astype(np.float32))
    # log_softmax then nll_loss (the fashion-cnn head), gradient through both.
    lt = t64(logits)
    log_probs = F.log_softmax(lt, dim=1)
    nll = F.nll_loss(log_probs, torch.tensor(labels))
    nll.backward()
    put("loss.log_softmax", log_probs.detach().numpy())
    put("loss.nll", [nll.item()])
    put("loss.nll_dlogits", lt.grad.numpy())
    # cross_entropy on logits (sparse_categorical_crossentropy with from_logits).
    lt = t64(logits)
    ce = F.cross_entropy(lt, torch.tensor(labels))
    ce.backward()
    put("loss.cross_entropy", [ce.item()])
    put("loss.ce_dlogits", lt.grad.numpy())


def compact_hex(v):
    """float32 as the shortest exact hex float: 0x1.0f6056p-3 rather than 0x1.0f60560000000p-3."""
    mantissa, exponent = float(v).hex().split("p")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}p{exponent}"


def main():
    torch.set_default_dtype(torch.float64)
    conv_case("conv_valid", 2, 6, 5, 3, 4, 3, 1, (0, 0, 0, 0))
    # TF 'same', stride 2: height 7 → 4 pads 1/1, width 6 → 3 pads 0/1 (extra pixel right).
    conv_case("conv_same_s2", 2, 7, 6, 3, 4, 3, 2, (1, 1, 0, 1))
    dense_case()
    batchnorm_case()
    pool_case("maxpool", F.max_pool2d, 2, 2)
    pool_case("avgpool", F.avg_pool2d, 3, 2)
    loss_cases()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden.txt")
    with open(out, "w") as f:
        f.write(f"# PyTorch {torch.__version__} references written by make_golden.py; do not edit.\n")
        for name, shape, values in records:
            f.write(" ".join([name] + [str(d) for d in shape]) + "\n")
            f.write(" ".join(compact_hex(v) for v in values) + "\n")
    print(f"wrote {len(records)} tensors to {out}")


if __name__ == "__main__":
    main()
