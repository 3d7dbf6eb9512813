set -x
cd "$(git rev-parse --show-toplevel)"
X=data/external; RT=../shared/data/ragtruth_qa_test_subset; G=.venv/bin/guardrail
$G judge fit --model runs/pcwb --layers 2,4,6 --data $RT@calib --data runs/toolctx/judge.jsonl --data runs/toolctx/calib.jsonl --data $X/halueval-qa.jsonl@calib --data $X/vitaminc.jsonl@calib --limit 300 --whole-response halueval-qa,vitaminc --rows-cache runs/an/scores_fit_pcwb.json 2>&1 | tail -30
echo FIT-DONE
$G judge eval --model runs/pcwb --layers 2,4,6 --data runs/toolctx/dev.jsonl --data $RT@dev --data $X/halueval-qa.jsonl@dev --data $X/vitaminc.jsonl@dev --limit 400 --whole-response halueval-qa,vitaminc --rows-cache runs/an/scores_dev_pcwb.json --out runs/gate/pcwb-judge-dev.json 2>&1 | tail -40
echo JEVAL-DONE
