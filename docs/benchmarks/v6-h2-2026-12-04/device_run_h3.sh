#!/usr/bin/env bash
# Device run 2 (2026-12-04): v6-H3 = v6-H2's recipe with the hand-written sets A and B
# (C held out); its detector's part of the judge's rows at layer 4 over RAGTruth dev, the
# generated dev and holdout families and every set of C; the bf16 CUDA test of the default.
set -uo pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $OUT/log.txt; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
[ -L docs/model-card ] && rm docs/model-card
tar -xJf .gpu/data.txz || exit 1
mkdir -p ../shared/data && cp -r .gpu/d/ragtruth ../shared/data/ragtruth_qa_test_subset
el start
( timeout 100 python3 -m pytest -q -p no:cacheprovider -p no:warnings \
  tests/test_detector.py::test_gpu_bf16_matches_cpu > $OUT/tests.log 2>&1; echo "tests rc $?" >> $OUT/tests.log ) &
RT=../shared/data/ragtruth_qa_test_subset
EV="$RT@dev runs/toolctx/dev.jsonl runs/toolctx/holdout.jsonl"
C=$(python3 -c "import sys; sys.path.insert(0, 'scripts'); from hand_judge import parts; print(' '.join(parts()['C']))")
mkdir -p .gpu/c
export OMP_NUM_THREADS=8 GUARDRAIL="python3 -m guardrail.cli"
timeout 170 bash scripts/train-gpu-turns .gpu/d runs/h3 > .gpu/c/train_h3.log 2>&1; el "H3 trained rc $?"
( timeout 120 python3 .gpu/score.py runs/h3 .gpu/c/h3-eval.json 4 0 "" $EV > .gpu/c/h3-eval.log 2>&1 ) &
S1=$(echo $C | tr ' ' '\n' | awk 'NR % 2 == 0'); S2=$(echo $C | tr ' ' '\n' | awk 'NR % 2 == 1')
( timeout 120 python3 .gpu/score.py runs/h3 .gpu/c/h3-c0.json 4 0 "" $S1 > .gpu/c/h3-c0.log 2>&1 ) &
( timeout 120 python3 .gpu/score.py runs/h3 .gpu/c/h3-c1.json 4 0 "" $S2 > .gpu/c/h3-c1.log 2>&1 ) &
wait
el scored; tail -n 3 .gpu/c/*.log | tee -a $OUT/log.txt
rm -rf runs/h3/checkpoint*
tar -czf /tmp/back.tgz .gpu/c runs/h3 && split -b 15M /tmp/back.tgz $OUT/back.part-
el done
