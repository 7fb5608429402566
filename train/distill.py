"""Distilled zoo: small networks that imitate the heuristic agents, for fast training opponents.

The heuristics (``agents.ripmarket.heuristics``) decide in pure Python, a few milliseconds per
decision: fine for tournaments, far too slow to fill the opponent seats of thousands of
games per second. ``ripmarket distill`` plays games between zoo agents, records every
decision (observation, mask, action, style) and fits one network to all styles by
behaviour cloning: the observation and a one-hot of the style go in, masked logits over
the action space come out. The result is an agent per style (``greedy-bc``,
``hoarder-bc``, ...) that acts for a whole batch of games in one forward pass.

    ripmarket distill --players 6 --games 4000 --out agents/checkpoints/zoo-bc.pt

The file is a ``torch.save`` dict holding the weights and a metadata block in the
checkpoint format's terms (observation layout digest, action count, card digest, styles,
accuracy per style on held-out games); loading it against a different layout fails with
a message naming what differs, like any checkpoint (``agents.checkpoint``).
"""

from __future__ import annotations

import io
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from agents.base import DEFAULT_GAME
from agents.distilled import DEFAULT_STYLES, FORMAT, DistilledAgent, _forward, _inputs, _net, load  # noqa: F401


# ----------------------------------------------------------------------------- data
@dataclass
class Decisions:
    """Recorded decisions: one row each. ``obs`` is stored as float16 (the observation's
    values are small counts and fractions; float16 keeps them to 3 significant digits)."""

    obs: np.ndarray       # (n, obs_size) float16
    mask: np.ndarray      # (n, num_actions) bool
    action: np.ndarray    # (n,) int16
    style: np.ndarray     # (n,) int8, index into the styles
    game: np.ndarray      # (n,) int32, game number (for a held-out split by game)
    reward: np.ndarray    # (n,) float32, the deciding seat's final reward in that game

    def __len__(self) -> int:
        return len(self.action)

    @staticmethod
    def concat(parts: list[Decisions]) -> Decisions:
        return Decisions(*(np.concatenate([getattr(p, f) for p in parts]) for f in
                           ("obs", "mask", "action", "style", "game", "reward")))


def _collect_chunk(args, report=None) -> Decisions:
    num_players, styles, games, seed, first_game, *rest = args
    guest = rest[0] if rest else None
    record = rest[1] if len(rest) > 1 else "zoo"
    game = rest[2] if len(rest) > 2 else DEFAULT_GAME
    table_rules = rest[3] if len(rest) > 3 else None
    import agents
    from eval import arena
    from ripmarket_env.games import get

    spec = get(game)
    rng = np.random.default_rng(np.random.SeedSequence([seed, first_game, 0xD157]))
    zoo = [agents.make(s, game=game, seed=int(rng.integers(2**31))) for s in styles]
    seeds = [int(s) for s in rng.integers(0, 2**31 - 1, games)]
    who = rng.integers(0, len(styles), (games, num_players))
    rows = np.arange(games)
    if guest is not None:  # the guest sits in one seat per game (rotating)
        from eval.evaluate import make_agent

        zoo.append(make_agent(guest, seed=int(rng.integers(2**31)), game=game))
        who[rows, (rows + first_game) % num_players] = len(styles)
    keep = (lambda w: w == len(styles)) if record == "guest" else (lambda w: w < len(styles))
    # forced decisions (one legal action) teach nothing
    rec = arena.Recorder(include=keep, min_choices=2, obs_dtype=np.float16)
    rules = spec.make_rules(num_players) if table_rules is None else \
        spec.make_rules(rules={**table_rules, "num_players": num_players})
    arena.play(spec, rules, seeds, who, zoo, observers=[rec], report=report)
    d = rec.decisions
    return Decisions(d["obs"], d["mask"], d["action"].astype(np.int16), d["agent"].astype(np.int8),
                     (first_game + d["game"]).astype(np.int32), d["reward"].astype(np.float32))


