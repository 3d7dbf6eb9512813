"""Evidence for a sentence from its grounding, in plain Python (no torch): structured
contexts rendered as lines (render.py), what a sentence claims and whether the context
holds it (features.py), and the sentence-level decision with its explanation (judge.py).

The proxy uses it to decide on sentences; training and evaluation use it to fit and
measure that decision.
"""
