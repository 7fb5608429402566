"""``LookaheadAgent``: the trained bot, checked one turn ahead against a model of the table.

The network (default: the shipped bot ``ppo``) proposes; a short determinized lookahead
decides between its favourites. For each decision the agent

1. asks the network for its masked action scores; with one legal action, as a Ghost (its
   result cannot change any more, R-5.5, R-11.1, R-11.2), or when the network gives its
   favourite at least ``sure`` of the probability, it plays the network's favourite;
2. takes the network's ``top_k`` most likely legal actions as candidates;
3. rebuilds the game from its own observation and samples ``n`` (by default
   :data:`SAMPLES` for the table's size) full games consistent
   with it (the search agent's :func:`~agents.ripmarket.search.public_state` and
   :func:`~agents.ripmarket.search.determinize`: other hands, face-down cards, deck order);
4. applies every candidate to the same ``n`` games, then lets the other seats play with
   the opponent model until the agent's own next decision (or the end of the game):
   ``opponents="zoo"`` (default) gives each other seat of each sampled game a style drawn
   uniformly from the distilled imitations of the five heuristics (``agents.distilled``,
   the shipped ``zoo-bc-ppo-stage3``), the same styles for every candidate;
   ``opponents="self"`` has them play the network itself;
5. values each of these games from its own seat with the network's critic (its estimate of
   the return in the reward it was trained for, ``PolicyAgent.reward_mode``), or with that
   reward itself where the game ended, and plays the candidate with the best mean if it
   beats the network's favourite by at least ``margin`` (else the favourite; the
   network's order breaks ties): 16 samples cannot tell apart candidates whose values
   differ by a hair, and there the network's own choice is the better bet.

Each candidate is thus judged on the same sampled cards and the same opponents, one round
of real play deep, instead of on the network's one-shot guess. Why the opponent model
matters: the same lookahead with the network as every opponent won no more than the
network alone (docs/TRAINING.md, Decision-time lookahead).

>>> agent = agents.make("ppo-lookahead", seed=0)
>>> a = agent.act(obs, mask)
>>> agent.last  # candidates, the network's probabilities and the lookahead's values
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from agents.base import BaseAgent, make, register
from agents.lookahead import whole_in
from agents.sparse import FrozenMLP
from agents.ripmarket.search import ReconstructionError, _proto, _seeds, determinize, public_state, rows_engine

#: The distilled zoo the default opponent model plays (agents/checkpoints/<name>.pt).
DEFAULT_ZOO = "zoo-bc-ppo-stage3"
OPPONENT_MODELS = ("zoo", "self")
#: Sampled games per candidate by the table's size when ``n`` is not given: the other
#: seats' turns to play ahead grow with the table, so fewer samples keep a decision's
#: 95th-percentile time under 5 ms on one core (docs/TRAINING.md, Decision-time lookahead).
SAMPLES = {**{p: 16 for p in range(2, 7)}, 7: 12, 8: 8, 9: 8, 10: 8}


class _TooFar(Exception):
    """The agent's next decision is more than ``max_turns`` turns of the other seats away."""


def _positive(name: str, value, low: int = 1, high: int = 4096) -> int:
    return whole_in(name, value, low, high)


