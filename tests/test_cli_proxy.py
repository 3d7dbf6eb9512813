"""`guardrail serve | check | demo` (guardrail/commands/proxy.py), with the real detector."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml
from conftest import EIFFEL_ANSWER, EIFFEL_TOOL, free_port
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.testing.fake_upstream import DEMO, ServerThread, demo_upstream

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def test_examples_demo_yaml_is_the_builtin_demo():
    assert yaml.safe_load((ROOT / "examples" / "demo.yaml").read_text()) == DEMO


def test_the_demo_upstream_that_compose_runs_plays_the_demo():
    with ServerThread(demo_upstream()) as up:
        r = httpx.post(up.url + "/v1/chat/completions", timeout=30, json={
            "model": "fake-llm", "messages": DEMO["conversation"]})
    assert "completed in 1950" in r.json()["choices"][0]["message"]["content"]


def test_a_demo_script_or_model_that_is_not_one_is_a_one_line_error(tmp_path):
    bad = tmp_path / "demo.yaml"
    for text, says in (("{}", "no 'conversation'"), ("a: [", "expected"),
                       ("conversation: [1]", "a list of messages"),
                       ("conversation: [{role: user, content: hi}]\nupstream: {token_delay_s: x}",
                        "could not convert")):
        bad.write_text(text)
        r = runner.invoke(app, ["demo", "--script", str(bad)])
        said = " ".join(r.output.replace("│", " ").split())
        assert r.exit_code == 2 and says in said and "examples/demo.yaml" in said, text
    r = runner.invoke(app, ["demo", "--script", str(tmp_path / "none.yaml")])
    assert r.exit_code == 2 and "No such file" in r.output
    r = runner.invoke(app, ["demo", "--model", str(tmp_path / "none")])
    assert r.exit_code == 2 and "no such directory" in r.output


def test_check_prints_the_guardrail_object():
    r = runner.invoke(app, ["check", "--context", EIFFEL_TOOL, "-q", "When was it built?",
                            "-a", EIFFEL_ANSWER, "--json"])
    assert r.exit_code in (0, 1), r.output
    g = json.loads(r.stdout)
    assert "".join(s["original"] for s in g["sentences"]) == EIFFEL_ANSWER
    assert r.exit_code == (1 if g["hallucination_detected"] else 0)


def test_check_reads_a_context_from_the_file_it_names(tmp_path):
    """``--context FILE_OR_TEXT`` (README): a path of a file is its text, not a document
    saying the path (which flagged the right answer)."""
    doc = tmp_path / "eiffel.json"
    doc.write_text('{"name": "Eiffel Tower", "height_m": 330}', encoding="utf-8")
    answer = "The Eiffel Tower is 330 metres tall."
    for args in (["--context", str(doc)], ["--context-file", str(doc)]):
        r = runner.invoke(app, ["check", *args, "-a", answer, "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["sentences"][0]["released"] == answer


def test_check_prints_the_released_text_with_its_redaction_marker():
    # a unit changed ("feet" for metres) is stopped; the marker is text, not rich markup
    r = runner.invoke(app, ["check", "--context", '{"name": "Eiffel Tower", "height_m": 330}',
                            "-a", "The Eiffel Tower is 330 feet tall."])
    assert r.exit_code == 1, r.output
    assert "released: The Eiffel Tower is [unsupported] feet tall." in r.output


def test_check_and_serve_reject_bad_input(tmp_path):
    r = runner.invoke(app, ["check", "-a", "x"])
    assert r.exit_code == 2 and "--context" in r.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("policy:\n  hold: false\n")
    r = runner.invoke(app, ["serve", "--config", str(bad)])
    assert r.exit_code == 2 and "hold=false cannot be combined" in r.output
    r = runner.invoke(app, ["serve", "--action", "explode"])
    assert r.exit_code == 2
    # a model or device that is not there: one line before the server starts
    for args, says in ((["--model", str(tmp_path / "none")], "no such directory"),
                       (["--device", "cuda:99"], "CUDA devices"),
                       (["--device", "gpu"], "detector.device")):
        r = runner.invoke(app, ["serve", "--port", "1", *args])
        assert r.exit_code == 2 and says in r.output and "Traceback" not in r.output, args
    with socket.socket() as taken:  # a port in use: said before the detector loads
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = runner.invoke(app, ["serve", "--port", str(port), "--upstream", "http://x/v1"])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in r.output
    assert "loading the detector" not in r.output


def test_demo_runs_end_to_end():
    r = runner.invoke(app, ["demo", "--delay", "0"])
    assert r.exit_code == 0, r.output
    out = r.output
    assert "the LLM, direct (unchecked)" in out and "completed in 1950" in out
    assert "guardrail verdicts" in out and "stream stopped" not in out
    # the shipped model stops the 1950 sentence and says why (the demo's whole point)
    assert "hallucination detected: True" in out and "contradicted" in out
    assert "missing)" in out  # what the flag rests on: "(high, value missing)", no 1950


def test_serve_runs_the_proxy(fake_upstream):
    port = free_port()
    env = {**os.environ, "GUARDRAIL_UPSTREAM__API_KEY": "sk-from-env"}
    proc = subprocess.Popen([sys.executable, "-m", "guardrail.cli", "serve", "--upstream",
                             fake_upstream.url + "/v1", "--port", str(port),
                             "--log-level", "warning"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stdout.read().decode()
            try:
                if (health := httpx.get(url + "/healthz")).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "guardrail serve did not come up"
            time.sleep(0.2)
        from guardrail.engine.build import model_dtype  # detector.dtype: auto

        want = str(model_dtype("auto", None)).removeprefix("torch.")
        assert health.json()["verifier"]["dtype"] == want
        r = httpx.post(url + "/v1/chat/completions", timeout=120, json={
            "model": "fake-llm", "messages": [{"role": "user", "content": "Eiffel?"}],
            "guardrail": {"context": [EIFFEL_TOOL]}})
        assert r.status_code == 200 and "guardrail" in r.json()
        assert fake_upstream.app.state.log[-1].headers["authorization"] == "Bearer sk-from-env"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
        proc.stdout.close()


def test_check_releases_a_sentence_that_says_a_line_of_the_grounding_again():
    context = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in "
               "Paris, France. It was completed in 1889 and is 330 metres tall.")
    r = runner.invoke(app, ["check", "--context", context, "-q", "Where is the Eiffel Tower?",
                            "-a", "The Eiffel Tower is in Paris. The Eiffel Tower is in Rome.",
                            "--json"])
    g = json.loads(r.stdout)
    said, wrong = g["sentences"]
    assert said["action"] == "release" and said["released"] == said["original"], said
    assert not said["final"]["hallucinated"]
    assert wrong["action"] != "release" and wrong["explanation"], wrong


def test_the_verdict_table_names_a_sentence_the_grounding_settled():
    """A sentence released without a model call (checked, no exit layer) reads as said
    by the grounding, not as layer "None"."""
    from rich.console import Console

    from guardrail.commands.proxy import verdict_table

    row = {"index": 0, "original": "It is 330 metres tall.", "released": "It is 330 metres tall.",
           "action": "release", "checked": True, "claim": True, "score": 0.0, "exit_layer": None,
           "attempts": 0, "spans": [], "explanation": None,
           "final": {"score": 0.1, "hallucinated": False}}
    console = Console(record=True, width=160)
    console.print(verdict_table({"sentences": [row]}))
    out = console.export_text()
    assert "said by the grounding" in out and "None" not in out
