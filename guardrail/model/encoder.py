"""A token classifier with early-exit adapters.

The backbone is any Hugging Face ``AutoModelForTokenClassification`` (BERT-family,
ModernBERT, LettuceDetect's checkpoints).  Each exit is a small adapter reading the
hidden states after one encoder layer:

    logits_k = Linear(GELU(Linear(LayerNorm(h_k))))      (bottleneck 256)

The forward is our own loop (``guardrail.model.layers``): embeddings, layers 1..k,
then exit k's adapter, or every layer and the model's head at full depth.  The
layers above an exit never run; nothing is hooked or locked, so forwards from
several threads run at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import torch
from torch import nn

from guardrail.model.layers import HiddenStatesLoop, layer_loop

EXITS_FILE = "exits.safetensors"
EXITS_CONFIG = "exits.json"


class ExitAdapter(nn.Module):
    """``Linear(GELU(Linear(LayerNorm(h))))`` with a bottleneck."""

    def __init__(self, hidden_size: int, num_labels: int = 2, bottleneck: int = 256,
                 eps: float = 1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_size, eps=eps)
        self.down = nn.Linear(hidden_size, bottleneck)
        self.act = nn.GELU()
        self.up = nn.Linear(bottleneck, num_labels)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.up(self.act(self.down(self.norm(hidden))))


@dataclass
class EncoderPass:
    """What one run of the loop produced."""

    hidden: dict[int, torch.Tensor]   # hidden states after each kept layer (1-based)
    logits: Optional[torch.Tensor]    # the full-depth head's, when every layer ran


class EarlyExitModel(nn.Module):
    """A frozen-or-not token classifier plus exit adapters keyed by layer (1-based)."""

    def __init__(self, backbone: nn.Module, exit_layers: tuple[int, ...] = (),
                 bottleneck: int = 256):
        super().__init__()
        self.backbone = backbone
        self.n_layers = backbone.config.num_hidden_layers
        self.num_labels = backbone.config.num_labels
        self.bottleneck = bottleneck
        self.exits = nn.ModuleDict()
        self.loop = layer_loop(backbone)
        for layer in exit_layers:
            self.add_exit(layer)

    # -- exits -------------------------------------------------------------------
    @property
    def exit_layers(self) -> tuple[int, ...]:
        return tuple(sorted(int(k) for k in self.exits))

    def add_exit(self, layer: int) -> ExitAdapter:
        if not 1 <= layer < self.n_layers:
            raise ValueError(f"exit layer must be in 1..{self.n_layers - 1}, got {layer}")
        eps = getattr(self.backbone.config, "layer_norm_eps", None) or \
            getattr(self.backbone.config, "norm_eps", 1e-5)
        p = next(self.backbone.parameters())
        adapter = ExitAdapter(self.backbone.config.hidden_size, self.num_labels,
                              self.bottleneck, eps).to(device=p.device, dtype=p.dtype)
        self.exits[str(layer)] = adapter
        return adapter

    def resolve(self, exit_layer: Optional[int]) -> int:
        """Map a requested exit to the layer that will actually run."""
        if exit_layer is None or exit_layer >= self.n_layers:
            return self.n_layers
        if str(exit_layer) not in self.exits:
            raise ValueError(f"no exit adapter at layer {exit_layer}; "
                             f"available: {self.exit_layers} and {self.n_layers} (full depth)")
        return exit_layer

    # -- forward -----------------------------------------------------------------
    def run(self, depth: Optional[int] = None, keep: Iterable[int] = (),
            **inputs: torch.Tensor) -> EncoderPass:
        """Embeddings and layers ``1..depth`` (default: all, then the head); the hidden
        states after each layer in ``keep`` are returned too."""
        depth = self.n_layers if depth is None else depth
        keep = set(keep)
        hidden, state = self.loop.embed(inputs)
        kept: dict[int, torch.Tensor] = {}
        for i in range(depth):
            hidden = self.loop.layer(i, hidden, state)
            if i + 1 in keep:
                kept[i + 1] = hidden
        logits = None
        if depth == self.n_layers:
            logits = state.logits if isinstance(self.loop, HiddenStatesLoop) \
                else self.loop.head(hidden)
        return EncoderPass(kept, logits)

    def hidden_at(self, layer: int, **inputs: torch.Tensor) -> torch.Tensor:
        """Hidden states after ``layer`` (1-based) without running the layers above."""
        return self.run(layer, keep=(layer,), **inputs).hidden[layer]

    def forward(self, exit_layer: Optional[int] = None, **inputs: torch.Tensor) -> torch.Tensor:
        """Token logits ``[batch, seq, num_labels]`` from ``exit_layer`` (None = full depth)."""
        layer = self.resolve(exit_layer)
        if layer == self.n_layers:
            return self.run(**inputs).logits
        return self.exits[str(layer)](self.hidden_at(layer, **inputs))

    # -- persistence ---------------------------------------------------------------
    def save_exits(self, directory: str | Path, dtype: Optional[torch.dtype] = None) -> None:
        from safetensors.torch import save_file

        directory = Path(directory)
        state = {k: (v.to(dtype) if dtype is not None else v).contiguous().cpu()
                 for k, v in self.exits.state_dict().items()}
        if state:
            save_file(state, str(directory / EXITS_FILE))
        (directory / EXITS_CONFIG).write_text(json.dumps(
            {"exit_layers": list(self.exit_layers), "bottleneck": self.bottleneck,
             "architecture": "Linear(GELU(Linear(LayerNorm(h))))"}, indent=2) + "\n")

    def load_exits(self, directory: str | Path) -> bool:
        """Load adapters saved by :meth:`save_exits`; False when there are none."""
        from safetensors.torch import load_file

        directory = Path(directory)
        cfg_path = directory / EXITS_CONFIG
        if not cfg_path.exists():
            return False
        cfg = json.loads(cfg_path.read_text())
        self.bottleneck = int(cfg.get("bottleneck", self.bottleneck))
        for layer in cfg["exit_layers"]:
            self.add_exit(int(layer))
        if (directory / EXITS_FILE).exists():
            p = next(self.backbone.parameters())
            state = {k: v.to(device=p.device, dtype=p.dtype)
                     for k, v in load_file(str(directory / EXITS_FILE)).items()}
            self.exits.load_state_dict(state)
        return True
