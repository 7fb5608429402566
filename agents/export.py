"""Torch-only exports of trained agents: a TorchScript file that any trainer (RLlib,
Tianshou, TorchRL, plain torch) calls as an opponent with torch alone.

    >>> import torch
    >>> policy = torch.jit.load("agents/checkpoints/ppo-6p.ts")  # no ripmarket, SB3 or pickle
    >>> logits = policy(obs, mask)          # (B, obs_size) float32, (B, num_actions) 0/1
    >>> action = logits.argmax(-1)          # illegal actions are -inf
    >>> zoo = torch.jit.load("agents/checkpoints/zoo-bc.ts")
    >>> action = zoo(obs, mask, 2).argmax(-1)   # the distilled zoo: style 2 (shark)

``export_agent(agent, path)`` writes one for a ``PolicyAgent`` (an SB3 checkpoint: the
actor's network as dense torch layers; the sparse first layer is the same ``nn.Linear``
applied densely, so the logits are the agent's up to float rounding) or a
``DistilledAgent`` (the whole distilled zoo: ``forward(obs, mask, style=-1)``, the style
an index into ``styles``; -1 is the exported agent's own style). The file carries
``meta.json`` (``read_meta``): format, agent name, game, sizes, styles and the SHA-256 of
the checkpoint it was made from, so a stale export is detected (``stale_exports``).

The shipped exports (``SHIPPED``) sit beside their checkpoints (``<stem>.ts``);
``ripmarket export --shipped`` writes them again.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn

FORMAT = "ripmarket-torch-policy/1"
_HERE = Path(__file__).resolve().parent


class MaskedLogits(nn.Module):
    """``body(obs)`` with the logits of illegal actions (``mask == 0``) set to -inf."""

    def __init__(self, body: nn.Module):
        super().__init__()
        self.body = body

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        z = self.body(obs)
        return z.masked_fill(mask == 0, float("-inf"))


class StyledMaskedLogits(nn.Module):
    """The distilled zoo: ``net([obs, one-hot style])`` masked; ``style`` -1 is the default."""

    def __init__(self, net: nn.Module, n_styles: int, default_style: int):
        super().__init__()
        self.net = net
        self.n_styles = n_styles
        self.default_style = default_style

    def forward(self, obs: torch.Tensor, mask: torch.Tensor, style: int = -1) -> torch.Tensor:
        s = self.default_style if style < 0 else style
        if s >= self.n_styles:
            raise ValueError("style must be -1 or an index into the export's styles")
        oh = torch.zeros(obs.shape[0], self.n_styles, dtype=obs.dtype)
        oh[:, s] = 1.0
        z = self.net(torch.cat([obs, oh], 1))
        return z.masked_fill(mask == 0, float("-inf"))


class _Actor(nn.Module):
    def __init__(self, policy):
        super().__init__()
        self.features = policy.pi_features_extractor
        self.net = policy.mlp_extractor.policy_net
        self.head = policy.action_net

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.head(self.net(self.features(obs)))


def _is_distilled(agent) -> bool:
    return hasattr(agent, "net") and hasattr(agent, "style_index") and hasattr(agent, "n_styles")


def actor_module(agent) -> nn.Module:
    """The agent's masked actor as plain torch layers."""
    if _is_distilled(agent):
        return StyledMaskedLogits(agent.net, agent.n_styles, agent.style_index).eval()
    parts = agent.sparse_parts()
    if parts:
        first, rest, _ = parts
        body = nn.Sequential(first, rest)
    else:
        body = _Actor(agent.policy)
    return MaskedLogits(body).eval()


