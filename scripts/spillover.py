"""Measure spill-over: how an unsupported sentence on the left changes the score of the
supported sentence after it (docs/model-card.md, docs/proxy.md).

    .venv/bin/python scripts/spillover.py [--model DIR]

Prints, at every exit, the score of "It is 330 metres tall." (verbatim in the context)
checked after each left context, as the proxy's in-flight check would see it.
"""

from __future__ import annotations

import argparse

from guardrail.model import DetectInput, Detector

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. "
           "It was built from 1887 to 1889 by the company of Gustave Eiffel as the entrance "
           "to the 1889 World's Fair. It is 330 metres tall.")
QUESTION = "When was the Eiffel Tower built?"
FIRST = "The Eiffel Tower is a wrought-iron lattice tower in Paris. "
LEFTS = {
    "nothing": "",
    "the supported first sentence": FIRST,
    "+ the 1950 sentence": FIRST + "It was completed in 1950 by a team of Italian architects. ",
    "+ its verified rewrite": FIRST + "It was built from 1887 to 1889 by the company of "
                              "Gustave Eiffel. ",
}
TARGET = "It is 330 metres tall."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="Detector path (default: shipped).")
    args = parser.parse_args()
    det = Detector.from_pretrained(args.model)
    layers = [*det.model.exit_layers, det.n_layers]
    print(f"{'left context':<32}" + "".join(f"{'exit ' + str(l):>10}" for l in layers))
    for name, left in LEFTS.items():
        response = left + TARGET
        scores = [det.detect_batch([DetectInput(CONTEXT, QUESTION, response)], exit_layer=l)[0]
                  .score_in(len(left), len(response)) for l in layers]
        print(f"{name:<32}" + "".join(f"{s:>10.2f}" for s in scores))
    print(f"{'threshold':<32}" + "".join(f"{det.threshold_for(l):>10.2f}" for l in layers))


if __name__ == "__main__":
    main()
