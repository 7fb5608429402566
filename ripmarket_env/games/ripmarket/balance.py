"""R.I.P. Market's balance analysis (its ``GameSpec.balance`` hook): which cards matter, seat
advantage, game length, Ghost swings.

``ripmarket balance --players 4,6,8 --games N`` (``eval.balance``, the same for every game)
plays, for every player count, a tournament of a zoo of agents (the heuristic styles by
default: duplicate deals, seat rotation, worker processes, seeded); this module's
``PlayRecorder`` records what happens in every game through the public Engine API and
``figures`` turns the records into the figures:

* **Cards played.** Before every step the recorder reads the decision phase and the
  chosen action: a ``card`` action in the *play* decision is a Living card played by the
  acting seat (a ``card`` action in the *replacement* choice is not a play); a ``shadow``
  action in the *Ghost* decision is a Shadow card played, and the following *victim*
  choice names the player it haunts.
* **Per Living design:** plays, share of all Living plays, the share of player-games in
  which it was played at least once, and the win rate of players who played it at least
  once vs players who did not, each with a Wilson 95% interval, and the difference.
* **Per Shadow design:** plays and share, and the win rate of the players it haunted vs
  every other player (a Ghost never wins, R-5.5, so the haunted player's fate is the
  card's effect).
* **First-seat advantage:** win rate by turn position in the first round (position 0 is
  the First Player drawn at setup, R-12.4; position k sits k seats clockwise of it).
* **Game length:** rounds per game (``state["round_num"]`` at the end) by player count.
* **Ghost swings:** the engine's ``shadow_swings`` counter, incremented in a round's
  resolution when the players that take damage before deflection (R-8.2) differ from the
  ones that would with every Shadow card's effect ignored; reported per round and as the
  share of games with at least one swing.

A win is a seat flagged in ``state["winners"]`` (co-winners included), as in the
tournament. Outputs: ``balance.md``, ``balance.json`` (every figure) and PNG plots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


from ripmarket_env.core.stats import ci_text as _ci, pct as _pct, rate as _rate, two_proportion_p  # noqa: F401
from ripmarket_env.games.ripmarket.balance_targets import targets_markdown
from ripmarket_env.games.ripmarket.events import GameLog
from ripmarket_env.games.ripmarket.state import PH_ACQUIRE

#: The player counts a balance run plays when none are given.
DEFAULT_PLAYERS = (4, 6, 8)


class PlayRecorder:
    """Tournament observer (see ``run_tournament(observer=...)``) that reads every game's
    event log (``Engine.events``, ``ripmarket_env.games.ripmarket.events.GameLog``).

    The event log holds every decision of a step, the ones the engine takes alone inside
    ``advance()`` (one legal option, marked ``forced``) included, so nothing is missed:
    Living plays (``play`` events; a replacement is not a play), Shadow plays and whom they
    haunt (``haunt``), Market acquisitions (``acquire_market``) and every resolved round
    (card on the table, Shadow cards attached, HP lost). The only figure the log cannot
    give is what the Market offered: ``before_step`` notes the Market when an agent makes
    an acquisition decision; a forced acquisition offered either nothing (it took the
    deck) or the one Market card it took.
    """

    def __init__(self, eng):
        B, P = eng.batch_size, eng.num_players
        self.P = P
        self.first_player = eng.state["first_player"].astype(np.int64).copy()
        self.logs = [GameLog(eng, g) for g in range(B)]
        self.living = [[[] for _ in range(P)] for _ in range(B)]
        self.shadow = [[[] for _ in range(P)] for _ in range(B)]
        self.haunted = [[[] for _ in range(P)] for _ in range(B)]
        self.offers: list[list[list]] = [[] for _ in range(B)]  # [seat, [designs offered], design taken or -1]
        # [seat, card or -1, [shadows], HP lost, round number]
        self.round_seats: list[list[list]] = [[] for _ in range(B)]
        self._market: list[tuple[int, list[int]] | None] = [None] * B
        for g in range(B):  # what the reset did (decisions taken before the first real one)
            self._take(g, eng.events(g))

    def before_step(self, eng, actor: np.ndarray, actions: np.ndarray) -> None:
        st = eng.state
        for g in np.flatnonzero((actor >= 0) & (st["phase"] == PH_ACQUIRE)):
            self._market[g] = (int(actor[g]), [int(d) for d in st["market"][g] if d >= 0])

    def after_step(self, eng, actor: np.ndarray) -> None:
        for g in np.flatnonzero(actor >= 0):  # a game not stepped keeps its last step's log
            self._take(int(g), eng.events(int(g)))
            self._market[g] = None

    def _take(self, g: int, events) -> None:
        for kind, item in self.logs[g].items(events):
            if kind == "round":
                for x in item.seats:
                    if x["alive"] or x["died"]:  # a living player this round
                        card = -1 if x["card"] is None else int(x["card"])
                        self.round_seats[g].append([x["seat"], card, list(x["haunted_by"]), int(x["hp_lost"]),
                                                    int(item.round)])
                continue
            ev = item
            k, q = ev.kind, ev.seat
            if k == "play":
                self.living[g][q].append(ev.a)
            elif k == "haunt":
                self.shadow[g][q].append(ev.b)
                self.haunted[g][ev.a].append(ev.b)
            elif k in ("acquire_market", "acquire_deck"):
                took = ev.a if k == "acquire_market" else -1
                seen = self._market[g]
                if not ev.forced and seen is not None and seen[0] == q:
                    self.offers[g].append([q, seen[1], took])
                    self._market[g] = None
                elif ev.forced and took >= 0:
                    self.offers[g].append([q, [took], took])

    def game_record(self, eng, g: int) -> dict[str, Any]:
        return {
            "first_player": int(self.first_player[g]),
            "shadow_swings": int(eng.state["shadow_swings"][g]),
            "living_plays": self.living[g],
            "shadow_plays": self.shadow[g],
            "haunted": self.haunted[g],
            "offers": self.offers[g],
            "round_seats": self.round_seats[g],
        }


def make_recorder(eng) -> PlayRecorder:
    return PlayRecorder(eng)


OBSERVER = f"{__name__}:make_recorder"


# ----------------------------------------------------------------------------- figures
#: A card enters the terminal's "largest differences" list only with at least this many
#: player-games on each side of the comparison; the list is ranked by significance.
MIN_SAMPLE = 30
#: Two-sided p-value under which a difference is flagged as significant (here and in ``diff``).
ALPHA = 0.05




def _compare(k1, n1, k2, n2) -> dict[str, Any]:
    a, b = _rate(k1, n1), _rate(k2, n2)
    delta = (a["rate"] - b["rate"]) if a["rate"] is not None and b["rate"] is not None else None
    return {"with": a, "without": b, "delta": delta, "p": two_proportion_p(k1, n1, k2, n2)}


def round_matched(games: Sequence[dict], P: int, n_designs: int,
                  seats: np.ndarray | None = None) -> list[dict[str, Any] | None]:
    """Per Living design, the round-matched win-rate difference: within each round number,
    the living players who had the design on the table against the living players with
    another card on the table, the differences averaged with the design's plays in that
    round as weights; a 95% interval from the per-round binomial variances. None for a design
    never on the table.

    The plain difference (played at least once vs not) also measures how long a player
    lived: a player who survives more rounds plays more cards, so a card that does nothing
    still shows a positive difference, and a card held for late rounds a larger one. Matching
    on the round compares players who were alive at the same point of the game."""
    G = len(games)
    sel = np.ones((G, P), dtype=bool) if seats is None else seats
    rows = []  # (round, design, won)
    for i, g in enumerate(games):
        for q, card, _by, _lost, *rest in g.get("round_seats", ()):
            if rest and card >= 0 and sel[i, q]:
                rows.append((rest[0], card, int(bool(g["winners"][q]))))
    out: list[dict[str, Any] | None] = [None] * n_designs
    if not rows:
        return out
    a = np.asarray(rows, dtype=np.int64)
    R, C, W = a[:, 0], a[:, 1], a[:, 2]
    for d in range(n_designs):
        on = C == d
        if not on.any():
            continue
        num = var = weight = 0.0
        for r in np.unique(R[on]):
            x, y = on & (R == r), ~on & (R == r)
            if not y.any():
                continue
            p1, n1, p0, n0 = W[x].mean(), int(x.sum()), W[y].mean(), int(y.sum())
            num += n1 * (p1 - p0)
            var += n1 * n1 * (p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0)
            weight += n1
        if weight:
            delta, se = num / weight, math.sqrt(var) / weight
            out[d] = {"delta": delta, "ci": [delta - 1.96 * se, delta + 1.96 * se], "plays": int(weight)}
    return out


def _card_tables(games: Sequence[dict], P: int, cards, seats: np.ndarray | None = None) -> dict[str, Any]:
    """The per-card figures over the player-games selected by ``seats`` (G x P bool; all by default)."""
    G = len(games)
    DL, DS = cards.n_living, cards.n_shadow
    sel = np.ones((G, P), dtype=bool) if seats is None else seats
    win = np.array([g["winners"] for g in games], dtype=bool).reshape(G, P)
    played = np.zeros((G, P, DL), dtype=np.int64)
    shadow = np.zeros((G, P, DS), dtype=np.int64)
    haunted = np.zeros((G, P, DS), dtype=np.int64)
    offered = np.zeros(DL, dtype=np.int64)
    taken = np.zeros(DL, dtype=np.int64)
    # rounds of living players: [card on the table] and [haunted by] -> rounds, rounds with an HP loss
    card_rounds = np.zeros((DL + 1, 2), dtype=np.int64)  # last row: no card on the table
    shadow_rounds = np.zeros((DS, 2), dtype=np.int64)
    all_rounds = np.zeros(2, dtype=np.int64)
    for i, g in enumerate(games):
        for p in range(P):
            if not sel[i, p]:
                continue
            for d in g["living_plays"][p]:
                played[i, p, d] += 1
            for s_ in g["shadow_plays"][p]:
                shadow[i, p, s_] += 1
            for s_ in g["haunted"][p]:
                haunted[i, p, s_] += 1
        for q, seen, took in g.get("offers", ()):
            if not sel[i, q]:
                continue
            for d in set(seen):
                offered[d] += 1
            if took >= 0:
                taken[took] += 1
        for q, card, by, lost, *_ in g.get("round_seats", ()):
            if not sel[i, q]:
                continue
            hurt = int(lost > 0)
            card_rounds[card if card >= 0 else DL] += (1, hurt)
            all_rounds += (1, hurt)
            for s_ in set(by):
                shadow_rounds[s_] += (1, hurt)
    n_sel = int(sel.sum())
    w_sel = int((win & sel).sum())
    total_living = int(played.sum())
    total_shadow = int(shadow.sum())
    living = []
    for d in range(DL):
        has = (played[:, :, d] > 0) & sel
        w_in, n_in = int((win & has).sum()), int(has.sum())
        c = _compare(w_in, n_in, w_sel - w_in, n_sel - n_in)
        r_in, h_in = (int(x) for x in card_rounds[d])
        dmg = _compare(h_in, r_in, int(all_rounds[1]) - h_in, int(all_rounds[0]) - r_in)
        living.append({
            "design": d,
            "name": cards.living[d].name,
            "plays": int(played[:, :, d].sum()),
            "play_share": played[:, :, d].sum() / total_living if total_living else 0.0,
            "player_games_played": n_in,
            "played_rate": n_in / n_sel if n_sel else 0.0,
            "win_played": c["with"],
            "win_not_played": c["without"],
            "win_delta": c["delta"],
            "win_p": c["p"],
            "market": {"offered": int(offered[d]), "taken": int(taken[d]),
                       "take_rate": _rate(int(taken[d]), int(offered[d]))},
            "damage": {"rounds": r_in, "hurt_played": dmg["with"], "hurt_other": dmg["without"],
                       "delta": dmg["delta"], "p": dmg["p"]},
        })
    shadows = []
    for s_ in range(DS):
        hit = (haunted[:, :, s_] > 0) & sel
        c = _compare(int((win & hit).sum()), int(hit.sum()), w_sel - int((win & hit).sum()), n_sel - int(hit.sum()))
        r_in, h_in = (int(x) for x in shadow_rounds[s_])
        dmg = _compare(h_in, r_in, int(all_rounds[1]) - h_in, int(all_rounds[0]) - r_in)
        shadows.append({
            "design": s_,
            "name": cards.shadow[s_].name,
            "plays": int(shadow[:, :, s_].sum()),
            "play_share": shadow[:, :, s_].sum() / total_shadow if total_shadow else 0.0,
            "haunted_player_games": int(hit.sum()),
            "win_haunted": c["with"],
            "win_not_haunted": c["without"],
            "win_delta": c["delta"],
            "win_p": c["p"],
            "damage": {"rounds": r_in, "hurt_haunted": dmg["with"], "hurt_not_haunted": dmg["without"],
                       "delta": dmg["delta"], "p": dmg["p"]},
        })
    return {"living_plays": total_living, "shadow_plays": total_shadow, "living": living, "shadow": shadows,
            "player_rounds": int(all_rounds[0]), "player_rounds_hurt": int(all_rounds[1])}


def analyze(games: Sequence[dict], players: int, cards) -> dict[str, Any]:
    """Every balance figure of one player count's games (records with the recorder's fields)."""
    P = int(players)
    G = len(games)
    win = np.array([g["winners"] for g in games], dtype=bool).reshape(G, P)
    n_win = win.sum(axis=1)
    share = np.where(n_win[:, None] > 0, win / np.maximum(n_win, 1)[:, None], 0.0)  # a shared win counts 1/k
    out = _card_tables(games, P, cards)
    for c, matched in zip(out["living"], round_matched(games, P, cards.n_living)):  # all seats only
        c["win_delta_round_matched"] = matched
    fp = np.array([g["first_player"] for g in games], dtype=np.int64)
    pos_share = np.zeros(P)
    for i in range(G):
        for p in range(P):
            pos_share[(p - fp[i]) % P] += share[i, p]
    seat_share = share.sum(axis=0)
    rounds = np.array([g["rounds"] for g in games], dtype=np.int64)
    swings = np.array([g["shadow_swings"] for g in games], dtype=np.int64)
    hist = {int(k): int(v) for k, v in zip(*np.unique(rounds, return_counts=True))} if G else {}
    by_agent = {}
    if G and all("lineup" in g for g in games):
        lineup = np.array([g["lineup"] for g in games], dtype=object).reshape(G, P)
        for name in sorted({str(x) for x in lineup.ravel()}):
            mine = lineup == name
            t = _card_tables(games, P, cards, seats=mine)
            by_agent[name] = {
                "player_games": int(mine.sum()),
                "win_share": _rate(float(share[mine].sum()), int(mine.sum())),
                "living_plays": t["living_plays"],
                "shadow_plays": t["shadow_plays"],
                "living": [{k: c[k] for k in ("design", "name", "plays", "play_share", "win_played",
                                               "win_not_played", "win_delta", "win_p", "market")}
                           for c in t["living"]],
            }
    return {
        "players": P,
        "games": G,
        "games_with_winner": int((n_win > 0).sum()),
        "games_single_winner": int((n_win == 1).sum()),
        "games_shared_win": int((n_win > 1).sum()),
        "games_no_winner": int((n_win == 0).sum()),
        "share_no_single_winner": float((n_win != 1).mean()) if G else 0.0,
        "wins": int(win.sum()),
        **out,
        "position_win": [_rate(float(pos_share[k]), G) for k in range(P)],
        "seat_win": [_rate(float(seat_share[k]), G) for k in range(P)],
        "by_agent": by_agent,
        "rounds": {
            "mean": float(rounds.mean()) if G else None,
            "median": float(np.median(rounds)) if G else None,
            "min": int(rounds.min()) if G else None,
            "max": int(rounds.max()) if G else None,
            "histogram": hist,
        },
        "ghost_swings": {
            "swings": int(swings.sum()),
            "rounds": int(rounds.sum()),
            "per_round": float(swings.sum() / rounds.sum()) if rounds.sum() else 0.0,
            "games_with_swing": int((swings > 0).sum()),
            "share_games_with_swing": float((swings > 0).mean()) if G else 0.0,
        },
    }


def top_cards(f: dict[str, Any], k: int = 5, min_sample: int = MIN_SAMPLE) -> list[dict[str, Any]]:
    """The ``k`` Living cards whose win-rate difference is most significant (smallest
    p-value, then the larger difference), among cards with at least ``min_sample``
    player-games both with and without the card."""
    ok = [c for c in f["living"] if c["win_p"] is not None
          and min(c["win_played"]["n"], c["win_not_played"]["n"]) >= min_sample]
    ok.sort(key=lambda c: (c["win_p"], -abs(c["win_delta"] or 0.0)))
    return ok[:k]


def figures(games: Sequence[dict], players: int, context: dict[str, Any]) -> dict[str, Any]:
    """The balance hook: ``analyze`` with the cards in play (``context["cards"]``, else the
    packaged cards); R.I.P. Market's figures hold the generic ones under the same names
    (``seat_win``, ``position_win``, ``by_agent``, ``rounds``)."""
    from ripmarket_env.games.ripmarket.cards.loader import default_cards

    return analyze(games, players, context.get("cards") or default_cards())


# ----------------------------------------------------------------------------- output
def _delta(x) -> str:
    return "—" if x is None else f"{100 * x:+.1f} pts"


def _p(p: float) -> str:
    return "p<0.0001" if p < 1e-4 else f"p={p:.2g}"


def _sig(x, p) -> str:
    if x is None or p is None:
        return "—"
    text = f"{100 * x:+.1f} pts ({_p(p)})"
    return f"**{text}**" if p < ALPHA else text


def markdown(result: dict[str, Any], sections=None) -> str:
    """The report (``balance.md``); ``sections``, the generic figures' renderer, is not
    needed: this report holds them."""
    s = result["settings"]
    L = [
        "# Balance report",
        "",
        f"- agents (seats drawn from this list, rotated over duplicate deals): {', '.join(s['agents'])}",
        f"- player counts: {', '.join(map(str, s['players']))}; games per count: {s['games_requested']} requested "
        "(rounded up to whole duplicate sets)",
        f"- seed: {s['seed']}; cards: {s['cards']}; run time: {result['elapsed']:.1f} s",
        *([f"- rules (instead of the defaults): {', '.join(f'{k}={v}' for k, v in s['rules'].items())}"]
          if s.get("rules") else []),
        "",
        "A card's win rate counts a player as a winner when among the winners (co-winners included); the seat "
        "and turn-position charts count a shared win as 1/k for each of k co-winners, so they sum to 100% of the "
        "games with a winner. Intervals are Wilson 95%; p is the two-sided two-proportion z-test, and a difference "
        f"with p < {ALPHA} is marked **bold**. A card's win-rate difference compares players who played it at least "
        "once in a game with players who did not; it measures association, not cause (strong players and long games "
        "play more cards). Every figure is read from the engine's event log, which includes the decisions the engine "
        "takes alone (one legal option).",
        "",
        "## Overview",
        "",
        "| players | games | mean rounds | median | min–max | Ghost swings per round | games with a swing | "
        "no single winner (shared / none) | First Player win share | fair share |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in result["by_players"]:
        r, gs = f["rounds"], f["ghost_swings"]
        L.append(
            f"| {f['players']} | {f['games']} | {r['mean']:.2f} | {r['median']:.0f} | {r['min']}–{r['max']} | "
            f"{gs['per_round']:.3f} | {_pct(gs['share_games_with_swing'])} | "
            f"{_pct(f['share_no_single_winner'])} ({f['games_shared_win']} / {f['games_no_winner']}) | "
            f"{_ci(f['position_win'][0])} | {_pct(1 / f['players'])} |"
        )
    L += [
        "",
        "Ghost swing: a round in which the players taking damage (before deflection) differ from those "
        "who would with the Shadow cards' effects ignored (engine counter `shadow_swings`).",
        "",
        "![game length](game_length.png) ![first seat](seat_position.png)",
        "",
        "## The rulebook's promises (targets, docs/BALANCE.md)",
        "",
        targets_markdown(result, result_cards(result)),
        "",
    ]
    for f in result["by_players"]:
        P = f["players"]
        L += [
            f"## {P} players",
            "",
            f"{f['games']} games, {f['living_plays']} Living plays, {f['shadow_plays']} Shadow plays.",
            "",
            f"{f['games_single_winner']} games with a single winner, {f['games_shared_win']} shared, "
            f"{f['games_no_winner']} without a winner; in {f['player_rounds']} player-rounds of living players, "
            f"{_pct(f['player_rounds_hurt'] / f['player_rounds'] if f['player_rounds'] else None)} lost HP.",
            "",
            "### Win share by turn position in the first round (0 = First Player; shared wins count 1/k)",
            "",
            "| position | win share [95% CI] |",
            "|---|---|",
        ]
        L += [f"| {k} | {_ci(w)} |" for k, w in enumerate(f["position_win"])]
        L += [
            "",
            "### Living cards",
            "",
            "Taken from the Market: how often an acquisition took the card when the Market offered it. "
            "Hurt: the share of rounds in which a living player with this card on the table lost HP, against "
            "the living players with another card (or none). Round-matched: the win rate of the living players "
            "with the card on the table against those with another card in the same round, averaged over the "
            "rounds it was played in (players who live longer play more cards, which the plain difference "
            "also measures).",
            "",
            "| card | plays | share of plays | played in % of player-games | win rate when played | win rate when not "
            "| difference (p) | round-matched difference | taken from the Market when offered | hurt with it "
            "| hurt otherwise | difference (p) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in sorted(f["living"], key=lambda c: -c["plays"]):
            m, d = c["market"], c["damage"]
            rm = c.get("win_delta_round_matched")
            rm_txt = "—" if rm is None else (f"{100 * rm['delta']:+.1f} [{100 * rm['ci'][0]:+.1f}, "
                                             f"{100 * rm['ci'][1]:+.1f}] pts")
            L.append(
                f"| {c['name']} | {c['plays']} | {_pct(c['play_share'])} | {_pct(c['played_rate'])} | "
                f"{_ci(c['win_played'])} | {_ci(c['win_not_played'])} | {_sig(c['win_delta'], c['win_p'])} | {rm_txt} | "
                f"{_ci(m['take_rate'])} of {m['offered']} | {_ci(d['hurt_played'])} | {_ci(d['hurt_other'])} | "
                f"{_sig(d['delta'], d['p'])} |"
            )
        L += [
            "",
            "### Shadow cards",
            "",
            "Hurt: the share of rounds in which a living player haunted by the card lost HP, against the "
            "living players it did not haunt.",
            "",
            "| card | plays | share of plays | haunted player-games | win rate of haunted players | of the others "
            "| difference (p) | hurt when haunted | hurt otherwise | difference (p) |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in sorted(f["shadow"], key=lambda c: -c["plays"]):
            d = c["damage"]
            L.append(
                f"| {c['name']} | {c['plays']} | {_pct(c['play_share'])} | {c['haunted_player_games']} | "
                f"{_ci(c['win_haunted'])} | {_ci(c['win_not_haunted'])} | {_sig(c['win_delta'], c['win_p'])} | "
                f"{_ci(d['hurt_haunted'])} | {_ci(d['hurt_not_haunted'])} | {_sig(d['delta'], d['p'])} |"
            )
        if f.get("by_agent"):
            L += [
                "",
                "### By agent style",
                "",
                f"Each agent's own player-games; its top cards by significance (at least {MIN_SAMPLE} "
                "player-games with and without the card).",
                "",
                "| agent | player-games | win share | most played | most significant win-rate differences |",
                "|---|---|---|---|---|",
            ]
            for name, a in f["by_agent"].items():
                most = max(a["living"], key=lambda c: c["plays"]) if a["living"] else None
                top = top_cards({"living": a["living"]}, 3)
                L.append(
                    f"| {name} | {a['player_games']} | {_ci(a['win_share'])} | "
                    f"{most['name'] + ' (' + _pct(most['play_share']) + ')' if most and most['plays'] else '—'} | "
                    f"{'; '.join(c['name'] + ' ' + _sig(c['win_delta'], c['win_p']) for c in top) or '—'} |"
                )
        L += ["", f"![cards, {P} players](cards_{P}p.png)", ""]
    return "\n".join(L) + "\n"


def result_cards(result: dict[str, Any]):
    """The card database a balance result was played with: the file its settings name while
    it is there with the run's digest, else the copy the run kept of it (``cards_copy``, set
    by ``eval.balance.load_result``: the file may have been edited since), else today's
    cards.json or a packaged edition with that digest (a run made in another checkout names
    a path that is gone here)."""
    from ripmarket_env.games.ripmarket.cards.loader import EDITIONS, CardDataError, default_cards, load_cards

    f = result["settings"].get("cards")
    digest = result["settings"].get("cards_digest")
    named = f not in (None, "packaged cards.json")
    for path in ([f] if named and (digest is None or Path(f).is_file()) else []) + [result.get("cards_copy")]:
        if path is None or not Path(path).is_file():
            continue
        try:
            db = load_cards(path)
        except CardDataError:  # edited into a file that no longer loads: the copy may
            continue
        if digest is None or db.digest == digest:
            return db
    for db in (default_cards(), *(load_cards(name) for name in EDITIONS)):
        if digest is None or db.digest == digest:
            return db
    where = (f"the card file {f} (missing or changed since, and its run folder keeps no copy of it)" if named
             else "packaged cards")
    raise ValueError(f"the run was played with {where} of digest {digest[:12]}..., which are neither "
                     f"today's cards.json nor a packaged edition ({', '.join(EDITIONS)})")


def targets(a: dict[str, Any], b: dict[str, Any] | None = None, names: tuple[str, str] = ("A", "B")) -> str:
    """The rulebook's promises measured in run ``a`` (and ``b`` beside it): ``balance targets``."""
    return targets_markdown(a, result_cards(a), (b, result_cards(b)) if b is not None else None, names)


