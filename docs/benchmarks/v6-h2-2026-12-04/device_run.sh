#!/usr/bin/env bash
# Device run (2026-12-04): v6-H2 = v5 trained further with the hand-written sets A beside the
# v6-H recipe; the detector's part of the judge's rows for v5 and H2 at layer 4 over the
# fit data, the eval data and every hand-written set; the CUDA tests of the default model.
set -uo pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $OUT/log.txt; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
[ -L docs/model-card ] && rm docs/model-card
tar -xJf .gpu/data.txz || exit 1
mkdir -p ../shared/data && cp -r .gpu/d/ragtruth ../shared/data/ragtruth_qa_test_subset
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a $OUT/log.txt
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" | tee -a $OUT/log.txt
el start
RT=../shared/data/ragtruth_qa_test_subset; X=data/external
FIT="$RT@calib runs/toolctx/judge.jsonl runs/toolctx/calib.jsonl $X/halueval-qa.jsonl@calib $X/vitaminc.jsonl@calib"
EV="$RT@dev runs/toolctx/dev.jsonl runs/toolctx/holdout.jsonl"
HAND=$(ls docs/model-card/paraphrases/turns*.jsonl)
mkdir -p .gpu/c
scoreall() {  # model tag
  ( timeout ${TS:-300} python3 .gpu/score.py $1 .gpu/c/$2-fit.json 4 300 halueval-qa,vitaminc $FIT > .gpu/c/$2-fit.log 2>&1 ) &
  ( timeout ${TS:-300} python3 .gpu/score.py $1 .gpu/c/$2-eval.json 4 0 "" $EV > .gpu/c/$2-eval.log 2>&1 ) &
  local i=0; for part in 0 1 2; do
    S=$(echo $HAND | tr ' ' '\n' | awk -v p=$part 'NR % 3 == p')
    ( timeout ${TS:-300} python3 .gpu/score.py $1 .gpu/c/$2-hand$part.json 4 0 "" $S > .gpu/c/$2-hand$part.log 2>&1 ) &
  done
}
scoreall default v5

export OMP_NUM_THREADS=6 GUARDRAIL="python3 -m guardrail.cli"
timeout 180 bash scripts/train-gpu-turns .gpu/d runs/h2 > .gpu/c/train_h2.log 2>&1; el "H2 trained rc $?"
tail -4 .gpu/c/train_h2.log
TS=220 scoreall runs/h2 h2
( timeout 150 python3 -m pytest -q -p no:cacheprovider -p no:warnings tests/test_detector.py -k "cuda" \
  "tests/test_train.py::test_train_detector_on_cuda_with_bf16_autocast" \
  "tests/test_train.py::test_a_pcw_detector_trains_reading_each_blocks_top_windows[cuda]" > .gpu/c/tests.log 2>&1; echo "tests rc $?" >> .gpu/c/tests.log ) &
wait
el "scored"; tail -2 .gpu/c/*.log | tee -a $OUT/log.txt
rm -f runs/h2/checkpoint* -r; ls -la runs/h2 | tee -a $OUT/log.txt
tar -czf /tmp/back.tgz .gpu/c runs/h2 && split -b 15M /tmp/back.tgz $OUT/back.part-
el done
