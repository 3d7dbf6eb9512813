#!/usr/bin/env bash
# v6-H4 (CPU candidate, sixty-seventh session): the shipped v6-H2 trained one more epoch on
# the hand-written sets written since it (turns-cm .. turns-ey, 65 sets; turns-ez .. -fe held
# out, never trained on), beside a replay of what it saw before: the sets it trained on
# (turns .. turns-cl), RAGTruth QA train, generated train-family turns, HaluEval dialogue and
# synthetic examples over RAGTruth train documents. VitaminC and the bigbench passages are
# no longer on PyPI (docs/model-card.md, "Data sets"), so they are left out.
#
#   bash docs/benchmarks/h4-cpu-2026-12-07/train.sh OUT    (from the repository root)
#
# Data (runs/h4/data): `guardrail data fetch --dest runs/h4/data --only halueval-dialogue`,
# `guardrail data toolctx --family train --n 4000 --seed 0 --out runs/h4/data/train.jsonl`,
# and hand-old.jsonl / hand-new.jsonl, the sets above concatenated in written order
# (scripts/hand_judge.py's order()). About 60 minutes on 2 cores; EXTRA=--resume continues a stopped run;
# DETECTOR_ARGS adds options to `train detector` alone (../h5-lwf-2026-12-07/train.sh).
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
  --epochs 1 --lr 3e-5 --batch-tokens 16384 --seed 13 --out "$OUT" --device cpu \
  --no-progress ${DETECTOR_ARGS:-} ${EXTRA:-}
$G train exits --model "$OUT" --layers 2,4 "${SETS[@]}" --max-per-dataset 400 \
  --whole-response halueval-dialogue --synthetic 0 --epochs 1 --lr 1e-3 \
  --batch-tokens 16384 --seed 13 --no-progress ${EXTRA:-}