def plots(result: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    per = result["by_players"]
    fig, ax = plt.subplots(figsize=(7, 4))
    for f in per:
        h = f["rounds"]["histogram"]
        if not h:
            continue
        xs = np.array(sorted(int(k) for k in h))
        ys = np.array([h[k] if k in h else h[str(k)] for k in xs], dtype=float) / f["games"]
        ax.plot(xs, ys, marker="o", label=f"{f['players']} players")
    ax.set_xlabel("rounds")
    ax.set_ylabel("share of games")
    ax.set_title("Game length by player count")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    p = out / "game_length.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)

    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(1, len(per))
    for i, f in enumerate(per):
        P = f["players"]
        x = np.arange(P) + (i - (len(per) - 1) / 2) * width
        rate = np.array([w["rate"] or 0.0 for w in f["position_win"]])
        lo = np.array([w["ci"][0] for w in f["position_win"]])
        hi = np.array([w["ci"][1] for w in f["position_win"]])
        ax.bar(x, rate, width, yerr=[rate - lo, hi - rate], capsize=2, label=f"{P} players")
        ax.hlines(1 / P, x[0] - width / 2, x[-1] + width / 2, colors=f"C{i}", linestyles="dotted")
    ax.set_xticks(range(max(f["players"] for f in per)))
    ax.set_xlabel("turn position in the first round (0 = First Player)")
    ax.set_ylabel("win share, shared wins as 1/k (dotted: 1 / players)")
    ax.set_title("Seat advantage (no single winner: " + ", ".join(
        f"{f['players']}p {100 * f['share_no_single_winner']:.0f}%" for f in per) + ")")
    ax.legend()
    fig.tight_layout()
    p = out / "seat_position.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)

    for f in per:
        cards = sorted(f["living"], key=lambda c: c["win_delta"] if c["win_delta"] is not None else 0.0)
        names = [c["name"] for c in cards]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, max(3.5, 0.28 * len(names) + 1.5)), sharey=True)
        y = np.arange(len(names))
        a1.barh(y, [100 * c["play_share"] for c in cards], color="C0")
        a1.set_yticks(y, names, fontsize=8)
        a1.set_xlabel("share of Living plays (%)")
        d, lo, hi = [], [], []
        for c in cards:
            a, b = c["win_played"], c["win_not_played"]
            if c["win_delta"] is None:
                d.append(0.0), lo.append(0.0), hi.append(0.0)
                continue
            # interval of the difference: independent normal approximation of both Wilson halves
            ea = (a["ci"][1] - a["ci"][0]) / 2
            eb = (b["ci"][1] - b["ci"][0]) / 2
            e = float(np.hypot(ea, eb))
            d.append(100 * c["win_delta"])
            lo.append(100 * e)
            hi.append(100 * e)
        a2.barh(y, d, xerr=[lo, hi], color=["C2" if v >= 0 else "C3" for v in d], capsize=2)
        a2.axvline(0, color="black", lw=0.8)
        a2.set_xlabel("win rate when played − when not (points, ±95%)")
        fig.suptitle(f"Living cards, {f['players']} players ({f['games']} games)")
        fig.tight_layout()
        p = out / f"cards_{f['players']}p.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths


