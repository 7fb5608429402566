"""Exports of trained agents: a safetensors file (the network's weights and a JSON header)
that torch rebuilds into a small masked-logits module, with no pickle, no TorchScript and
no SB3: any trainer (RLlib, Tianshou, TorchRL, plain torch) calls it as an opponent.

    >>> from agents.export import load_export
    >>> policy = load_export("agents/checkpoints/ppo-6p.safetensors")   # torch + safetensors
    >>> logits = policy(obs, mask)          # (B, obs_size) float32, (B, num_actions) 0/1
    >>> action = logits.argmax(-1)          # illegal actions are -inf
    >>> zoo = load_export("agents/checkpoints/zoo-bc.safetensors")
    >>> action = zoo(obs, mask, 2).argmax(-1)   # the distilled zoo: style 2 (shark)

The file (``FORMAT``) holds the tensors ``net.<i>.weight`` / ``net.<i>.bias`` of the
network's ``nn.Linear`` layers and, in the safetensors header's metadata, ``ripmarket``:
a JSON object with ``format``, ``layers`` (the network in order: ``"linear"``, ``"relu"``,
``"tanh"``), ``obs_size``, ``num_actions``, the agent, its game, the distilled zoo's
``styles`` and ``default_style``, and the SHA-256 of the checkpoint it was made from, so a
stale export is detected (``stale_exports``). ``ExportedPolicy`` is the module:
``forward(obs, mask, style=-1)``, the style an index into ``styles`` (-1: the exported
agent's own); ``ExportAgent`` plays one as an agent of the zoo (``agents.resolve``, the
envs' ``opponents=``). Why this format: docs/SCALE_OUT.md.

``export_agent(agent, path)`` writes one for a ``PolicyAgent`` (an SB3 checkpoint: the
actor's network as dense torch layers; the sparse first layer is the same ``nn.Linear``
applied densely, so the logits are the agent's up to float rounding) or a
``DistilledAgent`` (the whole distilled zoo). The shipped exports (``SHIPPED``) sit beside
their checkpoints (``<stem>.safetensors``); ``ripmarket export --shipped`` writes them again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

from agents.base import DEFAULT_GAME
from agents.sparse import flat_layers
from ripmarket_env.core.jsonfile import short

FORMAT = "ripmarket-policy/2"
SUFFIX = ".safetensors"
#: the largest export read (checked before reading)
MAX_BYTES = 256 << 20
_HERE = Path(__file__).resolve().parent
_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}


class ExportError(ValueError):
    """An export file that cannot be read: one line naming the file and what is wrong."""


class ExportedPolicy(nn.Module):
    """An exported network: ``layers`` (``"linear"``, ``"relu"``, ``"tanh"``) in order as
    ``self.net``; ``forward(obs, mask, style=-1)`` gives its logits with the illegal actions
    (``mask == 0``) at -inf. With ``n_styles`` (the distilled zoo) the input is
    ``[obs, one-hot style]``, style -1 being ``default_style``."""

    def __init__(self, linear_shapes: list[tuple[int, int]], layers: list[str], n_styles: int = 0,
                 default_style: int = -1):
        super().__init__()
        shapes = iter(linear_shapes)
        mods = []
        for kind in layers:
            if kind == "linear":
                out_f, in_f = next(shapes)
                mods.append(nn.Linear(in_f, out_f))
            else:
                mods.append(_ACTIVATIONS[kind]())
        self.net = nn.Sequential(*mods)
        self.n_styles = int(n_styles)
        self.default_style = int(default_style)
        self.meta: dict = {}

    def forward(self, obs: torch.Tensor, mask: torch.Tensor, style: int = -1) -> torch.Tensor:
        x = torch.as_tensor(obs, dtype=torch.float32)
        if self.n_styles:
            s = self.default_style if style < 0 else int(style)
            if s >= self.n_styles:
                raise ValueError(f"style must be -1 or an index into the export's styles (0..{self.n_styles - 1}), got {style}")
            oh = torch.zeros(x.shape[0], self.n_styles, dtype=x.dtype)
            oh[:, s] = 1.0
            x = torch.cat([x, oh], 1)
        z = self.net(x)
        return z.masked_fill(torch.as_tensor(mask) == 0, float("-inf"))


def _is_distilled(agent) -> bool:
    return hasattr(agent, "net") and hasattr(agent, "style_index") and hasattr(agent, "n_styles")


def actor_network(agent) -> nn.Sequential:
    """The agent's actor (logits before masking) as plain torch layers."""
    if _is_distilled(agent):
        return agent.net
    parts = agent.sparse_parts()
    if parts:
        first, rest, _ = parts
        return nn.Sequential(first, rest)
    pol = agent.policy
    return nn.Sequential(pol.pi_features_extractor, pol.mlp_extractor.policy_net, pol.action_net)


