set -x
cd "$(git rev-parse --show-toplevel)"
X=data/external; RT=../shared/data/ragtruth_qa_test_subset; G=.venv/bin/guardrail
mkdir -p runs/gate
M=runs/pcwb; n=pcwb
$G eval --model $M --data $RT --split dev --out runs/gate/$n-rt-full.json --no-progress | tail -3
$G eval --model $M --data $RT --split dev --exit-layer 4 --out runs/gate/$n-rt-exit4.json --no-progress | tail -3
$G eval --model $M --data runs/toolctx/dev.jsonl --out runs/gate/$n-tool-full.json --no-progress | tail -3
$G eval --model $M --data $X/halueval-qa.jsonl --split dev --limit 400 --out runs/gate/$n-hqa-full.json --no-progress | tail -3
$G eval --model $M --data $X/vitaminc.jsonl --split dev --limit 400 --out runs/gate/$n-vc-full.json --no-progress | tail -3
$G eval --model pcw --data $RT --split dev --out runs/gate/pcw-rt-full.json --no-progress | tail -3
echo EVAL-DONE
