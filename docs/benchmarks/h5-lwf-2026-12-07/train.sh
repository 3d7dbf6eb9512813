#!/usr/bin/env bash
# v6-H5 (CPU candidate, sixty-eighth session) and v6-H6 (sixty-ninth, after the loss was mixed
# token by token): v6-H4's data and steps (../h4-cpu-2026-12-07/train.sh, run from here),
# with a replay of the prose v6-H2 can no longer be given: v6-H2 itself, the starting
# weights, is the teacher of the prose sets (RAGTruth train, HaluEval dialogue, the
# synthetic examples over RAGTruth documents), so that the model keeps what it does there
# while it learns the hand-written tool turns from their labels ("learning without
# forgetting"; `--distill-only`). VitaminC, v6-H2's prose replay, is gone from PyPI.
#
#   bash docs/benchmarks/h5-lwf-2026-12-07/train.sh OUT    (from the repository root)
#
# Data (runs/h4/data) as for v6-H4. About 55 minutes on 2 cores; EXTRA=--resume continues.
set -euo pipefail
DETECTOR_ARGS="--teacher guardrail/models/default --distill ${DISTILL:-0.5} \
--distill-only ragtruth,halueval-dialogue,synthetic" \
  exec bash docs/benchmarks/h4-cpu-2026-12-07/train.sh "${1:?OUT directory}"
