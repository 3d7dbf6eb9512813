#!/usr/bin/env bash
# The measurements of docs/model-card.md, "v6-H4: trained on CPU with the sets written
# since v6-H2" (sixty-seventh session), from the repository root. Models: h2 =
# guardrail/models/default (v6-H2, shipped); h4 = runs/h4/m (train.sh here) with the
# shipped judge copied into its guardrail.json (`bash run.sh judge-copy`).
# Data: runs/toolctx/holdout.jsonl (`guardrail data toolctx --family holdout --n 400 --seed
# 11 --out runs/toolctx/holdout.jsonl`), RAGTruth QA's dev split from ../shared/data.
# Usage: bash run.sh judge-copy | blind MODEL SET... | wide MODEL | inflight MODEL | soup
#   1. blind: streamed, each held-out set, every in-flight check at exit 4 (the shipped policy).
#   2. wide: streamed with the shipped defaults, RAGTruth dev and the holdout family, 150 each.
#   3. inflight: in flight (layer 4, the shipped judge), RAGTruth dev's example F1.
#   4. soup: the weights of v6-H2 and v6-H4 averaged, key by key (WiSE-FT's interpolation,
#      alpha 0.5), the exits too, read with v6-H2's guardrail.json (its thresholds and
#      judge): runs/h4s/m. Then `blind h4s ...`, `wide h4s`, `inflight h4s`.
# The commands are ../h5-lwf-2026-12-07/run.sh's, writing here.
set -euo pipefail
case $1 in judge-copy|soup) set -- "$1" h4;; esac
B=docs/benchmarks/h4-cpu-2026-12-07 exec bash docs/benchmarks/h5-lwf-2026-12-07/run.sh "$@"
