"""Black Market balance report (``ripmarket balance --game black-market``).

Plays heuristic games in team mode (every pairing of the given agents, duplicate deals,
seat rotation; eval/bm_match.py) per player count and reports, with 95% intervals:

* first-side advantage: how often the side that takes the first turn wins (decided games);
* game length: mean turns (and the share of games at the ``max_turns`` cap);
* per Point Card: purchase rate (copies bought per game / copies) and the win-rate delta:
  the win rate of a side that bought the card minus that of a side that did not
  (a difference of proportions, normal interval).
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def _diff_ci(w1, n1, w0, n0, z=1.96):
    if n1 == 0 or n0 == 0:
        return None, (None, None)
    p1, p0 = w1 / n1, w0 / n0
    se = math.sqrt(p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0)
    d = p1 - p0
    return d, (d - z * se, d + z * se)


def run(names, counts, games: int, seed: int = 1) -> dict:
    import agents
    from eval.bm_match import play, wilson
    from ripmarket_env.games.blackmarket import RulesConfig
    from ripmarket_env.games.blackmarket.cards import default_cards

    db = default_cards()
    pairs = list(itertools.combinations_with_replacement(names, 2)) if len(names) > 1 else [(names[0], names[0])]
    out = {"agents": names, "counts": {}}
    for P in counts:
        rules = RulesConfig(num_players=P)
        per = max(2, -(-games // len(pairs)))
        table, seeds = [], []
        for i, (a, b) in enumerate(pairs):
            A = agents.make(a, game="black-market", seed=seed + i)
            B = agents.make(b, game="black-market", seed=seed + 100 + i)
            for j in range(per):
                x, y = (A, B) if j % 2 == 0 else (B, A)
                table.append([x if q % 2 == 0 else y for q in range(P)])
                seeds.append(seed * 7919 + i * 1000 + j // 2)
        eng = play(table, rules, seeds)
        st = eng.state
        n = len(seeds)
        first_side = st["first_player"] % 2
        win0 = st["final_rewards"][:, 0] > 0
        win1 = st["final_rewards"][:, 1] > 0
        decided = win0 | win1
        first_won = np.where(first_side == 0, win0, win1) & decided
        fw, fn = int(first_won.sum()), int(decided.sum())
        owned = st["owned"][:, :P, :]  # (games, seats, designs)
        side_owned = np.stack([owned[:, 0::2].sum(axis=1), owned[:, 1::2].sum(axis=1)], axis=1)  # (g, 2, d)
        side_win = np.stack([win0, win1], axis=1)
        cards = []
        for d, c in enumerate(db.point):
            bought = side_owned[:, :, d] > 0
            w1, n1 = int((side_win & bought).sum()), int(bought.sum())
            w0, n0 = int((side_win & ~bought).sum()), int((~bought).sum())
            delta, ci = _diff_ci(w1, n1, w0, n0)
            cards.append({"card": c.name, "purchase_rate": float(side_owned[:, :, d].sum() / (n * c.copies)),
                          "win_rate_delta": delta, "delta_ci95": ci, "sides_bought": n1})
        out["counts"][P] = {
            "games": n, "first_side_win_rate": fw / max(1, fn), "first_ci95": wilson(fw, fn),
            "mean_turns": float(st["turn"].mean()), "turns_sd": float(st["turn"].std()),
            "capped_share": float((st["end_reason"] == 2).mean()), "cards": cards,
        }
    return out


def markdown(res: dict) -> str:
    lines = ["# Black Market balance", "", f"Agents: {', '.join(res['agents'])} (every pairing, team mode).", ""]
    for P, r in res["counts"].items():
        lo, hi = r["first_ci95"]
        lines += [f"## {P} players ({r['games']} games)", "",
                  f"- first side wins {r['first_side_win_rate']:.1%} of decided games (95% CI {lo:.1%}–{hi:.1%})",
                  f"- game length {r['mean_turns']:.1f} turns (sd {r['turns_sd']:.1f}); at the cap: {r['capped_share']:.1%}",
                  "", "| card | purchase rate | win-rate delta (95% CI) |", "|---|---|---|"]
        for c in r["cards"]:
            d = c["win_rate_delta"]
            ci = c["delta_ci95"]
            txt = "-" if d is None else f"{d:+.3f} ({ci[0]:+.3f} to {ci[1]:+.3f})"
            lines.append(f"| {c['card']} | {c['purchase_rate']:.2f} | {txt} |")
        lines.append("")
    return "\n".join(lines)
