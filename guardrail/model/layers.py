"""The encoder's forward as a plain loop, one small class per model family.

A ``LayerLoop`` splits a token classifier's forward into the three parts the serving
code needs to own: ``embed`` (embeddings plus what every layer reads: attention
masks, rotary tables), ``layer(i, h, state)`` (one encoder layer) and ``head(h)``
(final norm and classifier).  ``EarlyExitModel`` runs ``embed``, then as many layers
as the exit needs, then the exit's adapter or the head.  Nothing raises to stop a
forward and no module is mutated, so forwards from several threads run at once and
the loop compiles; the engine can extend ``state`` with cached keys and values.

Each family reproduces its Hugging Face forward exactly (the same modules, masks and
positions, in the same order; tests compare them bit for bit):

* ``BertLoop``: BERT, RoBERTa, XLM-R, ELECTRA, CamemBERT (``embeddings`` +
  ``encoder.layer``); it also takes ``position_ids`` and a ready 4-D boolean mask
  ``[batch, 1, query, key]`` (True = may attend), which is how Parallel Context
  Windows are trained (``guardrail.model.pcw``);
* ``ModernBertLoop``: ModernBERT (global and sliding-window layers, RoPE per type);
* ``HiddenStatesLoop``: any other family, through the model's own forward with
  ``output_hidden_states`` (exact, but an exit runs every layer).
"""

from __future__ import annotations

from typing import Any, Optional, Protocol

import torch
from torch import nn

from guardrail.model.attention import bert_layer
from guardrail.model.top_mask import WindowRead

BERT_FAMILY = ("bert", "roberta", "xlm-roberta", "electra", "camembert")


class LayerLoop(Protocol):
    layers: nn.ModuleList

    def embed(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, Any]:
        """Embeddings of the batch, and the per-forward state every layer reads."""
        ...

    def layer(self, i: int, hidden: torch.Tensor, state: Any) -> torch.Tensor:
        """Hidden states after layer ``i`` (0-based) given those before it."""
        ...

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        """Token logits from the last layer's hidden states."""
        ...


def _module_at(model: nn.Module, path: str) -> Optional[nn.Module]:
    mod: Optional[nn.Module] = model
    for part in path.split("."):
        mod = getattr(mod, part, None)
        if mod is None:
            return None
    return mod


def encoder_layers(model: nn.Module) -> nn.ModuleList:
    """The backbone's list of encoder layers, whatever the family calls it."""
    n = model.config.num_hidden_layers
    for path in ("bert.encoder.layer", "roberta.encoder.layer", "deberta.encoder.layer",
                 "electra.encoder.layer", "model.layers", "encoder.layer", "layers"):
        mod = _module_at(model, path)
        if isinstance(mod, nn.ModuleList) and len(mod) == n:
            return mod
    for mod in model.modules():  # unknown family: the first ModuleList of the right length
        if isinstance(mod, nn.ModuleList) and len(mod) == n:
            return mod
    raise ValueError(f"cannot find the {n} encoder layers of {type(model).__name__}")


class BertLoop:
    """``BertForTokenClassification`` and its relatives: embeddings, a bidirectional
    mask, ``encoder.layer``, then dropout and the classifier."""

    def __init__(self, model: nn.Module):
        from transformers.masking_utils import create_bidirectional_mask

        self.model = model
        self.base = getattr(model, model.base_model_prefix)
        self.layers = self.base.encoder.layer
        self._mask = create_bidirectional_mask

    def embed(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, Any]:
        hidden = self.base.embeddings(input_ids=inputs["input_ids"],
                                      token_type_ids=inputs.get("token_type_ids"),
                                      position_ids=inputs.get("position_ids"))
        mask = inputs.get("attention_mask")
        if mask is None or mask.dim() != 4:  # a 4-D boolean mask (PCW) is used as given
            mask = self._mask(config=self.base.config, inputs_embeds=hidden,
                              attention_mask=mask)
        elif inputs.get("top_windows"):
            return hidden, WindowRead(mask, inputs["window_segments"], int(inputs["top_windows"]))
        return hidden, mask

    def layer(self, i: int, hidden: torch.Tensor, state: Any) -> torch.Tensor:
        if isinstance(state, WindowRead):
            return bert_layer(self.layers[i], hidden, read=state)[0]
        return self.layers[i](hidden, state)

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.model.classifier(self.model.dropout(hidden))


class ModernBertLoop:
    """``ModernBertForTokenClassification``: embeddings, a global and a sliding-window
    mask, rotary tables per layer type; final norm, prediction head, classifier."""

    def __init__(self, model: nn.Module):
        from transformers.masking_utils import (create_bidirectional_mask,
                                                create_bidirectional_sliding_window_mask)

        self.model = model
        self.base = model.model
        self.layers = self.base.layers
        self._masks = {"full_attention": create_bidirectional_mask,
                       "sliding_attention": create_bidirectional_sliding_window_mask}
        self._types = sorted(set(self.base.config.layer_types))

    def embed(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, Any]:
        ids = inputs["input_ids"]
        hidden = self.base.embeddings(input_ids=ids)
        positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        masks = {kind: make(config=self.base.config, inputs_embeds=hidden,
                            attention_mask=inputs.get("attention_mask"))
                 for kind, make in self._masks.items()}
        rotary = {kind: self.base.rotary_emb(hidden, positions, kind) for kind in self._types}
        return hidden, (masks, rotary)

    def layer(self, i: int, hidden: torch.Tensor, state: Any) -> torch.Tensor:
        masks, rotary = state
        layer = self.layers[i]
        return layer(hidden, attention_mask=masks[layer.attention_type],
                     position_embeddings=rotary[layer.attention_type])

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        m = self.model
        return m.classifier(m.drop(m.head(self.base.final_norm(hidden))))


class HiddenStatesLoop:
    """Any other family: one call of the model's own forward, read back layer by layer.
    Exact, with no hook, but an exit does not save the layers above it."""

    def __init__(self, model: nn.Module):
        self.model = model
        self.layers = encoder_layers(model)

    def embed(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, Any]:
        out = self.model(**inputs, output_hidden_states=True)
        return out.hidden_states[0], out

    def layer(self, i: int, hidden: torch.Tensor, state: Any) -> torch.Tensor:
        return state.hidden_states[i + 1]

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError  # EarlyExitModel reads the logits the forward returned


def layer_loop(model: nn.Module) -> LayerLoop:
    """The explicit loop of ``model``'s family (``HiddenStatesLoop`` for unknown ones)."""
    kind = getattr(model.config, "model_type", "")
    if kind in BERT_FAMILY and _module_at(model, f"{model.base_model_prefix}.encoder.layer") \
            is not None and hasattr(model, "classifier"):
        return BertLoop(model)
    if kind == "modernbert" and hasattr(model, "model") and hasattr(model, "head"):
        return ModernBertLoop(model)
    return HiddenStatesLoop(model)
