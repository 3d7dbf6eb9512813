"""What the run measured, from the guardrail objects the client received: sentence
outcomes, what became of each guess, latency, and the hook's retrieval."""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Optional, Sequence

from examples.flare.data import Passage, Question
from examples.flare.hook import Retriever, query_for

KINDS = ("repaired", "redacted", "left", "unflagged", "unchecked", "blocked")
GUESS_KINDS = ("repaired_with_fact", "repaired_otherwise", "redacted", "left", "missed",
               "not_found")


def sentence_kind(v: dict) -> str:
    """repaired (rewrite accepted), redacted, blocked, left (flagged, yet released or
    annotated: in flight, or by the end-of-stream pass), unflagged, unchecked."""
    if not v.get("checked", True):
        return "unchecked"
    action = v["action"]
    if action == "regenerate":
        return "repaired"
    if action in ("redact", "block"):
        return {"redact": "redacted", "block": "blocked"}[action]
    if action == "annotate" or (v.get("final") or {}).get("hallucinated"):
        return "left"
    return "unflagged"


def guess_kind(q: Question, report: Optional[dict]) -> str:
    for v in (report or {}).get("sentences", []):
        if v["original"].strip() == q.guess:
            kind = sentence_kind(v)
            if kind == "repaired":
                fact = q.answer.lower() in v["released"].lower()
                return "repaired_with_fact" if fact else "repaired_otherwise"
            return {"unflagged": "missed", "unchecked": "missed"}.get(kind, kind)
    return "not_found"


def percentile(xs: Sequence[float], p: float) -> Optional[float]:
    """Linear-interpolated percentile (numpy's default); None for no data."""
    if not xs:
        return None
    s = sorted(xs)
    at = (len(s) - 1) * p / 100
    lo = int(at)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (at - lo)


def spread(xs: Iterable[Optional[float]]) -> dict:
    vals = [x for x in xs if x is not None]
    return {"n": len(vals), "p50": percentile(vals, 50), "p95": percentile(vals, 95)}


def hooked(report: Optional[dict]) -> bool:
    """A regenerate hook ran for some sentence of this answer."""
    return any(v.get("attempts", 0) > 0 for v in (report or {}).get("sentences", []))


def retrieval(calls: Sequence[dict], questions: Sequence[Question],
              corpus: dict[str, Passage], k: int) -> dict:
    """Gold passage in the hook's top k, per call; and, on each first-attempt call, how
    other queries would have ranked it (the masked query is what FLARE sends)."""
    by_text = {q.question: q for q in questions}
    retriever = Retriever(list(corpus.values()))
    hits = sum(1 for c in calls if c["question"] in by_text
               and by_text[c["question"]].answer_passage in c["retrieved"])
    present = sum(1 for c in calls if c["question"] in by_text
                  and by_text[c["question"]].answer_passage in c.get("in_context", []))
    variants: Counter[str] = Counter()
    firsts = [c for c in calls if c.get("attempt") == 1 and c["question"] in by_text]
    for c in firsts:
        q = by_text[c["question"]]
        exclude = [corpus[i].text for i in q.context]
        queries = {"question + masked sentence (used)": c["query"],
                   "question + whole sentence": query_for(q.question, c["sentence"]),
                   "masked sentence alone": query_for("", c["masked"]),
                   "whole sentence alone": c["sentence"],
                   "question alone": q.question}
        for name, query in queries.items():
            top = [p.id for p in retriever.search(query, k, exclude)]
            variants[name] += q.answer_passage in top
    return {"calls": len(calls), "gold_in_top_k": hits, "gold_already_in_grounding": present,
            "first_attempts": len(firsts),
            "variants_gold_in_top_k": dict(variants)}


