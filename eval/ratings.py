"""Tournament figures: OpenSkill ratings, win rates with Wilson intervals, placements, head-to-head.

Ratings. OpenSkill's Plackett-Luce model (``openskill.models.PlackettLuce``, default
mu = 25, sigma = 25/3) is updated once per game, games in index order, from the game's
finishing order: every seat is its own one-player team and its rank is its ``place``
(1 + seats strictly ahead), so seats that finished together (co-winners, simultaneous
deaths) get equal ranks, i.e. a tie.

Several seats held by the same agent. Each such seat is a separate team carrying the
agent's *current* (pre-game) rating, so the game is rated as if the agent had several
independent entrants. The agent's rating then takes every seat's evidence: its mu moves
by the *sum* of its seats' mu changes (each seat is one observation of the agent; the
comparisons between its own seats move its entrants by opposite amounts and largely
cancel), and its variance is multiplied by the product of its seats' variance ratios
(``sigma_new^2 = sigma^2 * prod(sigma_seat^2 / sigma^2)``), the same shrinkage as
rating the seats one after another. With one seat per agent this is exactly OpenSkill's
own update. ``ordinal`` is the conservative estimate mu - 3 sigma.

Teams. A game whose record has ``teams`` (the side of each seat: Black Market's team
mode) is rated with OpenSkill's team support: one team per side, holding one entrant per
seat of that side (each at its agent's current rating), ranked by the side's place
(``model.rate([[r0, r2], [r1, r3]], ranks=...)``). OpenSkill rates a team by the sum of
its members, so the sides stay the same size even when one agent holds two seats of a
side; each entrant's update is folded into its agent as above. Teammates never count
against each other: the head-to-head and ``versus`` figures skip pairs of seats on one
side.

Order. A sequential update weighs later games more, so one pass depends on the order of
the games: on a 2,004-game tournament an agent's ordinal moved by up to 6 points between
shuffled orders, against a sigma of 1.8. ``rate_games_averaged`` (what reports use) rates
``ORDERS`` seeded random orders of the same games and reports the mean mu, a sigma that
adds the spread of mu across orders to the mean variance
(``sigma^2 = mean(sigma_k^2) + var(mu_k)``), their ordinal, and ``mu_spread``
(the standard deviation of mu across orders).

Win rate. Per seat-game: a seat's game is a win when the seat is among the winners
(a shared win of R-9.2, or the living of a ``max_rounds`` draw, counts as a win; shared
wins are also counted separately). In team games a win is shared when both sides won (a
tie), not because a side has several seats. The 95% interval is Wilson's score interval.

Placement. Mean of the seat's ``placement`` (1 = first; tied seats get the average of the
places they span, as in R-11.2), together with the mean reward (``Engine.rewards()``).

Head-to-head. ``h2h[A][B]`` = P(A finishes ahead of B | both at the table), counted over
every pair of seats (one held by A, one by B, A != B) of every game: ahead counts 1, a tie
(same placement) counts 1/2. So ``h2h[A][B] + h2h[B][A] = 1`` wherever they met; the
diagonal (an agent against its own copies) is left undefined (None / NaN).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ripmarket_env.core.stats import Z95, wilson_interval  # noqa: F401  (the zoo's Wilson interval)


def make_model():
    from openskill.models import PlackettLuce

    return PlackettLuce()


def rate_games(games: Sequence[dict], agent_names: Sequence[str], model=None) -> dict[str, dict[str, float]]:
    """OpenSkill ratings ``{name: {"mu", "sigma", "ordinal"}}`` after all ``games``.

    Each game needs ``lineup`` (agent name per seat) and ``place`` (per seat, equal for ties);
    with ``teams`` (side per seat) each side is one OpenSkill team (module docstring).
    """
    model = model if model is not None else make_model()
    ratings = {n: model.rating(name=n) for n in agent_names}
    for g in games:
        lineup = list(g["lineup"])
        place = [int(x) for x in g["place"]]
        groups = team_groups(g)
        teams = [[model.rating(mu=ratings[lineup[s]].mu, sigma=ratings[lineup[s]].sigma, name=lineup[s])
                  for s in grp] for grp in groups]
        new = model.rate(teams, ranks=[min(place[s] for s in grp) for grp in groups])
        dmu: dict[str, float] = {}
        vfac: dict[str, float] = {}
        for grp, team in zip(groups, new):
            for s, member in zip(grp, team):
                a = lineup[s]
                old = ratings[a]
                dmu[a] = dmu.get(a, 0.0) + (member.mu - old.mu)
                vfac[a] = vfac.get(a, 1.0) * (member.sigma ** 2 / old.sigma ** 2)
        for a in dmu:
            old = ratings[a]
            ratings[a] = model.rating(mu=old.mu + dmu[a], sigma=old.sigma * math.sqrt(vfac[a]), name=a)
    return {
        n: {"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.mu - 3.0 * r.sigma)}
        for n, r in ratings.items()
    }


def team_groups(game: dict) -> list[list[int]]:
    """The seats of each OpenSkill team of a game record: one list per side (in side order)
    when it has ``teams``, else every seat alone."""
    teams = game.get("teams")
    if teams is None:
        return [[s] for s in range(len(game["lineup"]))]
    return [[s for s, t in enumerate(teams) if t == side] for side in sorted(set(teams))]


def winning_teams(game: dict) -> int:
    """How many teams (sides, or seats without sides) of a game record won: more than one
    is a shared win (a tie of the sides in team mode)."""
    return sum(1 for grp in team_groups(game) if any(game["winners"][s] for s in grp))


def _teammates(game: dict, s: int, t: int) -> bool:
    teams = game.get("teams")
    return teams is not None and teams[s] == teams[t]


ORDERS = 16


def rate_games_averaged(games: Sequence[dict], agent_names: Sequence[str], orders: int = ORDERS,
                        seed: int = 0) -> dict[str, dict[str, float]]:
    """``rate_games`` over ``orders`` seeded shuffles of ``games``, combined (module docstring)."""
    # canonical order first, so the result depends on the set of games only
    games = sorted(games, key=lambda g: (list(g["lineup"]), [int(x) for x in g["place"]]))
    rng = np.random.default_rng(seed)
    runs = [rate_games([games[i] for i in rng.permutation(len(games))], agent_names) for _ in range(orders)]
    out = {}
    for n in agent_names:
        mus = np.array([r[n]["mu"] for r in runs])
        var = float(np.mean([r[n]["sigma"] ** 2 for r in runs]) + mus.var())
        mu, sigma = float(mus.mean()), math.sqrt(var)
        out[n] = {"mu": mu, "sigma": sigma, "ordinal": mu - 3.0 * sigma, "mu_spread": float(mus.std())}
    return out


def head_to_head(games: Sequence[dict], agent_names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(prob, pairs)``: prob[i, j] = P(agent i ahead of agent j | both seated); pairs = seat pairs seen."""
    idx = {n: i for i, n in enumerate(agent_names)}
    A = len(agent_names)
    ahead = np.zeros((A, A))
    pairs = np.zeros((A, A), dtype=np.int64)
    for g in games:
        seats = [idx[a] for a in g["lineup"]]
        pl = g["placement"]
        P = len(seats)
        for s in range(P):
            for t in range(P):
                i, j = seats[s], seats[t]
                if s == t or i == j or _teammates(g, s, t):
                    continue
                pairs[i, j] += 1
                if pl[s] < pl[t]:
                    ahead[i, j] += 1.0
                elif pl[s] == pl[t]:
                    ahead[i, j] += 0.5
    with np.errstate(invalid="ignore", divide="ignore"):
        prob = np.where(pairs > 0, ahead / np.maximum(pairs, 1), np.nan)
    np.fill_diagonal(prob, np.nan)
    return prob, pairs


