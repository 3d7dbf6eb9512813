# What a flag is called (docs/model-card.md, "What a flag is called", fifty-eighth session),
# from the repository root with the data of the model card (runs/ragtruth ->
# ../shared/data/ragtruth_qa_test_subset; runs/toolctx as its commands write it).
#   bash run.sh rule [old]   every labelled unsupported sentence, no model: kinds-new.txt, or
#                            with OLD=/tmp/old (a worktree of fa7f79b with
#                            guardrail/train/kinds.py copied in) kinds-old.txt
#   bash run.sh eval         `guardrail eval` on RAGTruth dev: the judge's "kind ok" (eval.txt)
#   bash run.sh bases        no model: what each claim would rest on, BASE=/tmp/head (a
#                            worktree of a57e0c7) against the checkout (a record named by its
#                            whole label wins a tie), every hand-written set and the generated
#                            dev, holdout and training families: bases-moved.txt
#   bash run.sh streamed V   through the real proxy, V = old (OLD=/tmp/old, a worktree of
#                            fa7f79b, the session's start) or new (the checkout): the 24 sets
#                            of C, every in-flight check at exit 4 (C-V/), and RAGTruth dev
#                            and the holdout family, 150 answers each, shipped defaults (wide-V)
#   bash run.sh summary      both streamed runs side by side, and every sentence whose
#                            release changed (streamed.txt)
#   bash run.sh emoji [old]  the detector's highest token probability on four Eiffel answers,
#                            with and without an emoji: emoji.txt, or with OLD's code
#                            (OLD=/tmp/old, fa7f79b) emoji-old.txt
#   bash run.sh unreadable   how many responses and contexts of the measured sets hold a
#                            pictograph the tokenizer cannot read (unreadable.txt)
B=docs/benchmarks/kinds-2026-12-05
if [ "$1" = rule ]; then
  if [ "$2" = old ]; then PYTHONPATH=${OLD:-/tmp/old} .venv/bin/python scripts/explain_kinds.py \
      --out /tmp/kinds-old.json > $B/kinds-old.txt
  else .venv/bin/python scripts/explain_kinds.py --out /tmp/kinds-new.json > $B/kinds-new.txt; fi
  exit
fi
if [ "$1" = eval ]; then
  .venv/bin/guardrail eval --data runs/ragtruth --split dev --no-progress --out $B/eval.json > $B/eval.txt
  exit
fi
if [ "$1" = bases ]; then
  OLD=${BASE:-/tmp/head}; P=docs/model-card/paraphrases
  S="$(ls $PWD/$P/turns*.jsonl) $PWD/runs/toolctx/dev.jsonl $PWD/runs/toolctx/holdout.jsonl $PWD/runs/toolctx/judge.jsonl"
  (cd /tmp && PYTHONPATH=$OLD $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump /tmp/bases-old.json $S)
  (cd /tmp && $OLDPWD/.venv/bin/python $OLDPWD/scripts/claim_bases.py dump /tmp/bases-now.json $S)
  .venv/bin/python scripts/claim_bases.py compare /tmp/bases-old.json /tmp/bases-now.json > $B/bases-moved.txt
  exit
