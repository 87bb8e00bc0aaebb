#!/bin/bash
# Multi-worker over MPI on one machine vs MirroredStrategy in one process: examples/s of
# `sluice train` on the same model, data and global batch — mirrored:N with N threads, then N
# processes of one thread each under mpirun (--strategy multiworker). Prints both report lines and
# the ratio of each round, then the median ratio over the rounds.
#
#   scripts/bench-multiworker.sh SLUICE_BINARY [workers=2] [model=tpu-guide-cnn] [steps=20] [batch=32]
#                                [data=fashion-mnist] [rounds=1]
#
# data: any --data of `sluice train` with 28×28 grey images for the default model; a folder with a
# small test/ split keeps the final evaluation (every worker evaluates the whole test split) short.
# Each run trains in a fresh temporary model directory. On a shared machine the load changes from
# one run to the next: several rounds, each pairing the two runs, give a steadier median.
set -euo pipefail
sluice=${1:?usage: bench-multiworker.sh SLUICE_BINARY [workers] [model] [steps] [batch] [data] [rounds]}
workers=${2:-2}
model=${3:-tpu-guide-cnn}
steps=${4:-20}
batch=${5:-32}
data=${6:-fashion-mnist}
rounds=${7:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(train --data "$data" --model "$model" --steps "$steps" --batch "$batch" --seed 1 --json)

rate() { sed -n 's/.*"examples_per_sec": *\([0-9.e+]*\).*/\1/p' | tail -1; }

ratios=()
for ((round = 1; round <= rounds; ++round)); do
  rm -rf "$tmp/mirrored" "$tmp/multiworker"
  mirrored=$("$sluice" "${common[@]}" --model-dir "$tmp/mirrored" --threads "$workers" \
    --strategy "mirrored:$workers" | rate)
  multi=$(mpirun --allow-run-as-root --oversubscribe -np "$workers" "$sluice" "${common[@]}" \
    --model-dir "$tmp/multiworker" --threads 1 --strategy multiworker | rate)
  ratio=$(awk -v a="$multi" -v b="$mirrored" 'BEGIN { printf "%.3f", a / b }')
  ratios+=("$ratio")
  echo "model $model, global batch $batch, $steps steps (round $round of $rounds)"
  echo "mirrored:$workers (1 process, $workers threads): $mirrored examples/s"
  echo "multiworker ($workers processes x 1 thread):  $multi examples/s"
  echo "multiworker / mirrored = $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n |
  awk '{ r[NR] = $1 } END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2;
                           printf "median multiworker / mirrored over %d round(s) = %.3f\n", NR, m }'