class LookaheadAgent(BaseAgent):
    """The network's ``top_k`` favourites, each played ``n`` times one turn ahead against
    the opponent model and judged by the network's critic (module docstring).

    Args:
        net: a registered trained bot with ``logits`` and ``values`` (default ``ppo``).
        n: sampled games per candidate (the same games for every candidate); None: by
            the table's size, :data:`SAMPLES` (16 up to 6 players, 12 at 7, 8 at 8-10),
            which keeps a decision's time under 5 ms at the 95th percentile.
        top_k: the network's candidates per decision (1: the network alone).
        opponents: ``"zoo"`` (the distilled imitations of the heuristics, a style per
            seat and sampled game) or ``"self"`` (the network).
        zoo: the distilled-zoo file or shipped name the ``"zoo"`` model plays.
        sure: play the network's favourite without looking ahead when its probability
            is at least this (above 1: always look ahead).
        max_steps: cap on the other seats' decisions played ahead per sampled game (the
            games still short of the agent's next decision are valued by the critic).
        max_turns: the most turns of the other seats the lookahead plays (one forward
            pass of the opponent model each); a decision that needs more plays the
            network's favourite. Bounds a decision's time. None: no bound.
        margin: play another candidate than the network's favourite only when its mean
            value beats the favourite's by at least this (0: whenever it is higher; the
            critic's values lie in [-1, 1]).
        compiled: play the imitations' turns in one compiled call
            (``agents.ripmarket.playahead``; the same decisions as the Python loop,
            several times faster); False: the Python loop. The ``"self"`` model always
            runs in Python.
        seed: makes the agent deterministic.
        cards: the card database in play (the network and the imitations must fit it).
    """

    name = "lookahead"

    def __init__(self, net: str = "ppo", n: int | None = None, top_k: int = 3, opponents: str = "zoo",
                 zoo: str = DEFAULT_ZOO, sure: float = 1.01, max_steps: int = 200, seed: int | None = None,
                 cards=None, critic: str | None = None, margin: float = 0.05, max_turns: int | None = None,
                 compiled: bool = True):
        self.n = None if n is None else _positive("n", n)
        self.top_k = _positive("top_k", top_k, high=1024)
        self.max_steps = _positive("max_steps", max_steps, high=100_000)
        self.max_turns = None if max_turns is None else _positive("max_turns", max_turns, high=100_000)
        if opponents not in OPPONENT_MODELS:
            raise ValueError(f"opponents must be one of {', '.join(OPPONENT_MODELS)}, got {opponents!r}")
        if isinstance(sure, bool) or not isinstance(sure, (int, float)) or not 0.0 < float(sure) <= 2.0:
            raise ValueError(f"sure must be a probability in (0, 1], or above 1 to always look ahead, got {sure!r}")
        self.sure = float(sure)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0.0 <= float(margin) <= 2.0:
            raise ValueError(f"margin must be a value difference from 0 to 2 (the critic's values lie in [-1, 1]), "
                             f"got {margin!r}")
        self.margin = float(margin)
        self.opponents = opponents
        kw = {} if cards is None else {"cards": cards}
        self.net = make(net, seed=seed, **kw)
        if not (hasattr(self.net, "logits") and hasattr(self.net, "values")):
            raise ValueError(f"net={net!r} has no action scores and critic (logits, values); give a trained bot such as ppo")
        self.critic = self.net if critic is None else make(critic, seed=seed, **kw)
        if not hasattr(self.critic, "values"):
            raise ValueError(f"critic={critic!r} has no critic (values); give a trained bot such as ppo-stage3")
        self.cards = cards
        self._zoo = None
        if opponents == "zoo":
            from agents.policy import load_distilled, zoo_file

            self._zoo = load_distilled("greedy", zoo_file(zoo), cards=cards)  # any style: rows pick their own
        self.compiled = bool(compiled)
        self._compiled = None
        self._mlps: dict = {}
        if compiled and self._zoo is not None:
            from agents.ripmarket.playahead import CompiledImitations

            try:
                self._compiled = CompiledImitations(self._zoo.net, self._zoo.n_styles)
            except ValueError:  # layers the compiled loop does not take: the Python loop plays them
                pass
        self._seed = seed
        self.rng = np.random.default_rng(seed)
        self.last: dict | None = None

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        self.rng = np.random.default_rng(self._seed)

    # ------------------------------------------------------------------ deciding
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = np.asarray(observation, dtype=np.float32)
        legal = np.flatnonzero(np.asarray(action_mask, dtype=bool))
        self.last = None
        if legal.size <= 1:
            return int(legal[0]) if legal.size else -1
        z = self._forward(self.net, obs[None], "logits")[0].astype(np.float64)[legal]
        order = np.argsort(-z, kind="stable")
        p = np.exp(z - z.max())
        p /= p.sum()
        favourite = int(legal[order[0]])
        if self.top_k == 1 or p[order[0]] >= self.sure:
            return favourite
        cands = legal[order[: self.top_k]]
        try:
            pub = public_state(obs, action_mask, cards=self.cards)
            if not pub.viewer_alive:
                return favourite  # a Ghost's own result is fixed
            q = self.lookahead(pub, cands)
        except (ReconstructionError, _TooFar):  # not a view of a rulebook game, or too far ahead: the network
            return favourite
        self.last = {"actions": cands, "p": p[order[: cands.size]], "values": q}
        best = int(np.argmax(q))  # the first best: the network's order breaks ties
        return int(cands[best] if q[best] - q[0] >= self.margin else cands[0])

    def samples(self, players: int) -> int:
        """Sampled games per candidate at a table of ``players`` seats."""
        return self.n if self.n is not None else SAMPLES[min(int(players), max(SAMPLES))]

    def _forward(self, agent, obs: np.ndarray, kind: str) -> np.ndarray:
        """``agent.logits(obs)`` or ``agent.values(obs)`` (``kind``; every row from one
        table size): with ``compiled``, the network of that size as a
        :class:`~agents.sparse.FrozenMLP` (the same function, without torch's per-call
        costs), where its layers allow."""
        net = agent
        if hasattr(agent, "network_for"):
            net = agent.network_for(int(agent.counts(obs[:1])[0]))
        mlp = None
        if self.compiled:
            key = (id(net), kind)
            if key not in self._mlps:
                self._mlps[key] = (net, _frozen(net, kind))
            mlp = self._mlps[key][1]
        if kind == "logits":
            return mlp(obs) if mlp is not None else net.logits(obs)
        return mlp(obs)[:, 0].astype(np.float64) if mlp is not None else net.values(obs)

    def _engine(self, pub):
        """The rebuilt game's engine, paying the reward the critic of its table estimates."""
        rules = pub.engine.rules
        net = self.critic.network_for(rules.num_players) if hasattr(self.critic, "network_for") else self.critic
        mode = getattr(net, "reward_mode", "win")
        return pub.engine if rules.reward_mode == mode else _proto(replace(rules, reward_mode=mode), pub.engine.cards)

    def lookahead(self, pub, cands: np.ndarray) -> np.ndarray:
        """Mean value for the viewer (seat 0 of the rebuilt game) of each candidate, over
        the same ``n`` sampled games played on to its next decision."""
        k, n = cands.size, self.samples(pub.engine.rules.num_players)
        det = determinize(pub, n, _seeds(self.rng, n))
        if not det["mask"][0].view(bool)[cands].all():
            raise ReconstructionError("the rebuilt game does not offer the observed legal actions")
        sim = rows_engine(self._engine(pub), np.tile(det, k))
        styles = None
        if self._zoo is not None:  # a style per other seat and sampled game, the same for every candidate
            styles = np.tile(self.rng.integers(0, self._zoo.n_styles, size=(n, sim.num_players)), (k, 1))
        sim.step(np.repeat(cands.astype(np.int64), n))
        if self._compiled is not None:
            if self._compiled.play(sim, styles, 0, self.max_steps, self.max_turns) < 0:
                raise _TooFar()
        else:
            self._play_ahead(sim, styles)
        done = sim.terminated.astype(bool)
        value = np.where(done, sim.state["final_rewards"][:, 0], 0.0).astype(np.float64)
        if (~done).any():
            seen = sim.observe(np.zeros(sim.batch_size, np.int64))
            value[~done] = self._forward(self.critic, seen[~done], "values")
        return value.reshape(k, n).mean(axis=1)

    def _play_ahead(self, sim, styles) -> None:
        """The other seats' turns up to seat 0's next decision, in Python (the reference
        the compiled loop, ``agents.ripmarket.playahead``, is checked against)."""
        for turn in range(self.max_steps):
            actor = sim.current_player()
            live = ~sim.terminated.astype(bool) & (actor != 0)
            if not live.any():
                break
            if self.max_turns is not None and turn >= self.max_turns:
                raise _TooFar()
            mask = sim.legal_mask()
            acts = np.full(sim.batch_size, -1, np.int64)
            forced = live & (mask.sum(axis=1) == 1)  # one legal action: no model needed
            acts[forced] = mask[forced].argmax(axis=1)
            rows = np.flatnonzero(live & ~forced)
            if rows.size == 0:
                sim.step(acts)
                continue
            o = sim.observe(np.maximum(actor, 0))[rows]
            m = mask[rows]
            if styles is not None:
                acts[rows] = self._zoo.act_styles(o, m, styles[rows, actor[rows]])
            else:
                acts[rows] = self.net.act_batch(o, m)
            sim.step(acts)


