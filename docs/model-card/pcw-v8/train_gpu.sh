# PCW v8 candidate (2026-11-28, seventeenth session, one H200): v6 fine-tuned reading each
# query block's top windows in training (--read-top), on long contexts of similar
# distractors; then its exits and per-source thresholds; then v8 and v6 evaluated on the GPU.
# Ran as one device call: 'timeout 575 bash .gpu/run.sh' with .gpu (this script, the data
# of scripts/gpu_data_subset.py and runs/longctx8s-88 as data.txz) and .whl (wheels of the
# packages the machine lacks) carried. The call ended at its limit during the evals; every
# figure in docs/context-states.md was then measured on the 2-core CPU machine in float32,
# except the long-context set's on the GPU (bf16), named so there.
# The six test errors in tests-h200.log are the test_top_mask fixture, which loads the
# default weights: they were left out of that call to keep it under 64 MiB.
# One device call: the CUDA tests, then PCW v8 (v6 fine-tuned reading each block's top
# windows in training, long similar-distractor contexts), its exits and per-source
# thresholds, then v6 and v8 evaluated side by side on the GPU.
set -uo pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
T0=$(date +%s)
step() { echo "== +$(( $(date +%s) - T0 ))s $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
tar -xJf .gpu/data.txz -C /tmp || exit 1
X=/tmp/x; R=/tmp/runs; mkdir -p $R $OUT/ev
mkdir -p ../shared/data && cp -r $X/ragtruth ../shared/data/ragtruth_qa_test_subset 2>/dev/null
G="python3 -m guardrail.cli"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
step tests
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_varlen.py tests/test_top_mask.py \
  > $OUT/tests.log 2>&1
echo "tests rc=$?"; tail -3 $OUT/tests.log
DATA=(--data "ragtruth=$X/ragtruth" --data "$X/train.jsonl" --data "$X/halueval-qa.jsonl"
      --data "$X/halueval-dialogue.jsonl" --data "$X/vitaminc.jsonl"
      --data "$X/knowledge-conflicts.jsonl"
      --whole-response halueval-qa,halueval-dialogue,vitaminc,knowledge-conflicts)
SYN=(--synthetic 1000 --synthetic-from ragtruth --passages "$X/passages.jsonl"
     --synthetic-kinds number,entity,negation,insertion,swap,absent --synthetic-crop 0.7)
LONG=(--distractors 0.8 --max-distractors ${MAXD:-40} --similar-distractors 0.5 --read-top)
step train
timeout ${TRAIN_S:-300} $G train detector --backbone guardrail/models/pcw --attention pcw \
  --render-structured "${DATA[@]}" --max-per-dataset 400 "${SYN[@]}" "${LONG[@]}" \
  --epochs 0.6 --max-steps ${STEPS:-600} --lr 3e-5 --batch-tokens 16384 --seed 13 \
  --out $R/pcw8 --no-progress > $OUT/train.log 2>&1 || { tail -30 $OUT/train.log; exit 1; }
grep -E "step .*(00|25|50|75)/" $OUT/train.log | tail -4
step exits
timeout 120 $G train exits --model $R/pcw8 --layers 2,4 "${DATA[@]}" --max-per-dataset 700 \
  --synthetic 0 "${LONG[@]}" --epochs 1 --max-steps 300 --lr 1e-3 --batch-tokens 16384 \
  --seed 13 --no-progress >> $OUT/train.log 2>&1 || { tail -30 $OUT/train.log; exit 1; }
step calibrate
timeout 80 $G calibrate --model $R/pcw8 --pool source "${DATA[@]}" --max-per-dataset 250 \
  --unit example --layers 2,4,6 --no-progress >> $OUT/train.log 2>&1 || tail -5 $OUT/train.log
# the weights come back in parts of at most 15 MB, the rest as one archive
split -b 15M $R/pcw8/model.safetensors $OUT/pcw8.model.part-
tar -C $R/pcw8 --exclude model.safetensors --exclude 'checkpoint*' --exclude teacher_probs.jsonl \
  -czf $OUT/pcw8-rest.tgz .
step evals
ev() {  # name, model, eval args...: one summary line per run into evals.jsonl
  local n=$1 M=$2; shift 2
  timeout 60 $G eval --model $M "$@" --no-progress --out $OUT/ev/$n.json > /dev/null 2>&1
  python3 .gpu/summary.py "$OUT/ev/$n.json" "$n" >> $OUT/evals.jsonl
}
for m in v8:$R/pcw8 v6:guardrail/models/pcw; do
  n=${m%%:*}; M=${m#*:}
  ev $n-lc88 $M --data /tmp/longctx8s-88 --by length,depth
  ev $n-rt $M --data $X/ragtruth --split dev
  ev $n-vc $M --data $X/dev-vc.jsonl --split dev --limit 400
  ev $n-hqa $M --data $X/dev-hqa.jsonl --split dev --limit 400
  ev $n-tool $M --data $X/dev-tool.jsonl
  step "eval $n done"
done
tar -C $OUT -czf $OUT/evals.tgz ev && rm -r $OUT/ev
cat $OUT/evals.jsonl
step done