def print_summary(result: dict[str, Any], console=None) -> None:
    """The overview as a rich table, and per player count the cards with the most
    significant win-rate differences (at least ``MIN_SAMPLE`` player-games each side)."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    t = Table(title="Balance overview")
    for col in ("players", "games", "mean rounds", "Ghost swings/round", "no single winner",
                "First Player win share", "1/players"):
        t.add_column(col, justify="right")
    for f in result["by_players"]:
        t.add_row(
            str(f["players"]), str(f["games"]), f"{f['rounds']['mean']:.2f}",
            f"{f['ghost_swings']['per_round']:.3f}", _pct(f["share_no_single_winner"]),
            _ci(f["position_win"][0]), _pct(1 / f["players"]),
        )
    console.print(t)
    for f in result["by_players"]:
        cards = top_cards(f)
        t = Table(title=f"{f['players']} players: Living cards ranked by significance of the win-rate difference "
                        f"(cards with at least {MIN_SAMPLE} player-games with and without)")
        for col in ("card", "plays", "win when played", "win when not", "difference", "p"):
            t.add_column(col, justify="right" if col != "card" else "left")
        for c in cards:
            t.add_row(c["name"], str(c["plays"]), _ci(c["win_played"]), _ci(c["win_not_played"]),
                      _delta(c["win_delta"]), _p(c["win_p"]) + (" *" if c["win_p"] < ALPHA else ""))
        if not cards:
            t.add_row("(no card has enough games yet)", "", "", "", "", "")
        console.print(t)


# ----------------------------------------------------------------------------- diff
def check_result(data: dict[str, Any], path: Path) -> None:
    """``ValueError`` unless a loaded ``balance.json`` holds R.I.P. Market's card figures."""
    for f in data["by_players"]:
        if not isinstance(f, dict) or not {"players", "living", "shadow", "living_plays"} <= set(f):
            raise ValueError(f"{path}: a 'by_players' entry lacks players/living/shadow/living_plays")
        if "market" not in (f["living"][0] if f["living"] else {}):
            raise ValueError(f"{path}: written by an older `ripmarket balance`; run it again to compare")


