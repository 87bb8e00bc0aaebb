#!/usr/bin/env bash
# Installs every Debian package sluice builds, tests and runs with. Idempotent: when all are
# present it touches nothing (no apt-get update, no network).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config
  # engine and numerics
  libtbb-dev libeigen3-dev
  # formats
  libprotobuf-dev protobuf-compiler zlib1g-dev libturbojpeg0-dev libjpeg62-turbo-dev
  libpng-dev libarchive-dev libhdf5-dev
  # distribution
  libopenmpi-dev openmpi-bin
  # command line and JSON
  libcli11-dev nlohmann-json3-dev
  # tests and benchmarks; clang and its libFuzzer runtime for scripts/fuzz.sh; clang-format for
  # the formatting check (make format-check)
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev clang-format
  # optional: the h5py cross-check of Keras weight files (skipped without them)
  python3-h5py python3-numpy
  # the Python package (python/): pybind11 and DLPack for the binding; pytest, PIL and torch for
  # its tests, examples and benchmarks (torchvision for the PyTorch DataLoader peer)
  pybind11-dev python3-dev libdlpack-dev python3-pytest python3-pil python3-torch
  python3-torchvision
  # the default training data
  dataset-fashion-mnist
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
