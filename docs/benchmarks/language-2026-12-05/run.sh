#!/usr/bin/env bash
# Another language: what the detector made of it before, what the proxy does now, and how
# the reading reads the English data (docs/model-card.md, "Another language").
#   bash docs/benchmarks/language-2026-12-05/run.sh reads        -> reads.txt
#   bash docs/benchmarks/language-2026-12-05/run.sh check [old]  -> check[-old].txt
# "old" runs the code of fac2977 (before the reading) from a worktree in /tmp/lang-old.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=$ROOT/docs/benchmarks/language-2026-12-05
PY=$ROOT/.venv/bin/python
case "${1:-}" in
  reads)
    cd "$ROOT" && $PY scripts/language_reads.py --show 400 > "$OUT/reads.txt" ;;
  check)
    SUFFIX="" PYPATH=$ROOT
    if [ "${2:-}" = old ]; then
      [ -d /tmp/lang-old ] || git -C "$ROOT" worktree add -f /tmp/lang-old fac2977 >/dev/null
      SUFFIX=-old PYPATH=/tmp/lang-old
    fi
    cd /tmp && for args in \
      "埃菲尔铁塔于1887年至1889年建造。它高330米。|埃菲尔铁塔是什么时候建造的？|埃菲尔铁塔于1887年至1889年建造。它高330米。它位于巴黎。它于1950年完工。" \
      "Der Eiffelturm wurde von 1887 bis 1889 gebaut. Er ist 330 Meter hoch.|Wann wurde der Eiffelturm gebaut?|Der Eiffelturm wurde von 1887 bis 1889 gebaut. Er ist 330 Meter hoch. Er wurde 1950 fertiggestellt. Der Architekt war Gustave Eiffel." \
      "The Eiffel Tower was built from 1887 to 1889. It is 330 metres tall.|When was the Eiffel Tower built?|The Eiffel Tower was built from 1887 to 1889. It is 330 metres tall. It was completed in 1950."
    do
      IFS='|' read -r ctx q a <<< "$args"
      PYTHONPATH=$PYPATH $PY -m guardrail.cli check --context "$ctx" -q "$q" -a "$a" --json \
        | $PY -c 'import json, sys
d = json.load(sys.stdin)
for s in d["sentences"]:
    print(repr(s["original"]), s["action"], s["checked"], s.get("skipped"), s["score"])'
    done > "$OUT/check$SUFFIX.txt" || true ;;
  *) echo "usage: run.sh reads | check [old]" >&2; exit 2 ;;
esac
