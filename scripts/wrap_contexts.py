"""A copy of a labelled set with each tool result wrapped as some clients send it
(docs/model-card.md, "A tool result in a fenced block or after a label").

    .venv/bin/python scripts/wrap_contexts.py IN.jsonl OUT.jsonl --how fence|label|repr

``fence`` puts each context in a fenced code block (```json when it parses as JSON);
``label`` puts a line "Tool output:" before it; ``repr`` writes a JSON context as Python
prints the value (``str(dict)``, as agent frameworks pass a tool's return value on) and
keeps others as they are.  Documents in a list are wrapped one by one.  Everything else
of each line (question, response, labels) is kept.
"""

import argparse
import json


def wrap(context: str, how: str) -> str:
    if how == "label":
        return f"Tool output:\n{context}"
    try:
        value = json.loads(context)
        is_json = isinstance(value, (dict, list))
    except ValueError:
        is_json = False
    if how == "repr":
        return str(value) if is_json else context
    return f"```{'json' if is_json else ''}\n{context}\n```"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--how", choices=("fence", "label", "repr"), required=True)
    a = ap.parse_args()
    with open(a.src, encoding="utf-8") as f, open(a.out, "w", encoding="utf-8") as out:
        for line in f:
            d = json.loads(line)
            c = d["context"]
            d["context"] = [wrap(x, a.how) for x in c] if isinstance(c, list) else wrap(c, a.how)
            out.write(json.dumps(d, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