def _change(a: dict, b: dict) -> dict[str, Any]:
    """A rate of run A against the same rate of run B (``_rate`` dicts)."""
    p = two_proportion_p(a["wins"], a["n"], b["wins"], b["n"])
    d = (b["rate"] - a["rate"]) if a["rate"] is not None and b["rate"] is not None else None
    return {"a": a, "b": b, "change": d, "p": p, "significant": p is not None and p < ALPHA}


def diff_results(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Compare two balance runs card by card (cards matched by name, player counts by value).

    Per card and player count: the play share, the win rate when played (Living) or of
    the haunted players (Shadow) and, for Living cards, the Market take rate, each as
    A, B, the change B - A and the two-proportion p-value; ``significant`` when p < ALPHA.
    """
    fa = {f["players"]: f for f in a["by_players"]}
    fb = {f["players"]: f for f in b["by_players"]}
    common = sorted(set(fa) & set(fb))
    if not common:
        raise ValueError(f"the runs share no player count (A: {sorted(fa)}, B: {sorted(fb)})")
    out = []
    for P in common:
        A, B = fa[P], fb[P]
        row = {"players": P, "games": [A["games"], B["games"]], "living": [], "shadow": []}
        for deck, win_key in (("living", "win_played"), ("shadow", "win_haunted")):
            ca = {c["name"]: c for c in A[deck]}
            cb = {c["name"]: c for c in B[deck]}
            total = (A[f"{deck}_plays"], B[f"{deck}_plays"])
            for name in list(ca) + [n for n in cb if n not in ca]:
                x, y = ca.get(name), cb.get(name)
                entry = {"name": name, "only_in": None if x and y else ("A" if x else "B")}
                if x and y:
                    entry["play_share"] = _change(_rate(x["plays"], total[0]), _rate(y["plays"], total[1]))
                    entry["win"] = _change(x[win_key], y[win_key])
                    if deck == "living":
                        entry["market"] = _change(x["market"]["take_rate"], y["market"]["take_rate"])
                    entry["significant"] = any(
                        entry[k]["significant"] for k in ("play_share", "win", "market") if k in entry)
                row[deck].append(entry)
        out.append(row)
    return {"a": a.get("settings", {}), "b": b.get("settings", {}), "by_players": out, "alpha": ALPHA}


def _chg(c: dict) -> str:
    if c["change"] is None:
        return "—"
    text = f"{100 * c['change']:+.1f} pts ({_p(c['p'])})"
    return f"**{text}**" if c["significant"] else text


def diff_markdown(d: dict[str, Any], names: tuple[str, str] = ("A", "B")) -> str:
    L = [
        "# Balance comparison",
        "",
        f"- A: {names[0]} (cards: {d['a'].get('cards', '?')}, seed {d['a'].get('seed', '?')})",
        f"- B: {names[1]} (cards: {d['b'].get('cards', '?')}, seed {d['b'].get('seed', '?')})",
        "",
        f"Changes are B − A with the two-sided two-proportion z-test; **bold** when p < {d['alpha']}. "
        "Intervals are Wilson 95%. With many cards compared, about 1 in 20 unchanged cards is flagged by chance.",
        "",
    ]
    for row in d["by_players"]:
        L += [f"## {row['players']} players ({row['games'][0]} vs {row['games'][1]} games)", "",
              "### Living cards", "",
              "| card | play share A → B | win rate when played A | B | change | taken from the Market A | B | change |",
              "|---|---|---|---|---|---|---|---|"]
        for c in row["living"]:
            if c["only_in"]:
                L.append(f"| {c['name']} | only in {c['only_in']} | | | | | | |")
                continue
            s, w, m = c["play_share"], c["win"], c["market"]
            L.append(f"| {'⚑ ' if c['significant'] else ''}{c['name']} | {_pct(s['a']['rate'])} → {_pct(s['b']['rate'])} "
                     f"{_chg(s)} | {_ci(w['a'])} | {_ci(w['b'])} | {_chg(w)} | {_ci(m['a'])} | {_ci(m['b'])} | {_chg(m)} |")
        L += ["", "### Shadow cards", "",
              "| card | play share A → B | win rate of haunted players A | B | change |", "|---|---|---|---|---|"]
        for c in row["shadow"]:
            if c["only_in"]:
                L.append(f"| {c['name']} | only in {c['only_in']} | | | |")
                continue
            s, w = c["play_share"], c["win"]
            L.append(f"| {'⚑ ' if c['significant'] else ''}{c['name']} | {_pct(s['a']['rate'])} → {_pct(s['b']['rate'])} "
                     f"{_chg(s)} | {_ci(w['a'])} | {_ci(w['b'])} | {_chg(w)} |")
        L.append("")
    return "\n".join(L) + "\n"


def print_diff(d: dict[str, Any], console=None) -> None:
    """The significant changes per player count as rich tables."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    for row in d["by_players"]:
        t = Table(title=f"{row['players']} players: significant changes B − A (p < {d['alpha']})")
        for col in ("card", "what", "A", "B", "change", "p"):
            t.add_column(col, justify="left" if col in ("card", "what") else "right")
        n = 0
        for deck in ("living", "shadow"):
            for c in row[deck]:
                for key, what in (("play_share", "share of plays"), ("win", "win rate" if deck == "living" else
                                  "win rate of the haunted"), ("market", "taken from the Market")):
                    x = c.get(key)
                    if x and x["significant"]:
                        t.add_row(c["name"], what, _ci(x["a"]), _ci(x["b"]), _delta(x["change"]), _p(x["p"]))
                        n += 1
        if not n:
            t.add_row("(no significant change)", "", "", "", "", "")
        console.print(t)