def agent_sizes(agent) -> tuple[int, int]:
    """``(obs_size, num_actions)`` of a policy or distilled agent's network."""
    if _is_distilled(agent):
        return agent.net[0].in_features - agent.n_styles, agent.net[-1].out_features
    return int(agent.policy.observation_space.shape[0]), int(agent.policy.action_space.n)


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def export_policy(agent, path: str | Path, obs_size: int | None = None, num_actions: int | None = None,
                  meta: dict | None = None) -> Path:
    """Write ``agent``'s actor to ``path`` as an export (safetensors), with ``meta`` (plus
    the format, layers and sizes) in its header; written to a temporary file and renamed."""
    from safetensors.torch import save_file

    path = Path(path)
    sizes = agent_sizes(agent)
    obs_size, num_actions = obs_size or sizes[0], num_actions or sizes[1]
    if (obs_size, num_actions) != sizes:
        raise ValueError(f"{getattr(agent, 'name', agent)} takes {sizes[0]} observation entries and "
                         f"{sizes[1]} actions, not {obs_size} and {num_actions}")
    layers = flat_layers(actor_network(agent))
    info = {"format": FORMAT, "obs_size": obs_size, "num_actions": num_actions, **(meta or {}),
            "layers": [type(m).__name__.lower() for m in layers]}
    if _is_distilled(agent):
        info["styles"] = list(getattr(agent, "styles", ()))
        info["default_style"] = int(agent.style_index)
    tensors = {}
    for i, m in enumerate(layers):
        if isinstance(m, nn.Linear):
            tensors[f"net.{i}.weight"] = m.weight.detach().to(torch.float32).contiguous().clone()
            tensors[f"net.{i}.bias"] = m.bias.detach().to(torch.float32).contiguous().clone()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    save_file(tensors, str(tmp), metadata={"ripmarket": json.dumps(info, sort_keys=True)})
    os.replace(tmp, path)
    return path


def _header(path: Path) -> dict:
    """The ``ripmarket`` JSON of an export's header, checked for size and shape."""
    from safetensors import safe_open

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ExportError(f"{path}: cannot read the export ({exc.strerror or exc})") from None
    if size > MAX_BYTES:
        raise ExportError(f"{path}: {size} bytes, more than an export may hold ({MAX_BYTES})")
    try:
        with safe_open(str(path), framework="numpy") as fh:
            raw = (fh.metadata() or {}).get("ripmarket")
    except Exception as exc:  # noqa: BLE001  (safetensors' own errors: not a safetensors file)
        raise ExportError(f"{path}: not a safetensors export ({str(exc).splitlines()[0][:120]})") from None
    if raw is None:
        raise ExportError(f"{path}: no 'ripmarket' entry in the header metadata: not an export of ripmarket")
    try:
        meta = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ExportError(f"{path}: the 'ripmarket' header entry is not JSON ({str(exc)[:80]})") from None
    if not isinstance(meta, dict):
        raise ExportError(f"{path}: the 'ripmarket' header entry must be a JSON object")
    return meta


def read_meta(path: str | Path) -> dict:
    """The metadata an export carries (``ExportError`` if the file is no export)."""
    return _header(Path(path))


