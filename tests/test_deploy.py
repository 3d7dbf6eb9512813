"""deploy/ is validated offline: YAML lint, the compose file against the compose
schema, every Kubernetes manifest (the GPU variant merged as kustomize would) against
the Kubernetes 1.30 schemas, both Dockerfiles with hadolint; the image's entrypoint
runs the real proxy and drains it on SIGTERM.  No daemon, cluster or registry exists
here, so images are not built (docs/deploy.md says what was and was not exercised)."""

from __future__ import annotations

import copy
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import free_port
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return str(path)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_yaml_is_clean():
    out = run(tool("yamllint"), "-c", str(DEPLOY / ".yamllint"), "--strict", str(DEPLOY))
    assert out.returncode == 0, out.stdout + out.stderr


def test_compose_file_follows_the_compose_schema():
    out = run(tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec",
              str(DEPLOY / "compose.yaml"))
    assert out.returncode == 0, out.stdout + out.stderr


def test_dockerfiles_pass_hadolint():
    for name in ("Dockerfile", "Dockerfile.cuda"):
        out = run(tool("hadolint"), str(DEPLOY / "docker" / name))
        assert out.returncode == 0, f"{name}: {out.stdout}{out.stderr}"


def _kustomization(path: Path) -> dict:
    return yaml.safe_load((path / "kustomization.yaml").read_text())


def test_base_manifests_validate_against_kubernetes_1_30():
    base = DEPLOY / "k8s" / "base"
    files = [str(base / f) for f in _kustomization(base)["resources"]]
    assert len(files) >= 7 and all(Path(f).exists() for f in files)
    out = run(tool("kubernetes-validate"), "--strict", "-k", "1.30.0", *files)
    assert out.returncode == 0, out.stdout + out.stderr
    kinds = {d["kind"] for f in files for d in yaml.safe_load_all(Path(f).read_text())}
    assert {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
            "ConfigMap", "Secret"} <= kinds


def _merge(base, patch):
    """A strategic merge as kustomize applies it here: maps merge, lists of named
    items (containers) merge by name."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = _merge(base[k], v) if k in base else v
        return out
    if isinstance(base, list) and isinstance(patch, list) and \
            all(isinstance(x, dict) and "name" in x for x in base + patch):
        by_name = {x["name"]: x for x in base}
        merged = [_merge(by_name[x["name"]], x) if x["name"] in by_name else x for x in patch]
        return merged + [x for x in base if x["name"] not in {p["name"] for p in patch}]
    return patch


def test_the_gpu_variant_validates_once_merged(tmp_path):
    gpu = DEPLOY / "k8s" / "gpu"
    kust = _kustomization(gpu)
    assert kust["resources"] == ["../base"]
    deployment = yaml.safe_load((DEPLOY / "k8s" / "base" / "deployment.yaml").read_text())
    merged = copy.deepcopy(deployment)
    for p in kust["patches"]:
        merged = _merge(merged, yaml.safe_load((gpu / p["path"]).read_text()))
    container = merged["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert {"name": "GUARDRAIL_DETECTOR__DEVICE", "value": "cuda"} in container["env"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"  # kept from base
    (tmp_path / "gpu.yaml").write_text(yaml.safe_dump(merged))
    out = run(tool("kubernetes-validate"), "--strict", "-k", "1.30.0",
              str(tmp_path / "gpu.yaml"))
    assert out.returncode == 0, out.stdout + out.stderr


def test_probes_and_drain_agree_with_the_proxy():
    d = yaml.safe_load((DEPLOY / "k8s" / "base" / "deployment.yaml").read_text())
    pod = d["spec"]["template"]["spec"]
    config = yaml.safe_load(yaml.safe_load(
        (DEPLOY / "k8s" / "base" / "configmap.yaml").read_text())["data"]["guardrail.yaml"])
    from guardrail.config import GuardrailConfig

    GuardrailConfig.model_validate(config)  # the shipped config is valid
    grace = config["server"]["drain_grace_s"]
    pre_stop = pod["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert pod["terminationGracePeriodSeconds"] > grace + pre_stop


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
@pytest.mark.parametrize("config, env, host", [
    (None, {}, "0.0.0.0"),                                  # a container listens outside
    ({"server": {"port": 9090}}, {}, "0.0.0.0"),
    ({"server": {"host": "10.1.2.3"}}, {}, None),          # the file says where: its own
    (None, {"GUARDRAIL_SERVER__HOST": "::"}, "::"),        # the environment says where
])
def test_the_entrypoints_default_host_is_below_the_file_and_the_environment(
        config, env, host, tmp_path):
    """The images set no GUARDRAIL_* variable (it would beat the mounted file); the
    entrypoint gives 0.0.0.0 only where neither the file nor the environment says."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "guardrail").write_text('#!/bin/sh\necho "host=${GUARDRAIL_SERVER__HOST:-unset}"'
                                    ' "args=$*"\n')
    (fake / "guardrail").chmod(0o755)
    run_env = {"PATH": f"{fake}{os.pathsep}{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               **env}
    if config is not None:
        (tmp_path / "g.yaml").write_text(yaml.safe_dump(config))
        run_env["GUARDRAIL_CONFIG"] = str(tmp_path / "g.yaml")
    out = subprocess.run([str(DEPLOY / "docker" / "entrypoint.sh")], env=run_env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    said = out.stdout.strip()
    assert said.startswith(f"host={host or 'unset'} args=serve"), said
    assert ("--config" in said) is (config is not None)
    for name in ("Dockerfile", "Dockerfile.cuda"):
        assert "GUARDRAIL_" not in (DEPLOY / "docker" / name).read_text().replace(
            "GUARDRAIL_CONFIG", "")


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_the_entrypoint_serves_and_drains(fake_upstream, tmp_path):
    port = free_port()
    conf = tmp_path / "guardrail.yaml"
    conf.write_text(yaml.safe_dump({"server": {"port": port, "drain_grace_s": 1},
                                    "upstream": {"base_url": fake_upstream.url + "/v1"}}))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "GUARDRAIL_CONFIG": str(conf), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([str(DEPLOY / "docker" / "entrypoint.sh")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stdout.read().decode()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the entrypoint's proxy did not come up"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    assert proc.returncode in (0, -signal.SIGTERM)
