#!/bin/bash
# Multi-worker over MPI on one machine vs MirroredStrategy in one process: examples/s of
# `sluice train` on the same model, data and global batch — mirrored:N with N threads, then N
# processes of one thread each under mpirun (--strategy multiworker). Prints both report lines and
# the ratio.
#
#   scripts/bench-multiworker.sh SLUICE_BINARY [workers=2] [model=tpu-guide-cnn] [steps=20] [batch=32]
#                                [data=fashion-mnist]
#
# data: any --data of `sluice train` with 28×28 grey images for the default model; a folder with a
# small test/ split keeps the final evaluation (every worker evaluates the whole test split) short.
# Each run trains in a fresh temporary model directory.
set -euo pipefail
sluice=${1:?usage: bench-multiworker.sh SLUICE_BINARY [workers] [model] [steps] [batch]}
workers=${2:-2}
model=${3:-tpu-guide-cnn}
steps=${4:-20}
batch=${5:-32}
data=${6:-fashion-mnist}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(train --data "$data" --model "$model" --steps "$steps" --batch "$batch" --seed 1 --json)

rate() { sed -n 's/.*"examples_per_sec": *\([0-9.e+]*\).*/\1/p' | tail -1; }

mirrored=$("$sluice" "${common[@]}" --model-dir "$tmp/mirrored" --threads "$workers" \
  --strategy "mirrored:$workers" | rate)
multi=$(mpirun --allow-run-as-root --oversubscribe -np "$workers" "$sluice" "${common[@]}" \
  --model-dir "$tmp/multiworker" --threads 1 --strategy multiworker | rate)
echo "model $model, global batch $batch, $steps steps"
echo "mirrored:$workers (1 process, $workers threads): $mirrored examples/s"
echo "multiworker ($workers processes x 1 thread):  $multi examples/s"
awk -v a="$multi" -v b="$mirrored" 'BEGIN { printf "multiworker / mirrored = %.3f\n", a / b }'
