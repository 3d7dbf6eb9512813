"""The package's shape is checked, not hoped for: the import-linter contracts in
.importlinter (layers, no cycles) hold, break on an upward import or a cycle, and no
module grows past 400 lines."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")
MAX_LINES = 400

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed "
                                "(pip install -e '.[dev]')")


def lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--no-cache", "--config", str(root / ".importlinter")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)


def copy_of_package(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "guardrail", tmp_path / "guardrail",
                    ignore=shutil.ignore_patterns("__pycache__", "models", "*.txt"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def add_import(path: Path, line: str) -> None:
    text = path.read_text()
    marker = "from __future__ import annotations\n"
    assert marker in text, path
    path.write_text(text.replace(marker, marker + line + "\n", 1))


def test_the_contracts_are_kept():
    out = lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 kept, 0 broken" in out.stdout


def test_an_upward_import_breaks_the_layers(tmp_path):
    root = copy_of_package(tmp_path)
    add_import(root / "guardrail" / "model" / "spans.py", "import guardrail.stream.policy")
    out = lint(root)
    assert out.returncode != 0
    assert "guardrail.model.spans -> guardrail.stream.policy" in out.stdout


def test_a_cycle_breaks_the_acyclic_contract(tmp_path):
    root = copy_of_package(tmp_path)
    add_import(root / "guardrail" / "stream" / "sse.py", "import guardrail.stream.pipeline")
    out = lint(root)
    assert out.returncode != 0
    assert "No cycles are allowed in guardrail.stream" in out.stdout


def test_no_module_is_over_400_lines():
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines())
             for p in (ROOT / "guardrail").rglob("*.py")}
    assert {p: n for p, n in sizes.items() if n > MAX_LINES} == {}