def agent_sizes(agent) -> tuple[int, int]:
    """``(obs_size, num_actions)`` of a policy or distilled agent's network."""
    if _is_distilled(agent):
        return agent.net[0].in_features - agent.n_styles, agent.net[-1].out_features
    return int(agent.policy.observation_space.shape[0]), int(agent.policy.action_space.n)


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def export_policy(agent, path: str | Path, obs_size: int | None = None, num_actions: int | None = None,
                  meta: dict | None = None) -> Path:
    """Write ``agent``'s masked actor as TorchScript to ``path`` (``torch.jit.load`` reads
    it), with ``meta`` (plus the format and sizes) as the file's ``meta.json``."""
    path = Path(path)
    sizes = agent_sizes(agent)
    obs_size, num_actions = obs_size or sizes[0], num_actions or sizes[1]
    if (obs_size, num_actions) != sizes:
        raise ValueError(f"{getattr(agent, 'name', agent)} takes {sizes[0]} observation entries and "
                         f"{sizes[1]} actions, not {obs_size} and {num_actions}")
    module = actor_module(agent)
    info = {"format": FORMAT, "obs_size": obs_size, "num_actions": num_actions, **(meta or {})}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit: see docs/SCALE_OUT.md
        if isinstance(module, StyledMaskedLogits):
            info["styles"] = list(getattr(agent, "styles", ()))
            info["default_style"] = agent.style_index
            out = torch.jit.script(module)
        else:
            example = (torch.zeros(2, obs_size), torch.ones(2, num_actions, dtype=torch.int8))
            out = torch.jit.trace(module, example, check_trace=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.jit.save(out, str(path), _extra_files={"meta.json": json.dumps(info, sort_keys=True)})
    return path


def read_meta(path: str | Path) -> dict:
    """The ``meta.json`` an export carries (``{}`` if it has none)."""
    extra = {"meta.json": ""}
    torch.jit.load(str(path), map_location="cpu", _extra_files=extra)
    raw = extra["meta.json"]
    return json.loads(raw) if raw else {}


# ----------------------------------------------------------------------------- shipped
@dataclass(frozen=True)
class Shipped:
    """A shipped export: the agent ``name`` of ``game`` built from ``source``, written to ``path``."""

    name: str
    game: str
    source: Path
    path: Path


SHIPPED = (
    Shipped("ppo-6p", "ripmarket", _HERE / "checkpoints" / "ppo-6p.zip", _HERE / "checkpoints" / "ppo-6p.ts"),
    Shipped("ppo", "ripmarket", _HERE / "checkpoints" / "ppo.zip", _HERE / "checkpoints" / "ppo.ts"),
    Shipped("ppo-at-4p", "ripmarket", _HERE / "checkpoints" / "ppo-at-4p.zip", _HERE / "checkpoints" / "ppo-at-4p.ts"),
    Shipped("ppo-at-6p", "ripmarket", _HERE / "checkpoints" / "ppo-at-6p.zip", _HERE / "checkpoints" / "ppo-at-6p.ts"),
    Shipped("greedy-bc", "ripmarket", _HERE / "checkpoints" / "zoo-bc.pt", _HERE / "checkpoints" / "zoo-bc.ts"),
    Shipped("rm-ppo-4p", "rune-market", _HERE / "checkpoints" / "rm-ppo-4p.zip",
            _HERE / "checkpoints" / "rm-ppo-4p.ts"),
    Shipped("bm-ppo-2p", "black-market", _HERE / "blackmarket" / "checkpoints" / "bm-ppo-2p.zip",
            _HERE / "blackmarket" / "checkpoints" / "bm-ppo-2p.ts"),
    Shipped("bm-ppo-4p-teams", "black-market", _HERE / "blackmarket" / "checkpoints" / "bm-ppo-4p-teams.zip",
            _HERE / "blackmarket" / "checkpoints" / "bm-ppo-4p-teams.ts"),
)


def export_agent(agent, path: str | Path, game: str = "ripmarket", source: str | Path | None = None) -> Path:
    """Export a trained agent of ``game`` (a checkpoint or distilled style; an agent object
    or its zoo name) to ``path``; ``source``, the checkpoint file it was loaded from, is
    fingerprinted in the meta."""
    if isinstance(agent, str):
        import agents

        cards = trained_cards(source) if game == "ripmarket" and source is not None else None
        agent = agents.make(agent, game=game, **({"cards": cards} if cards is not None else {}))
    name = getattr(agent, "name", type(agent).__name__)
    by_count = getattr(agent, "by_count", None)
    if by_count is not None:  # a bot with a network per player count: the one read from ``source``
        nets = {a.name: a for a in (agent.default, *by_count.values())}
        if source is None or Path(source).stem not in nets:
            raise ValueError(f"{name} plays one network per player count ({', '.join(nets)}): export one of them")
        agent = nets[Path(source).stem]
    if not (_is_distilled(agent) or hasattr(agent, "policy")):
        raise ValueError(f"{name} is not a trained agent (a checkpoint or a distilled style): nothing to export")
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
        meta = read_meta(s.path)
        if meta.get("format") != FORMAT or meta.get("source_sha256") != file_sha256(s.source):
            out.append(f"{s.path.name} was not made from the current {s.source.name}")
    return out
