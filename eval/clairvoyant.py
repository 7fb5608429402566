"""A look that sees the whole table: how much could a lookahead gain from knowing the
hidden cards? An analysis for every game, not an agent: it reads the table's engine, so it
plays in no zoo, tournament, server or env (agents decide from their own seat's
observation; this deliberately does not).

``clairvoyant_match(bot, opponent, ...)`` plays ``eval.match``'s duplicate deals (seats
rotated) of a network bot (an agent with ``logits``, e.g. a game's trained ``<bot>``)
against tables of ``opponent``. At each of the bot's decisions with two or more legal
actions where the network's favourite has a probability under ``sure``, it takes the
network's ``top_k`` favourites and plays each on ``n`` copies of the true game (every
hidden card and the deck order as they are) to the game's end: the bot's seats (its side's,
in a game of sides) by the network, the other seats by another instance of ``opponent``
(the true opponent model). The copies reseed the game's random stream (dice, and whatever
else the rules draw as play goes on: what nobody at the table can know yet) with the same
``n`` seeds for every candidate (common random numbers), so candidates differ by their move
only; ``n=0`` plays one copy on the game's own stream, which sees the future draws too (a
reference, not a bound). The candidate with the best mean final reward of the bot's seat is
played (the network's order breaks ties).

    python -m eval.clairvoyant bm-ppo --game black-market --players 4 --mode ffa \\
        --against bm-rusher --games 400 --top-k 8 --copies 16 --sure 0.9 --seed 51 --look-seed 99
"""

from __future__ import annotations

import numpy as np

from agents.base import DEFAULT_GAME, act_grouped
from agents.lookahead import play_on
from eval.arena import Observer


class ClairvoyantLook(Observer):
    """The arena's observer (it keeps the table's engine) and ``decide`` (the look at the
    bot's rows, every other row as ``agents.base.act_grouped`` decides it)."""

    def __init__(self, bot, model, sides, top_k: int = 8, n: int = 16, sure: float = 0.9,
                 max_steps: int = 100_000, seed: int = 0):
        if not callable(getattr(bot, "logits", None)):
            raise ValueError(f"the clairvoyant look needs a network bot (an agent with logits), got {type(bot).__name__}")
        if int(top_k) < 1 or int(n) < 0:
            raise ValueError(f"top_k must be >= 1 and n >= 0, got top_k={top_k}, n={n}")
        self.bot, self.model = bot, model
        self.sides = None if sides is None else np.asarray(sides, np.int64)
        self.top_k, self.n, self.sure, self.max_steps = int(top_k), int(n), float(sure), int(max_steps)
        self.reps = max(self.n, 1)  # copies per candidate
        self.rng = np.random.default_rng(seed)
        self.engine = None
        self.looks = 0  # decisions where the look chose among candidates

    def on_start(self, engine) -> None:
        if "rng" not in (engine.state.dtype.names or ()):
            raise ValueError("the clairvoyant look reseeds the state's 'rng' field; this game's state has none")
        self.engine = engine

    def decide(self, pool, who, observations, action_masks) -> np.ndarray:
        acts = act_grouped(pool, who, observations, action_masks)
        mine = next(i for i, agent in enumerate(pool) if agent is self.bot)
        actor = self.engine.current_player()
        for g in np.flatnonzero(who == mine):
            legal = np.flatnonzero(action_masks[g])
            if legal.size < 2:
                continue
            z = np.asarray(self.bot.logits(np.asarray(observations[g:g + 1], np.float32)), np.float64)[0][legal]
            order = np.argsort(-z, kind="stable")
            p = np.exp(z - z.max())
            if p[order[0]] / p.sum() >= self.sure:
                continue
            cands = legal[order[: self.top_k]]
            if cands.size < 2:
                continue
            q = self.values(g, int(actor[g]), cands)
            acts[g] = cands[int(np.argmax(q))]
            self.looks += 1
        return acts

    def copies(self, game: int, cands: np.ndarray):
        """Clones of the table's game ``game``, ``n`` per candidate (candidate-major rows:
        row ``c * n + j`` is copy ``j`` of candidate ``c``), copy ``j`` on the same new
        random stream for every candidate (``n=0``: one copy on the game's own stream)."""
        sim = self.engine.clone(np.full(cands.size * self.reps, game))
        if self.n > 0:
            seeds = self.rng.integers(1, 2**63, size=self.reps, dtype=np.int64)
            sim.state["rng"] = np.tile(seeds, cands.size).astype(sim.state["rng"].dtype)
        return sim

    def values(self, game: int, seat: int, cands: np.ndarray) -> np.ndarray:
        """Mean final reward of ``seat`` for each candidate over the copies of the table's
        game ``game`` (never the table's own engine: the copies are clones)."""
        sim = self.copies(game, cands)
        sim.step(np.repeat(cands.astype(np.int64), self.reps))
        ours = (self.sides == self.sides[seat]) if self.sides is not None else (np.arange(sim.num_players) == seat)
        who = np.broadcast_to(ours.astype(np.int64), (sim.batch_size, sim.num_players))  # 1: the bot
        if not play_on(sim, [self.model, self.bot], who, self.max_steps):
            raise RuntimeError(f"a copy did not end within {self.max_steps} steps")
        return sim.rewards()[:, seat].reshape(cands.size, self.reps).mean(axis=1)  # in the rewards' own dtype