fi
if [ "$1" = streamed ]; then
  P=docs/model-card/paraphrases; PP=; [ "$2" = old ] && PP=${OLD:-/tmp/old}
  C=$(.venv/bin/python -c "import sys; sys.path.insert(0, 'scripts'); from hand_judge import parts
print(' '.join(parts()['C']))")
  for s in $C; do n=$(basename $s .jsonl)
    PYTHONPATH=$PP .venv/bin/guardrail bench verdicts --data $s \
      --config docs/benchmarks/by-basis/fixed-exit.yaml --out $B/C-$2/$n > /dev/null
  done
  PYTHONPATH=$PP .venv/bin/guardrail bench verdicts --data runs/ragtruth@dev \
    --data runs/toolctx/holdout.jsonl --limit 150 --out $B/wide-$2 > /dev/null
  exit
fi
if [ "$1" = emoji ]; then
  PP=$PWD; OUT=$B/emoji.txt; [ "$2" = old ] && PP=${OLD:-/tmp/old} && OUT=$B/emoji-old.txt
  M=$PWD/guardrail/models/default; OUT=$PWD/$OUT
  cd /tmp && PYTHONPATH=$PP M=$M $OLDPWD/.venv/bin/python - > $OUT <<'PY'
import os
from guardrail.model import Detector
from guardrail.model.detector import DetectInput
det = Detector.from_pretrained(os.environ["M"])
ctx = "The Eiffel Tower is a wrought-iron lattice tower in Paris. It is 330 metres tall."
for ans in ["The tower is 330 metres tall in Paris.", "The tower is 330 metres tall in Paris. \U0001F5FC",
            "The tower is 330 metres tall in Paris \u2728.", "The tower is 330 metres tall in Paris\U0001F5FC."]:
    d = det.detect_batch([DetectInput(ctx, "How tall is it?", ans)])[0]
    print(f"{max(d.token_probs):.3f}  {ans!r}")
PY
  exit
fi
if [ "$1" = unreadable ]; then
  .venv/bin/python - > $B/unreadable.txt <<'PY'
import glob, json
from transformers import AutoTokenizer
from guardrail.model.inputs import readable
from guardrail.train.data import load_any
tok = AutoTokenizer.from_pretrained("guardrail/models/default")
texts = []
for f in glob.glob("docs/model-card/paraphrases/*.jsonl") + [f"runs/toolctx/{n}.jsonl" for n in
                                                            ("dev", "holdout", "train")]:
    for line in open(f):
        row = json.loads(line)
        texts += [row["response"], row["context"]]
for ex in load_any("runs/ragtruth"):
    texts += [ex.response, ex.context]
print(f"{sum(readable(tok, t) != t for t in texts)} of {len(texts)} texts hold one")
PY
  exit
fi
if [ "$1" = summary ]; then
  B=$B .venv/bin/python - > $B/streamed.txt <<'PY'
import glob, json, os
B = os.environ["B"]
def totals(paths):
    sup = kept = uns = stop = 0
    for p in paths:
        a = json.load(open(p))["by_dataset"]["all"]
        n_sup = a["sentences"] - a["unsupported"]
        sup += n_sup; kept += round(a["supported_kept"] * n_sup)
        uns += a["unsupported"]; stop += round((a["unsupported_stopped"] or 0) * a["unsupported"])
    return f"kept {kept}/{sup} = {kept / sup:.4f}, stopped {stop}/{uns} = {stop / max(uns, 1):.4f}"
def rows(pattern):
    out = {}
    for p in glob.glob(pattern):
        for line in open(p):
            r = json.loads(line)
            out[(r["example"], r["original"])] = r
    return out
for name, pat in (("C (24 sets, exit 4)", "C-{}/*/verdicts.json"),
                  ("RAGTruth dev + holdout family, 150 each", "wide-{}/verdicts.json")):
    print(f"{name}: old {totals(glob.glob(f'{B}/' + pat.format('old')))}; "
          f"new {totals(glob.glob(f'{B}/' + pat.format('new')))}")
    for part, sub in (("C", "C-{}/*/sentences.jsonl"), ("wide", "wide-{}/sentences.jsonl")):
        if not pat.startswith(part):
            continue
        old, new = rows(f"{B}/" + sub.format("old")), rows(f"{B}/" + sub.format("new"))
        moved = [k for k in old.keys() & new.keys() if old[k]["stopped"] != new[k]["stopped"]]
        print(f"  sentences whose release changed: {len(moved)}; cut differently: "
              f"{len(old.keys() ^ new.keys())}")
        for k in sorted(moved):
            print(f"    {'unsupported' if new[k]['gold'] else 'supported'}: "
                  f"{old[k]['stopped']} -> {new[k]['stopped']}  {k[0]}  {k[1].strip()[:90]}")
PY
  exit
fi