def agent_stats(games: Sequence[dict], agent_names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per agent: seat-games, games present, wins (shared wins counted), win rate + Wilson 95%,
    mean placement, mean reward."""
    stats = {
        n: {"seat_games": 0, "games_present": 0, "wins": 0, "shared_wins": 0, "placement_sum": 0.0, "reward_sum": 0.0}
        for n in agent_names
    }
    for g in games:
        k = winning_teams(g)
        for a in set(g["lineup"]):
            stats[a]["games_present"] += 1
        for s, a in enumerate(g["lineup"]):
            st = stats[a]
            st["seat_games"] += 1
            if g["winners"][s]:
                st["wins"] += 1
                if k > 1:
                    st["shared_wins"] += 1
            st["placement_sum"] += float(g["placement"][s])
            st["reward_sum"] += float(g["rewards"][s])
    out = {}
    for n, st in stats.items():
        m = st["seat_games"]
        lo, hi = wilson_interval(st["wins"], m)
        out[n] = {
            "seat_games": m,
            "games_present": st["games_present"],
            "wins": st["wins"],
            "shared_wins": st["shared_wins"],
            "win_rate": st["wins"] / m if m else float("nan"),
            "win_rate_lo": lo,
            "win_rate_hi": hi,
            "mean_placement": st["placement_sum"] / m if m else float("nan"),
            "mean_reward": st["reward_sum"] / m if m else float("nan"),
        }
    return out


def summarize(games: Sequence[dict], agent_names: Sequence[str]) -> dict[str, Any]:
    """Every figure of a tournament (JSON-ready apart from NaN in the matrices)."""
    names = list(agent_names)
    ratings = rate_games_averaged(games, names)
    stats = agent_stats(games, names)
    prob, pairs = head_to_head(games, names)
    agents = {n: {**ratings[n], **stats[n]} for n in names}
    leaderboard = sorted(names, key=lambda n: (-agents[n]["ordinal"], n))
    rounds = np.array([g["rounds"] for g in games], dtype=np.float64)
    steps = np.array([g["steps"] for g in games], dtype=np.float64)
    return {
        "agents": agents,
        "leaderboard": leaderboard,
        "head_to_head": {
            "agents": names,
            "prob_ahead": [[None if not np.isfinite(x) else float(x) for x in row] for row in prob],
            "pairs": pairs.tolist(),
        },
        "game_length": {
            "rounds_mean": float(rounds.mean()) if rounds.size else float("nan"),
            "rounds_min": int(rounds.min()) if rounds.size else 0,
            "rounds_max": int(rounds.max()) if rounds.size else 0,
            "rounds_histogram": {str(int(k)): int(v) for k, v in zip(*np.unique(rounds, return_counts=True))},
            "steps_mean": float(steps.mean()) if steps.size else float("nan"),
        },
        "shared_win_games": int(sum(1 for g in games if winning_teams(g) > 1)),
        "leader_vs_runner_up": _lead(agents, leaderboard, games) if len(leaderboard) > 1 else None,
    }


def _lead(agents: dict[str, dict], leaderboard: Sequence[str], games: Sequence[dict]) -> dict[str, Any]:
    """``versus`` of the first two by ordinal, with the first's lead in ordinal points
    (``ordinal_lead``), the two agents' sigmas added (``sigmas_added``) and whether the lead
    is the larger (``lead_beyond_sigmas``): a first place that the ratings' own uncertainty
    cannot undo."""
    a, b = leaderboard[0], leaderboard[1]
    lead = agents[a]["ordinal"] - agents[b]["ordinal"]
    both = agents[a]["sigma"] + agents[b]["sigma"]
    return {**versus(games, a, b), "ordinal_lead": float(lead), "sigmas_added": float(both),
            "lead_beyond_sigmas": bool(lead > both)}


def versus(games: Sequence[dict], a: str, b: str) -> dict[str, Any]:
    """Agent ``a`` against agent ``b`` over the games where both hold a seat: each one's win
    rate in those games (per seat-game, Wilson 95%), and how often a seat of ``a`` finished
    ahead of a seat of ``b`` (per seat pair, ties count one half, Wilson 95% on the pairs)."""
    both = [g for g in games if a in g["lineup"] and b in g["lineup"]]
    out: dict[str, Any] = {"agents": [a, b], "games": len(both)}
    for name in (a, b):
        seats = [(g, s) for g in both for s, n in enumerate(g["lineup"]) if n == name]
        wins = sum(1 for g, s in seats if g["winners"][s])
        lo, hi = wilson_interval(wins, len(seats))
        out[name] = {"seat_games": len(seats), "wins": wins,
                     "win_rate": wins / len(seats) if seats else None, "win_ci": [lo, hi]}
    ahead = pairs = 0.0
    for g in both:
        pl = g["placement"]
        for s, n in enumerate(g["lineup"]):
            if n != a:
                continue
            for t, m in enumerate(g["lineup"]):
                if m != b or _teammates(g, s, t):
                    continue
                pairs += 1
                ahead += 1.0 if pl[s] < pl[t] else (0.5 if pl[s] == pl[t] else 0.0)
    lo, hi = wilson_interval(ahead, pairs)
    out["pairs"] = int(pairs)
    out["prob_ahead"] = ahead / pairs if pairs else None
    out["prob_ahead_ci"] = [lo, hi]
    return out