def _register() -> None:
    """``ppo-lookahead``: the shipped bot with the lookahead, where the bot and the
    shipped distilled zoo are there."""
    from agents.policy import _SHIPPED, CHECKPOINT_DIR

    if "ppo" not in _SHIPPED or not (CHECKPOINT_DIR / f"{DEFAULT_ZOO}.pt").is_file():
        return
    register("ppo-lookahead", LookaheadAgent,
             "The trained bot ppo checked one turn ahead, the default AI opponent: its 3 most likely legal actions "
             "are each played on 16 sampled games (12 at 7 players, 8 at 8-10) to its next decision against "
             "imitations of the heuristics, and judged by its critic; "
             "another move than the network's favourite only if its value is higher by margin=0.05 "
             "(n=, top_k=, opponents=zoo|self, sure=, margin= to change).")
    _SHIPPED["ppo-lookahead"] = _SHIPPED["ppo"]  # it plays the cards its network was trained on


_register()

#: FrozenMLPs shared by every lookahead of a process, by the torch module they were read from
#: (the zoo's cached policies live as long as the process): a game of the web page seats up
#: to nine lookaheads, which would otherwise each hold their own copy of the same weights.
_FROZEN: dict = {}


def _frozen(net, kind: str):
    """``net``'s network (``kind``: "logits" or "values") as a FrozenMLP, or None where its
    layers are not ones FrozenMLP takes (torch then plays it)."""
    owner = getattr(net, "policy", net)
    key = (id(owner), kind)
    if key not in _FROZEN:
        parts = getattr(net, "sparse_parts" if kind == "logits" else "value_parts", lambda: None)()
        try:
            _FROZEN[key] = (owner, FrozenMLP(parts[0], parts[1]) if parts else None)
        except ValueError:  # layers it does not take: torch
            _FROZEN[key] = (owner, None)
    return _FROZEN[key][1]


__all__ = ["DEFAULT_ZOO", "LookaheadAgent", "OPPONENT_MODELS", "SAMPLES"]
