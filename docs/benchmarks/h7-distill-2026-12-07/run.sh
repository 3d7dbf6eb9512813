#!/usr/bin/env bash
# The measurements of docs/model-card.md, "v6-H7" (seventieth session), from the repository
# root: ../h5-lwf-2026-12-07/run.sh's commands, writing here. Models: h2 (shipped), pcw,
# h7 = runs/h7/m (`DISTILL=0.8 bash docs/benchmarks/h5-lwf-2026-12-07/train.sh runs/h7/m`),
# h7s = v6-H2 and v6-H7 averaged (`run.sh soup h7`).
# Usage: bash run.sh judge-copy MODEL | blind MODEL SET... | wide MODEL | inflight MODEL | soup MODEL
B=docs/benchmarks/h7-distill-2026-12-07 exec bash docs/benchmarks/h5-lwf-2026-12-07/run.sh "$@"