def _check(meta: dict, tensors: dict, path: Path) -> tuple[list, int, int]:
    def bad(field: str, what: str):
        return ExportError(f"{path}: {field} {what}")

    if meta.get("format") != FORMAT:
        raise bad("format", f"must be {FORMAT!r}, got {str(meta.get('format'))[:40]!r}")
    for key in ("obs_size", "num_actions"):
        v = meta.get(key)
        if type(v) is not int or not 1 <= v <= 1 << 20:
            raise bad(key, "must be an integer 1..1048576")
    layers = meta.get("layers")
    if not isinstance(layers, list) or not layers or any(k not in ("linear", *_ACTIVATIONS) for k in layers):
        raise bad("layers", "must be a list of 'linear', 'relu' and 'tanh'")
    styles = meta.get("styles", [])
    if not isinstance(styles, list) or len(styles) > 64:
        raise bad("styles", "must be a list of at most 64 names")
    n_styles = len(styles)
    d = meta.get("default_style", -1)
    if type(d) is not int or not -1 <= d < n_styles:
        raise bad("default_style", f"must be -1 or an index into styles (0..{n_styles - 1})")
    shapes, width = [], meta["obs_size"] + n_styles
    expected = set()
    for i, kind in enumerate(layers):
        if kind != "linear":
            continue
        w, b = tensors.get(f"net.{i}.weight"), tensors.get(f"net.{i}.bias")
        expected |= {f"net.{i}.weight", f"net.{i}.bias"}
        if w is None or b is None or w.ndim != 2 or b.shape != (w.shape[0],) or w.shape[1] != width:
            raise bad(f"net.{i}", f"must be a Linear layer taking {width} inputs (weight and bias)")
        shapes.append((int(w.shape[0]), int(w.shape[1])))
        width = int(w.shape[0])
    if not shapes or width != meta["num_actions"]:
        raise bad("layers", f"must end in {meta['num_actions']} logits, got {width}")
    if set(tensors) != expected:
        raise bad("tensors", f"unexpected: {', '.join(sorted(set(tensors) - expected))[:80]}")
    return shapes, n_styles, d


def load_export(path: str | Path) -> ExportedPolicy:
    """The network of an export file, in eval mode (``.meta``: its metadata); reads tensors
    and JSON only, never code. ``ExportError`` names the file and what is wrong."""
    from safetensors.torch import load_file

    path = Path(path)
    meta = _header(path)
    try:
        tensors = load_file(str(path))
    except Exception as exc:  # noqa: BLE001
        raise ExportError(f"{path}: cannot read the tensors ({str(exc).splitlines()[0][:120]})") from None
    shapes, n_styles, default = _check(meta, tensors, path)
    policy = ExportedPolicy(shapes, meta["layers"], n_styles, default)
    policy.load_state_dict(tensors, strict=True)
    policy.meta = meta
    return policy.eval().requires_grad_(False)


class ExportAgent:
    """An export played as an agent of the zoo: greedy on the masked logits (a distilled
    zoo's ``style``: an index or a name of its styles; None its default)."""

    def __init__(self, policy: ExportedPolicy, style: int | str | None = None, name: str | None = None):
        self.policy = policy
        styles = policy.meta.get("styles", [])
        if isinstance(style, str):
            if style not in styles:
                raise ValueError(f"style {style!r} is not one of the export's styles: {', '.join(styles) or 'none'}")
            style = styles.index(style)
        self.style = -1 if style is None else int(style)
        self.name = name or str(policy.meta.get("agent", "export"))
        self.game = policy.meta.get("game")

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        m = np.asarray(action_masks)
        if len(m) == 0:
            return np.zeros(0, np.int64)
        with torch.no_grad():
            z = self.policy(torch.as_tensor(np.asarray(observations, dtype=np.float32)),
                            torch.as_tensor(m.astype(np.int8)), self.style)
        a = z.argmax(-1).numpy().astype(np.int64)
        a[~m.astype(bool).any(axis=1)] = -1  # no legal action: a finished game
        return a

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])


def load_export_agent(path: str | Path, game: str | None = None, style: int | str | None = None) -> ExportAgent:
    """An export file as an agent; ``game``: the game it must have been exported for."""
    policy = load_export(path)
    got = policy.meta.get("game")
    if game is not None and got != game:
        raise ExportError(f"{path}: an export of game {short(got)}; it cannot play {game!r}")
    return ExportAgent(policy, style=style)


# ----------------------------------------------------------------------------- shipped
@dataclass(frozen=True)
class Shipped:
    """A shipped export: the agent ``name`` of ``game`` built from ``source``, written to ``path``."""

    name: str
    game: str
    source: Path
    path: Path


def _shipped(name: str, game: str, source: str | None = None) -> Shipped:
    """The export of checkpoint ``agents/checkpoints/<source or name>.zip`` beside it, as ``<stem>.safetensors``."""
    src = _HERE / "checkpoints" / (source or f"{name}.zip")
    return Shipped(name, game, src, src.with_suffix(SUFFIX))


