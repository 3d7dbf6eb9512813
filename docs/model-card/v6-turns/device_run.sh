# The device run of 2026-11-30 (docs/model-card.md, "Trained on hand-written turns").
# Prepared on the CPU machine (nothing of it committed but this file):
#   guardrail data fetch --dest data/external; the toolctx files of docs/model-card.md
#   (train --n 4000 --seed 0, holdout --n 400 --seed 11; dev --n 400 --seed 1)
#   mkdir -p .gpu/d; for each docs/model-card/paraphrases/turns*.jsonl: turns-bt..-by
#     appended to .gpu/d/heldout-turns.jsonl, every other set to .gpu/d/handwritten.jsonl
#   python scripts/gpu_data_subset.py .gpu/d --cap 2000   # the recipe's exact examples
#   cp runs/toolctx/holdout.jsonl .gpu/d/holdout-tool.jsonl
#   tar -cJf .gpu/data.tar.xz -C .gpu d          # 5.4 MB
#   wheels of nltk, starlette, sse-starlette, uvicorn, redis, pydantic(-core),
#   annotated-types, typing-inspection, rank-bm25 in .whl (device README)
# and run there as `bash .gpu/run.sh` with .gpu and .whl carried (480 s of wall time;
# docs/benchmarks, docs/model-card and guardrail/models/pcw were moved aside for the call
# so that the tree fitted in 64 MiB).
#!/usr/bin/env bash
# device run: v6-H and the ablation v6-G, trained from v5; token-rule evals of each and v5
set -uo pipefail
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 GUARDRAIL="python3 -m guardrail.cli"
mkdir -p .gpu/x && tar -xJf .gpu/data.tar.xz -C .gpu/x && X=.gpu/x/d
nvidia-smi --query-gpu=name,memory.total --format=csv | tee $OUT/log.txt
python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__)" | tee -a $OUT/log.txt
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $OUT/log.txt; }
el start H
HANDWRITTEN=1 bash scripts/train-gpu-turns $X runs/h > $OUT/train_h.log 2>&1; el "H rc $?"
mkdir -p $OUT/h && cp runs/h/guardrail.json $OUT/h/ && (cd runs/h && split -b 15000000 -d model.safetensors $OUT/h/part.) 
tail -5 $OUT/train_h.log
HANDWRITTEN=0 bash scripts/train-gpu-turns $X runs/g > $OUT/train_g.log 2>&1; el "G rc $?"
mkdir -p $OUT/g && cp runs/g/guardrail.json $OUT/g/
G="python3 -m guardrail.cli"
mkdir -p $OUT/ev
for M in h g default; do
  MD=runs/$M; [ $M = default ] && MD=guardrail/models/default
  for L in 4 full; do
    E="--exit-layer $L"; [ $L = full ] && E=""
    $G eval --model $MD --data $X/ragtruth --split dev $E --out $OUT/ev/${M}_rt_e$L.json > /dev/null 2>&1
    $G eval --model $MD --data $X/heldout-turns.jsonl $E --out $OUT/ev/${M}_hw_e$L.json > /dev/null 2>&1
    $G eval --model $MD --data $X/dev-tool.jsonl $E --out $OUT/ev/${M}_tool_e$L.json > /dev/null 2>&1
  done
  el "evals $M"
done
(cd $OUT && tar czf ev.tgz ev train_g.log && rm -rf ev train_g.log)
el done
