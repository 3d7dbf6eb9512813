#!/usr/bin/env bash
# The blind pair turns-fp/-fq (seventy-third session), streamed before anyone read it, and
# the glossed reading of tool results measured in docs/model-card.md, from the repository
# root: ../h5-lwf-2026-12-07/run.sh's commands, writing here.
# Usage: bash run.sh blind MODEL SET... (MODEL: h2, the shipped default, or pcw)
set -euo pipefail
B=docs/benchmarks/blind-fp-fq-2026-12-07 exec bash docs/benchmarks/h5-lwf-2026-12-07/run.sh "$@"