def summarize(results: Sequence[dict], questions: Sequence[Question], hook: dict,
              corpus: dict[str, Passage]) -> dict:
    by_id = {q.id: q for q in questions}
    out: dict = {"questions": len(results), "corpus_passages": len(corpus), "k": hook["k"]}
    for run in ("annotate", "regenerate"):
        verdicts = [(v, v["original"].strip() == r["guess"]) for r in results
                    for v in (r["runs"][run]["report"] or {}).get("sentences", [])]
        for name, keep in (("sentences", lambda g: True), ("others", lambda g: not g)):
            kinds = Counter(sentence_kind(v) for v, g in verdicts if keep(g))
            out[f"{name}_{run}"] = {k: kinds.get(k, 0) for k in KINDS}
            out[f"{name}_{run}"]["total"] = sum(kinds.values())
        guesses = Counter(guess_kind(by_id[r["id"]], r["runs"][run]["report"])
                          for r in results)
        out[f"guesses_{run}"] = {k: guesses.get(k, 0) for k in GUESS_KINDS}
    regen = [r["runs"]["regenerate"] for r in results]
    out["answers_with_added_documents"] = sum(
        1 for x in regen if (x["report"] or {}).get("added_documents"))
    out["errors"] = sum(len(r["runs"][run]["errors"]) for r in results for run in r["runs"])
    with_hook = [r for r in results if hooked(r["runs"]["regenerate"]["report"])]
    plain = [r for r in results if not hooked(r["runs"]["regenerate"]["report"])]

    def done(rs: Sequence[dict], run: str) -> dict:
        return spread(r["runs"][run]["done_s"] for r in rs)

    def cost(rs: Sequence[dict]) -> dict:
        return spread(r["runs"]["regenerate"]["done_s"] - r["runs"]["annotate"]["done_s"]
                      for r in rs if r["runs"]["regenerate"]["done_s"] is not None
                      and r["runs"]["annotate"]["done_s"] is not None)

    out["latency_s"] = {
        "done_direct": done(results, "direct"), "done_annotate": done(results, "annotate"),
        "done_regenerate_hooked": done(with_hook, "regenerate"),
        "done_regenerate_other": done(plain, "regenerate"),
        "cost_hooked": cost(with_hook), "cost_other": cost(plain),
        "first_content_direct": spread(r["runs"]["direct"]["first_content_s"] for r in results),
        "first_content_regenerate": spread(r["runs"]["regenerate"]["first_content_s"]
                                           for r in results)}
    calls = hook["calls"]
    out["hook_ms"] = {name: spread(c[name] for c in calls)
                      for name in ("total_ms", "retrieval_ms", "upstream_ms")}
    out["retrieval"] = retrieval(calls, questions, corpus, hook["k"])
    return out


def _f(x: Optional[float], scale: float = 1.0, digits: int = 2) -> str:
    return "-" if x is None else f"{x * scale:.{digits}f}"


def _sp(s: dict, scale: float = 1.0, digits: int = 2) -> str:
    return f"{_f(s['p50'], scale, digits)}/{_f(s['p95'], scale, digits)} (n={s['n']})"


def render(s: dict) -> str:
    """The printed report; tests parse its count lines."""
    lines = [f"FLARE example: {s['questions']} questions, corpus of {s['corpus_passages']} "
             f"passages, top {s['k']} retrieved per hook call", ""]
    for run, what in (("regenerate", "with the hook"), ("annotate", "no hook")):
        for name, label in (("sentences", f"sentences [{run}, {what}]"),
                            ("others", f"  not the guess [{run}]")):
            c = s[f"{name}_{run}"]
            lines.append(f"{label}: total {c['total']} = "
                         + " + ".join(f"{k} {c[k]}" for k in KINDS))
    for run in ("regenerate", "annotate"):
        g = s[f"guesses_{run}"]
        lines.append(f"guesses [{run}]: total {sum(g.values())} = "
                     + " + ".join(f"{k.replace('_', ' ')} {g[k]}" for k in GUESS_KINDS))
    lines.append(f"answers whose report lists added_documents: "
                 f"{s['answers_with_added_documents']}; stream errors: {s['errors']}")
    lat = s["latency_s"]
    lines += ["", "time to [DONE], p50/p95 seconds:",
              f"  upstream direct (no guardrail)       {_sp(lat['done_direct'])}",
              f"  guardrail, annotate (no hook)        {_sp(lat['done_annotate'])}",
              f"  guardrail, regenerate: answers with a hook call "
              f"{_sp(lat['done_regenerate_hooked'])}",
              f"  guardrail, regenerate: other answers  {_sp(lat['done_regenerate_other'])}",
              f"  regenerate - annotate, same question: answers with a hook call "
              f"{_sp(lat['cost_hooked'])}, others {_sp(lat['cost_other'])}",
              f"time to first content, p50/p95 s: direct {_sp(lat['first_content_direct'])}, "
              f"regenerate {_sp(lat['first_content_regenerate'])}"]
    h = s["hook_ms"]
    lines.append(f"hook call, p50/p95 ms: total {_sp(h['total_ms'], digits=1)}, retrieval "
                 f"{_sp(h['retrieval_ms'], digits=1)}, upstream rewrite "
                 f"{_sp(h['upstream_ms'], digits=1)}")
    r = s["retrieval"]
    lines += ["", f"retrieval: gold passage in the top {s['k']} on {r['gold_in_top_k']} of "
                  f"{r['calls']} hook calls (already in the grounding on "
                  f"{r['gold_already_in_grounding']}); on the {r['first_attempts']} first "
                  f"attempts, each query would have found it:"]
    lines += [f"  {name:36s} {n}/{r['first_attempts']}"
              for name, n in r["variants_gold_in_top_k"].items()]
    return "\n".join(lines)
