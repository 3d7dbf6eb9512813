# From the repository root (data as in the model card: runs/toolctx, runs/ragtruth, data/external).
for M in default pcw; do
  .venv/bin/guardrail judge eval --model guardrail/models/$M --layers 4 \
    --data runs/toolctx/dev.jsonl --data runs/toolctx/holdout.jsonl \
    --data runs/ragtruth/derived_ragtruth_format@dev --data runs/ragtruth/derived_ragtruth_format@calib \
    --data data/external/halueval-qa.jsonl@dev --data data/external/vitaminc.jsonl@dev \
    --limit 400 --whole-response halueval-qa,vitaminc --rows-cache runs/ens/$M-cache.json \
    --out docs/benchmarks/two-judges-2026-12-01/$M-judge.json
done
.venv/bin/python docs/benchmarks/two-judges-2026-12-01/two_judges.py > docs/benchmarks/two-judges-2026-12-01/two-judges.md
