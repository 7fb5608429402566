"""The distilled zoo as agents: one small network imitating every heuristic style
(``greedy-bc``, ``hoarder-bc``, ...), acting for a whole batch in one forward pass.

``load(path)`` reads a distilled-zoo file (a ``torch.save`` dict of weights and
metadata, loaded with ``weights_only=True``) and checks it against the current
observation layout, action count and cards; ``DistilledAgent`` plays one style of it.
Training them (recording zoo games, behaviour cloning) is ``train.distill``'s.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

DEFAULT_STYLES = ("greedy", "survivor", "shark", "hoarder", "trickster")
FORMAT = "ripmarket-distilled-zoo/1"


# ----------------------------------------------------------------------------- network
def _net(obs_size: int, n_styles: int, num_actions: int, hidden: list[int]):
    import torch.nn as nn

    layers: list = []
    width = obs_size + n_styles
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, num_actions))
    return nn.Sequential(*layers)


def _inputs(obs, style, n_styles: int):
    import torch

    x = torch.as_tensor(np.asarray(obs, dtype=np.float32))
    oh = torch.zeros((len(x), n_styles))
    oh[torch.arange(len(x)), torch.as_tensor(np.asarray(style, dtype=np.int64))] = 1.0
    return torch.cat([x, oh], dim=1)


def _forward(net, obs: np.ndarray, styles: np.ndarray):
    """``net(_inputs(obs, styles))`` with the first layer on the non-zeros only
    (``agents.sparse``): the observation is mostly zeros and the style a one-hot."""
    from agents.sparse import sparse_sequential

    return sparse_sequential(obs, net, extra=styles)


# ----------------------------------------------------------------------------- files
def load(path: str | Path, cards=None, game: str | None = None):
    """``(net, meta)`` from a distilled-zoo file of ``game`` (default R.I.P. Market's);
    ``CheckpointError`` if missing, corrupt, of another game, or made for another
    observation layout, action count or card set than ``cards`` (R.I.P. Market's ``CardDB``
    in play; None: the packaged cards)."""
    import torch

    from agents.checkpoint import MAX_MEMBER_BYTES, CheckpointError, _current_facts, card_mismatch
    from agents.policy_config import MAX_LAYER, MAX_LAYERS
    from ripmarket_env.core.jsonfile import short as _short, why_not_a_file

    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"distilled zoo file {path} {why_not_a_file(path)}")
    if path.stat().st_size > MAX_MEMBER_BYTES:
        raise CheckpointError(f"{path}: {path.stat().st_size:,} bytes is too large for a distilled zoo file "
                              f"(at most {MAX_MEMBER_BYTES:,})")
    try:  # weights_only: tensors and plain containers, never code
        blob = torch.load(io.BytesIO(path.read_bytes()), map_location="cpu", weights_only=True)
        meta, sd = blob["meta"], blob["state_dict"]
    except Exception as exc:  # torch raises many kinds for damaged files
        msg = " ".join(str(exc).split())[:300]
        raise CheckpointError(f"{path} is not a readable distilled zoo file (corrupt or truncated): "
                              f"{type(exc).__name__}: {msg}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: format {_short(meta.get('format')) if isinstance(meta, dict) else None}, "
                              f"expected {FORMAT!r}")
    hidden, styles = meta.get("hidden"), meta.get("styles")
    if not (isinstance(hidden, (list, tuple)) and 0 < len(hidden) <= MAX_LAYERS
            and all(isinstance(h, int) and not isinstance(h, bool) and 0 < h <= MAX_LAYER for h in hidden)):
        raise CheckpointError(f"{path}: field 'hidden' is {_short(hidden)}; allowed: a list of 1..{MAX_LAYERS} "
                              f"layer widths in 1..{MAX_LAYER}")
    if not (isinstance(styles, (list, tuple)) and 0 < len(styles) <= 64 and all(isinstance(x, str) for x in styles)):
        raise CheckpointError(f"{path}: field 'styles' is {_short(styles)}; allowed: a list of heuristic names")
    if not isinstance(sd, dict):
        raise CheckpointError(f"{path}: field 'state_dict' is not a mapping of tensors")
    from agents.checkpoint import GAME

    game = GAME if game is None else game
    if meta.get("game", GAME) != game:
        raise CheckpointError(f"{path} is a distilled zoo of game {_short(meta.get('game', GAME))}, not {game!r}")
    now = _current_facts(game, cards=cards if game == GAME else None)  # (``game``'s own facts)
    if meta.get("card_digest") != now["card_digest"]:
        raise CheckpointError(card_mismatch(str(path), meta.get("card_digest"), now["card_digest"]))
    for key in ("layout_digest", "num_actions"):
        if meta.get(key) != now[key]:
            raise CheckpointError(f"{path} was made for another {key.replace('_', ' ')} "
                                  f"({meta.get(key)!r}; this version has {now[key]!r}); distill it again")
    net = _net(now["obs_size"], len(meta["styles"]), now["num_actions"], meta["hidden"])
    try:
        net.load_state_dict(sd)
    except Exception as exc:
        raise CheckpointError(f"{path}: weights do not fit the network: {' '.join(str(exc).split())[:300]}") from None
    net.eval()
    return net, meta


# ----------------------------------------------------------------------------- agent
class DistilledAgent:
    """One style of a distilled zoo: masked argmax (or a sample) of the imitation network."""

    def __init__(self, net, style_index: int, n_styles: int, name: str, deterministic: bool = True,
                 seed: int | None = None):
        self.net, self.style_index, self.n_styles, self.name = net, style_index, n_styles, name
        self.deterministic = deterministic
        self._seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        self.rng = np.random.default_rng(self._seed)

    @property
    def shared_net_key(self) -> int | None:
        """Agents with the same key share one network and a sampling mode: ``act_styles``
        decides for rows of several styles in one forward pass (the league batches them)."""
        return None if not self.deterministic else id(self.net)

    def sparse_parts(self):
        """``(first layer, the layers after it, this style's index)``: the logits are
        ``rest(first([x, one-hot style]))`` (``agents.sparse.fused_act``)."""
        if getattr(self, "_parts_of", None) is not self.net:
            self._parts_of, self._rest = self.net, self.net[1:]
        return self.net[0], self._rest, self.style_index

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self.act_styles(observations, action_masks, np.full(len(action_masks), self.style_index))

    def act_styles(self, observations: np.ndarray, action_masks: np.ndarray, styles: np.ndarray) -> np.ndarray:
        """Actions for rows whose style index is given per row (this agent's network)."""
        import torch

        m = np.asarray(action_masks, dtype=bool)
        if len(m) == 0:
            return np.zeros(0, np.int64)
        with torch.no_grad():
            z = _forward(self.net, observations, styles).numpy()
        z = z.astype(np.float64)
        if not self.deterministic:
            z = z + self.rng.gumbel(size=z.shape)
        z[~m] = -np.inf
        a = z.argmax(axis=1).astype(np.int64)
        a[~m.any(axis=1)] = -1
        return a

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])
