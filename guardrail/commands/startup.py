"""What ``serve`` and the other commands check before they start: the config, the
model and the device, the address: each, when wrong, one line and exit status 2 (never
a traceback from deep inside, after seconds of loading)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

__all__ = ["config_or_exit", "model_or_exit", "port_or_exit"]


def config_or_exit(path: Optional[Path], overrides: dict[str, Any],
                   env: Optional[dict[str, str]] = None):
    """``load_config``, or exit 2 with the reason (``env``: None reads GUARDRAIL_*)."""
    from guardrail.config import load_config

    try:
        return load_config(path, env=env, overrides=overrides)
    except ValueError as e:
        typer.echo(f"error: invalid configuration: {e}", err=True)
        raise typer.Exit(2) from None


def model_or_exit(cfg) -> None:
    """Before the server starts: the detector's model and device named in ``cfg`` exist,
    or one line says which does not (not a traceback from the app's start-up)."""
    from guardrail.errors import ModelLoadError
    from guardrail.model.sources import model_path, pick_device

    try:
        model_path(cfg.detector.model)
        pick_device(cfg.detector.device)
    except ModelLoadError as exc:
        typer.echo(f"guardrail: {exc}", err=True)
        raise typer.Exit(2) from None


def port_or_exit(host: str, port: int) -> None:
    """Before the detector loads (seconds): the address is free, or one line says why
    not (port 0 picks a free one)."""
    import socket

    if not port:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(address)
    except OSError as exc:
        typer.echo(f"guardrail: cannot listen on {host}:{port}: {exc.strerror or exc}",
                   err=True)
        raise typer.Exit(2) from None