def clairvoyant_match(bot: str, opponent: str, games: int = 400, num_players: int = 2, seed: int = 0,
                      game: str = DEFAULT_GAME, top_k: int = 8, n: int = 16, sure: float = 0.9, look_seed: int = 0,
                      **rules) -> dict:
    """``eval.match.match`` of the bot under the clairvoyant look against tables of
    ``opponent`` (agent names of ``game``; ``look_seed`` seeds the copies' new random
    streams); the match's figures plus ``looks`` (decisions the look chose among
    candidates)."""
    from agents.base import make_seeded
    from eval.match import match
    from eval.tournament import sides_of
    from ripmarket_env.games import get

    spec = get(game)
    table = spec.make_rules(num_players, **rules)
    a = make_seeded(bot, 1, game)
    look = ClairvoyantLook(a, make_seeded(opponent, 0, game), sides_of(spec, table), top_k=top_k, n=n, sure=sure,
                           max_steps=int(spec.max_decisions(table)) + 1, seed=look_seed)
    res = match(a, make_seeded(opponent, 7, game), games=games, num_players=num_players, seed=seed,
                game=game, decide=look.decide, observers=[look], **rules)
    res["looks"] = look.looks
    return res


def main(argv=None) -> None:
    import argparse
    import json

    from eval.match import add_match_arguments

    ap = argparse.ArgumentParser(description="A network bot under a look that sees every hidden card, against "
                                             "tables of one opponent (an analysis, not an agent).")
    ap.add_argument("bot", help="a network agent of the game (e.g. its trained bot)")
    add_match_arguments(ap, games=400, seed=51)
    ap.add_argument("--against", required=True, help="the opponent at every other seat (and the look's model)")
    ap.add_argument("--top-k", type=int, default=8, help="candidates: the network's favourites (default 8)")
    ap.add_argument("--copies", type=int, default=16,
                    help="copies per candidate, each with a new random stream; 0: one copy on the game's own")
    ap.add_argument("--sure", type=float, default=0.9,
                    help="no look where the network's favourite has at least this probability (above 1: always)")
    ap.add_argument("--look-seed", type=int, default=0, help="seeds the copies' new random streams")
    args = ap.parse_args(argv)
    rules = {"mode": args.mode} if args.mode else {}
    try:
        res = clairvoyant_match(args.bot, args.against, games=args.games, num_players=args.players, seed=args.seed,
                                game=args.game, top_k=args.top_k, n=args.copies, sure=args.sure,
                                look_seed=args.look_seed, **rules)
    except (ValueError, KeyError, OSError) as exc:
        ap.error(str(exc.args[0] if isinstance(exc, KeyError) else exc))
    for k in ("outcomes", "a_first", "engine"):
        res.pop(k, None)
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