def default_styles(game: str = DEFAULT_GAME) -> tuple[str, ...]:
    """The styles a distilled zoo of ``game`` imitates: the game's heuristics (its agents'
    profile, ``agents.game_agents``); ``ValueError`` for a game without any."""
    import agents

    styles = agents.game_agents(game).heuristics
    if not styles:
        raise ValueError(f"game {game} has no heuristics to record or imitate")
    return tuple(styles)


def collect(num_players: int | Sequence[int], games: int, styles=None, seed: int = 0, workers: int = 2,
            chunk: int = 100, progress: bool = True, guest: str | None = None, record: str = "zoo",
            game: str = DEFAULT_GAME, rules: Sequence[dict] | None = None) -> Decisions:
    """Play ``games`` games of ``game`` between zoo agents (a style drawn per seat; default
    ``styles``: the game's heuristics) and record every decision with more than one legal
    action. Deterministic given the seed and chunk.

    ``num_players`` may list several player counts: the games are then split evenly over
    them (the first counts get the remainder), numbered one after another, and played in
    one pool. Every count shares the observation layout (it names the count), so one
    network learns them all. ``rules``: the rules fields of each entry of ``num_players``
    (a list as long; the tables of a run's ``tables``, ``train.config.Table``), else the
    game's default rules at each count.

    ``guest`` (an agent name or checkpoint) takes one seat of every game, rotating over the
    seats; ``record="zoo"`` keeps only the zoo's decisions: recording the zoo against the
    agent being trained covers the positions that agent leads the zoo into (the DAgger
    idea: imitate the expert on the learner's state distribution, not only on its own).
    ``record="guest"`` keeps only the guest's decisions (their ``style`` is
    ``len(styles)``): a teacher's play against the zoo, to clone into a network. The games
    are arena tables (``eval.arena``) of ``chunk`` games spread over ``workers`` processes."""
    if record not in ("zoo", "guest"):
        raise ValueError(f"record must be 'zoo' or 'guest', got {record!r}")
    if record == "guest" and guest is None:
        raise ValueError("record='guest' needs a guest agent")
    from eval import arena
    from ripmarket_env.games import get

    styles = default_styles(game) if styles is None else styles

    counts = [int(num_players)] if np.isscalar(num_players) else [int(c) for c in num_players]
    if rules is not None and len(rules) != len(counts):
        raise ValueError(f"rules: one mapping per player count ({len(counts)}), got {len(rules)}")
    share = split_evenly(games, len(counts))
    jobs, first = [], 0
    for i, (c, n) in enumerate(zip(counts, share)):
        extra = () if rules is None else (dict(rules[i]),)
        jobs += [(c, tuple(styles), min(chunk, n - g), seed, first + g, guest, record, game, *extra)
                 for g in range(0, n, chunk)]
        first += n
    vs = f" against {guest}" if guest is not None else ""
    at = f"{counts[0]}" if len(counts) == 1 else ", ".join(map(str, counts))
    spec = get(game)

    def warm():
        for i, c in enumerate(counts):
            arena.warm_up(spec, spec.make_rules(c) if rules is None else spec.make_rules(rules={**rules[i], "num_players": c}))

    parts = arena.run_pool(_collect_chunk, jobs, workers, total=games, progress=progress,
                           threads=1 if guest is not None else None,
                           label=(f"recording {guest}: {games} games against the zoo at {at} players" if record == "guest"
                                  else f"distill: playing {games} zoo games{vs} at {at} players"), warm=warm)
    return Decisions.concat(parts)


