"""``NetworkLookahead``: a game's trained bot checked one turn ahead, for every game with a
determinized search agent (``GameAgents.search``: Black Market's ``bm-search``, The Rune
Market's ``rm-search``).

For each decision the agent

1. asks the network for its masked action scores; with one legal action, or when the
   network gives its favourite at least ``sure`` of the probability, it plays the
   network's favourite at once;
2. takes the network's ``top_k`` most likely legal actions as candidates;
3. rebuilds the game ``n`` times from its own observation with the game's search agent
   (``DeterminizedSearch._rules`` and ``_reconstruct``, ``agents/determinized.py``: the
   viewer is seat 0, the hidden cards are redrawn from what it cannot see);
4. applies every candidate to the same ``n`` copies (all candidates x copies are rows of one
   engine), then steps the rows whose seat to act is not the bot's, asking the opponent
   model with ``act_batch`` on those rows' observations, until every row is at the bot's
   next decision or finished (at most ``max_steps`` steps): ``opponents="heuristics"``
   (default) gives each other seat of each copy one of the game's heuristics
   (``agents.game_agents(game).heuristics``), drawn at random and the same for every
   candidate; ``opponents="self"`` has the network play them; the name of an agent of the
   game (``"bm-rusher"``) has that agent play every other seat (for a known opponent).
   With ``horizon="end"`` the rows go on past the bot's next decision to the game's end
   (or ``max_steps``), the bot's own later decisions the network's;
5. values each row from the bot's seat with the network's critic (``values``), or with the
   game's final reward where the game ended, and plays the candidate with the best mean if
   it beats the network's favourite by at least ``margin`` (else the favourite).

Nothing here is a game's own: the rebuilding comes from the game's search agent, the
opponents from its profile; R.I.P. Market's ``ppo-lookahead`` (``agents.ripmarket.lookahead``)
is the same method with a compiled opponent loop of its own.

>>> bot = agents.make("rm-ppo-lookahead", "rune-market", seed=0)
>>> bot.last  # candidates, the network's probabilities and the lookahead's values
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ripmarket_env.core.engine import as_int

from agents.base import BaseAgent, act_grouped, game_agents, make, make_seeded, names, register, takes_settings_of

OPPONENT_MODELS = ("heuristics", "self")
HORIZONS = ("turn", "end")
#: ``(top_k, n)`` by the table's size where they are not given: the other seats' turns to
#: play ahead grow with the table, so larger tables look at fewer candidates and copies
#: (chosen to keep a decision's 95th-percentile time near 5 ms on one core, docs/ZOO.md);
#: larger tables than listed take the last entry.
BUDGETS = {2: (3, 8), 3: (3, 6), 4: (3, 4), 5: (2, 3), 6: (2, 3)}


def whole_in(name: str, value, low: int, high: int) -> int:
    """``value`` as an int from ``low`` to ``high``, or a one-line ValueError naming ``name``
    and the range (the lookaheads' arguments)."""
    allowed = f"a whole number from {low} to {high}"
    v = as_int(value, name, allowed)
    if not low <= v <= high:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return v


def _fraction(name: str, value, low: float, high: float, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= float(value) <= high:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return float(value)


class NetworkLookahead(BaseAgent):
    """The network's ``top_k`` favourites, each played on ``n`` determinized copies of the
    game to the bot's next decision against the opponent model, judged by the critic.

    Args:
        net: a registered trained bot of ``game`` (a name) or an agent with ``logits`` and
            ``values`` (``PolicyAgent``, ``ByTableAgent``).
        game: the game id (its profile gives the search agent and the heuristics).
        top_k: the network's candidates per decision (1: the network alone); None: by
            the table's size (:data:`BUDGETS`).
        n: copies per candidate; None: by the table's size (:data:`BUDGETS`).
        budgets: ``{players: (top_k, n)}`` in place of :data:`BUDGETS` (a game's own, given
            to ``register_lookaheads`` where its turns cost more to play ahead); a key may
            also be a table key of the game (``GameSpec.table_keys``, e.g. Black Market's
            ``"4p-teams"``), which wins over its count's entry at that table.
        margin: play another candidate only when its mean value beats the favourite's by
            at least this (the values lie in [-1, 1]).
        sure: play the favourite without looking ahead when its probability is at least
            this (above 1: always look ahead).
        opponents: ``"heuristics"``, ``"self"`` (the network) or the name of an agent of
            ``game`` (it plays every other seat).
        horizon: ``"turn"``: play ahead to the bot's next decision; ``"end"``: to the
            game's end, the network deciding for the bot.
        max_steps: cap on the steps played ahead (rows short of the horizon are valued by
            the critic where they stand).
        seed: makes the agent deterministic.
    """

    name = "lookahead"

    def __init__(self, net="ppo", game: str = "ripmarket", top_k: int | None = None, n: int | None = None,
                 margin: float = 0.05, sure: float = 0.9, opponents: str = "heuristics", max_steps: int = 400,
                 seed: int | None = None, budgets: dict | None = None, horizon: str = "turn"):
        profile = game_agents(game)
        if not profile.search:
            raise ValueError(f"game {game!r} has no search agent to rebuild its games from; "
                             f"the lookahead plays games whose profile names one")
        self.top_k = None if top_k is None else whole_in("top_k", top_k, 1, 64)
        self.n = None if n is None else whole_in("n", n, 1, 4096)
        self.budgets = dict(BUDGETS if budgets is None else budgets)
        counts = [p for p in self.budgets if isinstance(p, int) and not isinstance(p, bool)]
        if not counts or not all(isinstance(v, tuple) and len(v) == 2 for v in self.budgets.values()):
            raise ValueError(f"budgets must map player counts (and table keys) to (top_k, n) pairs, "
                             f"at least one count, got {budgets!r}")
        self._table_keys = None  # the game's table_keys hook, where a budget names a table
        tables = [p for p in self.budgets if p not in counts]
        if tables:
            from agents.checkpoint import _spec_of
            from agents.policy import _resolved

            self._table_keys = _resolved(_spec_of(game).table_keys)
            bad = [p for p in tables if not isinstance(p, str)]
            if self._table_keys is None or bad:
                allowed = "" if self._table_keys is None else " or table keys (6p-ffa)"
                raise ValueError(f"budgets keys must be player counts{allowed} of {game}, got {bad or tables!r}")
        self._fallback = self.budgets[max(counts)]  # a count without an entry: the largest count's
        for p, (k, c) in self.budgets.items():
            whole_in(f"budgets[{p}] top_k", k, 1, 64), whole_in(f"budgets[{p}] n", c, 1, 4096)
        self.max_steps = whole_in("max_steps", max_steps, 1, 100_000)
        self.margin = _fraction("margin", margin, 0.0, 2.0, "a value difference from 0 to 2")
        self.sure = _fraction("sure", sure, 1e-9, 2.0, "a probability in (0, 1], or above 1 to always look ahead")
        if not isinstance(opponents, str) or (opponents not in OPPONENT_MODELS and opponents not in names(game)):
            raise ValueError(f"opponents must be one of {', '.join(OPPONENT_MODELS)} or the name of an agent of "
                             f"{game} (agents.names({game!r})), got {opponents!r}")
        if horizon not in HORIZONS:
            raise ValueError(f"horizon must be one of {', '.join(HORIZONS)}, got {horizon!r}")
        self.game, self.opponents, self.horizon = game, opponents, horizon
        self.net = make(net, game, seed=seed) if isinstance(net, str) else net
        if not (hasattr(self.net, "logits") and hasattr(self.net, "values")):
            raise ValueError(f"net={net!r} has no action scores and critic (logits, values); give a trained bot")
        self.search = make(profile.search, game, seed=seed)
        if not (hasattr(self.search, "_rules") and hasattr(self.search, "_reconstruct")):
            raise ValueError(f"{profile.search!r} does not rebuild games (_rules, _reconstruct of DeterminizedSearch)")
        self._seed = seed
        self._models: list = [self.net]
        if opponents == "heuristics":
            self._models = [make_seeded(h, 0 if seed is None else seed, game) for h in profile.zoo()]
        elif opponents != "self":
            self._models = [make_seeded(opponents, 0 if seed is None else seed, game)]
        self.reset(seed)
        self.last: dict | None = None

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        self.rng = np.random.default_rng(self._seed)
        for i, m in enumerate(self._models):
            if m is not self.net and hasattr(m, "reset"):
                m.reset(None if self._seed is None else self._seed + i)

    def budget(self, players: int, table: str | None = None) -> tuple[int, int]:
        """``(top_k, n)``: candidates and copies per candidate at a table of ``players``
        seats (``table``: its table key, whose own entry wins)."""
        top_k, n = self.budgets.get(table) or self.budgets.get(int(players), self._fallback)
        return (top_k if self.top_k is None else self.top_k), (n if self.n is None else self.n)

    # ------------------------------------------------------------------ deciding
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = np.asarray(observation, dtype=np.float32)
        legal = np.flatnonzero(np.asarray(action_mask).astype(bool))
        self.last = None
        if legal.size == 0:
            raise ValueError("no legal action in the mask")
        if legal.size == 1:
            return int(legal[0])
        z = np.asarray(self.net.logits(obs[None]), dtype=np.float64)[0][legal]
        order = np.argsort(-z, kind="stable")
        p = np.exp(z - z.max())
        p /= p.sum()
        favourite = int(legal[order[0]])
        try:
            rules = self._rules(obs)
        except ValueError:  # not a view the search's rules read: the network
            return favourite
        table = None if self._table_keys is None else str(self._table_keys(obs[None])[0])
        top_k, n = self.budget(rules.num_players, table)
        if top_k == 1 or p[order[0]] >= self.sure:
            return favourite
        cands = legal[order[:top_k]]
        try:
            q = self.lookahead(obs, cands, rules, n)
        except ValueError:  # the observation cannot be rebuilt under the search's rules: the network
            return favourite
        if q is None:
            return favourite
        self.last = {"actions": cands, "p": p[order[: cands.size]], "values": q}
        best = int(np.argmax(q))  # the first best: the network's order breaks ties
        return int(cands[best] if q[best] - q[0] >= self.margin else cands[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks)], dtype=np.int64)

    def _rules(self, obs):
        """The search's rules for the observation, paying the reward the critic estimates."""
        rules = self.search._rules(obs)
        net = self.net.network_for(rules.num_players) if hasattr(self.net, "network_for") else self.net
        mode = getattr(net, "reward_mode", None)
        if mode is not None and getattr(rules, "reward_mode", mode) != mode:
            try:
                rules = replace(rules, reward_mode=mode)
            except (TypeError, ValueError):  # a reward the table does not pay: the game's own
                pass
        return rules

    def lookahead(self, obs: np.ndarray, cands: np.ndarray, rules, n: int) -> np.ndarray | None:
        """Mean value for the bot (seat 0 of the rebuilt game of ``rules``) of each
        candidate over the same ``n`` copies; None when the rebuilt game does not offer
        every candidate."""
        P = rules.num_players
        k = cands.size
        base = self.search._reconstruct(obs, rules, n, self.rng)
        if not base.legal_mask()[:, cands].all():
            return None
        # candidate-major: rows c*n .. c*n+n-1 play candidate c (a clone shares the rebuilt
        # engine's card tables and drivers instead of building them again)
        sim = base.clone(np.tile(np.arange(n), k))
        who = np.tile(self.rng.integers(0, len(self._models), size=(n, P)), (k, 1))  # a model per seat and copy
        models = self._models
        to_end = self.horizon == "end"
        if to_end:  # the bot's own later decisions: the network's
            models = [*models, self.net]
            who[:, 0] = len(models) - 1
        sim.step(np.repeat(cands.astype(np.int64), n))
        play_on(sim, models, who, self.max_steps, stop_seat=None if to_end else 0)
        done = sim.terminated.astype(bool)
        value = np.where(done, sim.rewards()[:, 0], 0.0).astype(np.float64)
        if (~done).any():
            seen = sim.observe(np.zeros(sim.batch_size, np.int64))[~done]
            value[~done] = np.asarray(self.net.values(seen), dtype=np.float64)
        return value.reshape(k, n).mean(axis=1)


def play_on(sim, models, who: np.ndarray, max_steps: int, stop_seat: int | None = None) -> bool:
    """Play the engine's games on, seat ``q`` of row ``r`` by ``models[who[r, q]]`` (rows
    with one legal action take it without a model), until every game is over or, with
    ``stop_seat``, waits for that seat; at most ``max_steps`` steps. True when they all
    got there."""
    for step in range(max_steps + 1):
        actor = sim.current_player()
        live = actor >= 0 if stop_seat is None else (actor >= 0) & (actor != stop_seat)  # -1: finished
        if not live.any():
            return True
        if step == max_steps:
            return False
        mask = sim.legal_mask()
        acts = np.full(sim.batch_size, -1, np.int64)
        forced = live & (mask.sum(axis=1) == 1)  # one legal action: no model needed
        acts[forced] = mask[forced].argmax(axis=1)
        rows = np.flatnonzero(live & ~forced)
        if rows.size:
            o = sim.observe(np.maximum(actor, 0))[rows]
            acts[rows] = act_grouped(models, who[rows, actor[rows]], o, mask[rows])
        sim.step(acts)
    return False  # pragma: no cover - the loop returns


def register_lookaheads(game: str, bots, budgets: dict | None = None) -> None:
    """Register ``<bot>-lookahead`` for game ``game`` for each trained bot name in ``bots``
    (made when asked for: the bot need not be registered yet); ``budgets``: the game's
    ``{players: (top_k, n)}``, table keys allowed (default :data:`BUDGETS`)."""
    table = dict(BUDGETS if budgets is None else budgets)
    sizes = ", ".join(f"{k} x {n} at {p}" for p, (k, n) in sorted(table.items(), key=lambda kv: str(kv[0]).zfill(8)))
    for bot in bots:
        def factory(seed: int | None = None, _bot=bot, **kwargs):
            return NetworkLookahead(_bot, game, seed=seed, **{"budgets": table, **kwargs})

        register(f"{bot}-lookahead", takes_settings_of(factory, NetworkLookahead, "net", "game"),
                 f"The trained bot {bot} checked one turn ahead: its top_k most likely legal actions, each played on "
                 f"n copies of the game rebuilt from its view (top_k x n by players or table: {sizes}) to its next decision "
                 f"against the heuristics, judged by its critic; another move than its favourite only if better by "
                 f"margin=0.05 (top_k=, n=, margin=, sure=, opponents=heuristics|self|<agent>, horizon=turn|end "
                 f"to change).",
                 game=game)


__all__ = ["NetworkLookahead", "OPPONENT_MODELS", "HORIZONS", "BUDGETS", "register_lookaheads"]
