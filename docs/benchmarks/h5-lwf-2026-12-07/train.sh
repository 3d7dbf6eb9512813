#!/usr/bin/env bash
# v6-H5 (CPU candidate, sixty-eighth session): v6-H4's data and steps (../h4-cpu-2026-12-07/
# train.sh), with a replay of the prose v6-H2 can no longer be given: v6-H2 itself, the
# starting weights, is the teacher of the prose sets (RAGTruth train, HaluEval dialogue,
# the synthetic examples over RAGTruth documents), so that the model keeps what it does
# there while it learns the hand-written tool turns from their labels ("learning without
# forgetting"; `--distill-only`). VitaminC, v6-H2's prose replay, is gone from PyPI.
#
#   bash docs/benchmarks/h5-lwf-2026-12-07/train.sh OUT    (from the repository root)
#
# Data (runs/h4/data) as for v6-H4. About 65 minutes on 2 cores; EXTRA=--resume continues.
set -euo pipefail
OUT=${1:?OUT directory}
D=runs/h4/data
G=${GUARDRAIL:-.venv/bin/guardrail}
SETS=(--data ragtruth=../shared/data/ragtruth_qa_test_subset --data "$D/train.jsonl"
      --data halueval-dialogue="$D/halueval-dialogue.jsonl"
      --data hand-old="$D/hand-old.jsonl" --data hand-new="$D/hand-new.jsonl")
$G train detector --backbone guardrail/models/default --render-structured "${SETS[@]}" \
  --max-per-dataset 1000 --whole-response halueval-dialogue \
  --synthetic 600 --synthetic-from ragtruth \
  --synthetic-kinds number,entity,negation,insertion,swap,absent --synthetic-crop 0.7 \
  --teacher guardrail/models/default --distill ${DISTILL:-0.5} \
  --distill-only ragtruth,halueval-dialogue,synthetic \
  --epochs 1 --lr 3e-5 --batch-tokens 16384 --seed 13 --out "$OUT" --device cpu \
  --no-progress ${EXTRA:-}
$G train exits --model "$OUT" --layers 2,4 "${SETS[@]}" --max-per-dataset 400 \
  --whole-response halueval-dialogue --synthetic 0 --epochs 1 --lr 1e-3 \
  --batch-tokens 16384 --seed 13 --no-progress ${EXTRA:-}