def split_evenly(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` whole shares differing by at most one, larger first."""
    base, extra = divmod(int(total), int(parts))
    return [base + (i < extra) for i in range(parts)]


# ----------------------------------------------------------------------------- network
def fit(data: Decisions, styles=None, hidden=(256, 256), epochs: int = 8, batch: int = 1024,
        lr: float = 1e-3, holdout: float = 0.1, seed: int = 0, progress: bool = True,
        net=None) -> tuple[Any, dict]:
    """Behaviour cloning: cross-entropy of the masked logits against the recorded action.
    Games are split into train and held-out sets; returns the network and per-style
    held-out accuracy (how often the argmax equals the heuristic's choice). ``net``: go on
    training this network (same styles and layout) instead of a fresh one."""
    import torch
    from rich.progress import Progress

    styles = default_styles() if styles is None else styles
    torch.manual_seed(seed)
    n_styles, obs_size, num_actions = len(styles), data.obs.shape[1], data.mask.shape[1]
    if net is None:
        net = _net(obs_size, n_styles, num_actions, list(hidden))
    net.train()
    rng = np.random.default_rng(seed)
    games = np.unique(data.game)
    held = set(rng.choice(games, max(1, int(len(games) * holdout)), replace=False).tolist())
    is_held = np.fromiter((g in held for g in data.game), bool, len(data))
    tr, te = np.flatnonzero(~is_held), np.flatnonzero(is_held)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * (len(tr) // batch + 1))
    with Progress(disable=not progress) as bar:
        task = bar.add_task("distill: fitting", total=epochs * len(tr))
        for _ in range(epochs):
            perm = rng.permutation(tr)
            for k in range(0, len(perm), batch):
                ix = np.sort(perm[k:k + batch])
                x = _inputs(data.obs[ix], data.style[ix], n_styles)
                z = net(x).masked_fill(~torch.as_tensor(data.mask[ix]), -1e9)
                loss = torch.nn.functional.cross_entropy(z, torch.as_tensor(data.action[ix].astype(np.int64)))
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                bar.advance(task, len(ix))
    net.eval()
    acc = accuracy(net, data, te, styles)
    return net, {"train_decisions": int(len(tr)), "heldout_decisions": int(len(te)), "accuracy": acc}


def agrees(net, data: Decisions, rows: np.ndarray, n_styles: int) -> np.ndarray:
    """Per row of ``rows``: does ``net``'s masked argmax equal the recorded action?"""
    import torch

    out = np.zeros(len(rows), bool)
    with torch.no_grad():
        for k in range(0, len(rows), 4096):
            ix = rows[k:k + 4096]
            z = net(_inputs(data.obs[ix], data.style[ix], n_styles)).numpy()
            z[~data.mask[ix]] = -np.inf
            out[k:k + 4096] = z.argmax(1) == data.action[ix]
    return out


def accuracy(net, data: Decisions, rows: np.ndarray, styles) -> dict[str, float]:
    """Held-out agreement per style (``agrees`` counted by style)."""
    ok = agrees(net, data, rows, len(styles))
    style = data.style[rows].astype(np.int64)
    hits = np.bincount(style, weights=ok, minlength=len(styles))
    total = np.bincount(style, minlength=len(styles))
    return {s: float(hits[i] / max(total[i], 1)) for i, s in enumerate(styles)}


# ----------------------------------------------------------------------------- files
def save(net, path: str | Path, styles, hidden, info: dict, game: str = DEFAULT_GAME) -> Path:
    import torch

    from agents.checkpoint import _current_facts

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"format": FORMAT, "styles": list(styles), "hidden": list(hidden), **_current_facts(game), **info}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:  # atomic: a reader sees the old file or the new one, never half of one
        torch.save({"meta": meta, "state_dict": net.state_dict()}, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def distill(num_players: int, games: int, out: str | Path, styles=None, hidden=(256, 256),
            epochs: int = 8, seed: int = 0, workers: int = 2, progress: bool = True, game: str = DEFAULT_GAME) -> dict:
    """Collect, fit, save; returns the metadata written (with accuracies and timings).
    ``styles``: default the game's heuristics."""
    t0 = time.perf_counter()
    styles = default_styles(game) if styles is None else styles
    data = collect(num_players, games, styles, seed=seed, workers=workers, progress=progress, game=game)
    t1 = time.perf_counter()
    net, info = fit(data, styles, hidden=hidden, epochs=epochs, seed=seed, progress=progress)
    t2 = time.perf_counter()
    info.update({"num_players": num_players, "games": games, "seed": seed, "decisions": len(data),
                 "collect_s": t1 - t0, "fit_s": t2 - t1})
    save(net, out, styles, hidden, info, game=game)
    return info


# ----------------------------------------------------------------------------- warm start
def pretrain_policy(policy, data: Decisions, winners_only: bool = True, value: bool = True,
                    epochs: int = 4, batch: int = 2048, lr: float = 1e-3, seed: int = 0,
                    progress: bool = True, label: str | None = None) -> dict[str, float]:
    """Behaviour-clone a MaskablePPO policy on recorded zoo decisions.

    The actor maximises the log-probability of the recorded action (only the decisions of
    eventual winners when ``winners_only``: a filtered imitation of what worked); the
    critic regresses every decision's final reward (``value``; the recording's rewards are
    R-11.1 win rewards). ``label``: the progress bar's text (default: what is cloned from
    the zoo). Returns the final-epoch mean losses and the actor's agreement with the cloned
    decisions."""
    import torch
    from rich.progress import Progress

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    won = data.reward > 0
    rows = np.arange(len(data))
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    policy.set_training_mode(True)
    stats = {"actor_loss": 0.0, "value_loss": 0.0, "agreement": 0.0}
    with Progress(disable=not progress) as bar:
        label = label or ("pretrain: cloning zoo winners" if winners_only else "pretrain: cloning the zoo")
        task = bar.add_task(label, total=epochs * len(rows))
        for ep in range(epochs):
            perm = rng.permutation(rows)
            tot = {"a": 0.0, "v": 0.0, "agree": 0.0, "n_a": 0, "n": 0}
            for k in range(0, len(perm), batch):
                ix = np.sort(perm[k:k + batch])
                obs = torch.as_tensor(data.obs[ix].astype(np.float32))
                acts = torch.as_tensor(data.action[ix].astype(np.int64))
                masks = data.mask[ix]
                values, logp, _ = policy.evaluate_actions(obs, acts, action_masks=masks)
                sel = torch.as_tensor(won[ix]) if winners_only else torch.ones(len(ix), dtype=torch.bool)
                a_loss = -(logp[sel]).mean() if bool(sel.any()) else logp.sum() * 0.0
                v_loss = torch.nn.functional.mse_loss(values.flatten(), torch.as_tensor(data.reward[ix]))
                loss = a_loss + (0.5 * v_loss if value else 0.0)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
                opt.step()
                with torch.no_grad():
                    dist = policy.get_distribution(obs, action_masks=masks)
                    agree = (dist.distribution.probs.argmax(1) == acts)[sel].float().sum().item()
                n_a = int(sel.sum())
                tot["a"] += float(a_loss.detach()) * n_a
                tot["v"] += float(v_loss.detach()) * len(ix)
                tot["agree"] += agree
                tot["n_a"] += n_a
                tot["n"] += len(ix)
                bar.advance(task, len(ix))
            stats = {"actor_loss": tot["a"] / max(tot["n_a"], 1), "value_loss": tot["v"] / max(tot["n"], 1),
                     "agreement": tot["agree"] / max(tot["n_a"], 1), "epochs": ep + 1,
                     "decisions": int(tot["n"]), "cloned_decisions": int(tot["n_a"])}
    policy.set_training_mode(False)
    return stats


def policy_agreement(policy, data: Decisions, chunk: int = 8192) -> float:
    """Share of ``data``'s decisions where ``policy``'s most likely legal action (a
    MaskablePPO policy) is the recorded one."""
    import torch

    if len(data) == 0:
        return 0.0
    hits = 0
    with torch.no_grad():
        for k in range(0, len(data), chunk):
            obs = torch.as_tensor(data.obs[k:k + chunk].astype(np.float32))
            dist = policy.get_distribution(obs, action_masks=data.mask[k:k + chunk])
            hits += int((dist.distribution.probs.argmax(1).numpy() == data.action[k:k + chunk]).sum())
    return hits / len(data)


def save_decisions(data: Decisions, path: str | Path) -> Path:
    import dataclasses

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **dataclasses.asdict(data))
    return path


def load_decisions(path: str | Path) -> Decisions:
    with np.load(path) as z:
        return Decisions(**{k: z[k] for k in ("obs", "mask", "action", "style", "game", "reward")})