SHIPPED = (
    _shipped("ppo-6p", "ripmarket"),
    _shipped("ppo", "ripmarket"),
    _shipped("ppo-at-4p", "ripmarket"),
    _shipped("ppo-at-6p", "ripmarket"),
    _shipped("greedy-bc", "ripmarket", "zoo-bc.pt"),
    _shipped("rm-ppo-4p", "rune-market"),
    _shipped("bm-ppo", "black-market"),
    _shipped("rm-ppo", "rune-market"),
    _shipped("rm-ppo-search", "rune-market"),
    _shipped("rm-ppo-search-at-2p", "rune-market"),
    _shipped("bm-ppo-4p-teams", "black-market"),
    _shipped("bm-ppo-at-4p-ffa", "black-market"),
    _shipped("bm-ppo-at-6p-ffa", "black-market"),
    _shipped("bm-ppo-at-4p-teams", "black-market"),
    _shipped("bm-ppo-at-2p-teams", "black-market"),
)


def export_agent(agent, path: str | Path, game: str = "ripmarket", source: str | Path | None = None) -> Path:
    """Export a trained agent of ``game`` (a checkpoint or distilled style; an agent object
    or its zoo name) to ``path``; ``source``, the checkpoint file it was loaded from, is
    fingerprinted in the meta."""
    asked = agent if isinstance(agent, str) else None
    if isinstance(agent, str):
        from agents.base import make

        cards = trained_cards(source) if game == "ripmarket" and source is not None else None
        agent = make(agent, game=game, **({"cards": cards} if cards is not None else {}))
    name = asked or getattr(agent, "name", type(agent).__name__)
    by_table = getattr(agent, "by_table", None)
    if by_table is not None:  # a bot with a network per table: the one read from ``source``
        nets = {a.name: a for a in (agent.default, *by_table.values())}
        stem = name if source is None else Path(source).stem  # by its zoo name: its default network
        if stem not in nets:
            raise ValueError(f"{name} plays one network per player count or table ({', '.join(nets)}): "
                             "export one of them")
        agent = nets[stem]
    if not (_is_distilled(agent) or hasattr(agent, "policy")):
        inner = getattr(getattr(agent, "net", None), "name", None)  # a search around a trained bot
        flag = "" if game == DEFAULT_GAME else f" --game {game}"
        hint = f"; it plays the trained bot {inner}, which exports: ripmarket export {inner}{flag}" if inner else ""
        raise ValueError(f"{name} is not a trained agent (a checkpoint or a distilled style): nothing to export{hint}")
    meta = {"agent": name, "game": game}
    if source is not None:
        meta.update(source=Path(source).name, source_sha256=file_sha256(source))
    if _is_distilled(agent):
        meta["agent"] = "zoo-bc" if source is None else Path(source).stem
    return export_policy(agent, path, meta=meta)


def trained_cards(source: str | Path):
    """The packaged R.I.P. Market card edition a checkpoint (``.zip``) or distilled zoo
    (``.pt``) was trained on, as a ``CardDB``, when that is not the packaged cards (None
    otherwise, or when its cards are no packaged edition): an export is made from the agent
    as it plays the cards it was trained on."""
    from agents.checkpoint import card_edition, read_metadata
    from ripmarket_env.games.ripmarket.cards.loader import load_cards

    source = Path(source)
    if source.suffix == ".pt":
        digest = torch.load(str(source), map_location="cpu", weights_only=True)["meta"].get("card_digest")
    else:
        digest = read_metadata(source, check=False).get("card_digest")
    ed = card_edition(str(digest))
    return load_cards(ed) if ed not in (None, "second-edition") else None


def export_shipped(only: list[str] | None = None) -> list[Path]:
    """Write every shipped export (or those whose file stem is in ``only``) again."""
    return [export_agent(s.name, s.path, s.game, s.source) for s in SHIPPED if only is None or s.path.stem in only]


def stale_exports() -> list[str]:
    """Why each shipped export no longer matches its checkpoint (missing, or made from
    another file); empty when every one is current."""
    out = []
    for s in SHIPPED:
        if not s.source.is_file():
            continue
        if not s.path.is_file():
            out.append(f"{s.path.name} is missing")
            continue
        try:
            meta = read_meta(s.path)
        except ExportError:
            meta = {}
        if meta.get("format") != FORMAT or meta.get("source_sha256") != file_sha256(s.source):
            out.append(f"{s.path.name} was not made from the current {s.source.name}")
    return out
