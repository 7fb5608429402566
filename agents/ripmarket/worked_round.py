"""The rulebook's section 10, "A Worked Round", generated from a seeded game of the zoo.

:func:`worked_round` plays one seeded 4-player game between heuristic agents of the zoo
(each sees only its own seat), follows it with the engine's event log (``GameLog``) and
picks the first round in which a Ghost haunts a player and someone takes round damage. It
narrates that round move by move with the referee's (god) view: the table when the round
begins, every decision and its consequence in order (acquisitions, plays, choices, Shadow
cards, reveals), the final scores, who takes damage and why (``story.round_story``) and
who takes the First Player token. :func:`markdown` is the Markdown of ``docs/RULES.md``
between the markers ``<!-- worked-round:start -->`` and ``<!-- worked-round:end -->``;
``tests/test_worked_round.py`` regenerates it and fails when the committed text is stale.

It lives with the game's agents because it plays them (a game package may not).
Regenerate after a change of the rules, the cards or the zoo::

    python -m agents.ripmarket.worked_round --write docs/RULES.md
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ripmarket_env.games.ripmarket.story import round_story, rule_card, rule_text
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.events import GameLog, RoundLog
from ripmarket_env.games.ripmarket.labels import card_label, rule_label, seat_name, shadow_label

START = "<!-- worked-round:start -->"
END = "<!-- worked-round:end -->"
#: The seeded game: players, game seed and one zoo agent per seat (agent seed = seat).
PLAYERS = 4
SEED = 6
LINEUP = ("greedy", "trickster", "survivor", "hoarder")

#: Events that are bookkeeping of the log, not moves or consequences worth a line.
_SKIP = {"round_start", "resolve", "place"}


def _snapshot(eng: Engine) -> dict:
    r = eng.state[0]
    db = eng.cards
    P = eng.num_players

    def living(row) -> list[str]:
        return [card_label(db, d) for d in range(db.n_living) for _ in range(int(row[d]))]

    def shadows(row) -> list[str]:
        return [shadow_label(db, d) for d in range(db.n_shadow) for _ in range(int(row[d]))]

    return {
        "hp": [int(x) for x in r["hp"][:P]],
        "alive": [bool(x) for x in r["alive"][:P]],
        "hand": [living(r["hand"][q]) for q in range(P)],
        "shadow": [shadows(r["shadow_hand"][q]) for q in range(P)],
        "market": [card_label(db, int(d)) if d >= 0 else "(empty)" for d in r["market"][: eng.rules.market]],
        "deck": int(r["deck_n"]),
        "first_player": int(r["first_player"]),
    }


def _interesting(log: RoundLog) -> bool:
    kinds = {e.kind for e in log.events}
    return "haunt" in kinds and any(x["damage"] for x in log.seats)


def worked_round(players: int = PLAYERS, seed: int = SEED, lineup=LINEUP) -> tuple[RoundLog, dict, Engine, list]:
    """Play the seeded zoo game; return (the chosen round, the table when it began, the
    engine, the lineup). The first round with a haunt and round damage is chosen, else the
    first round with damage."""
    import agents

    eng = Engine(RulesConfig(num_players=players), batch_size=1)
    eng.reset([seed])
    bots = [agents.make(lineup[q % len(lineup)], seed=q) for q in range(players)]
    log = GameLog(eng, 0)
    log.feed(eng.events(0))
    snap = _snapshot(eng)
    fallback = None
    while not eng.terminated[0]:
        p = int(eng.current_player()[0])
        a = bots[p].act(eng.observe([p])[0], eng.legal_mask()[0])
        eng.step(np.array([a], dtype=np.int64))
        done = log.feed(eng.events(0))
        for rl in done:
            if _interesting(rl):
                return rl, snap, eng, [lineup[q % len(lineup)] for q in range(players)]
            if fallback is None and any(x["damage"] for x in rl.seats):
                fallback = (rl, snap)
        if done:
            snap = _snapshot(eng)
    if fallback is None:
        raise RuntimeError(f"the seeded game (players={players}, seed={seed}) has no round with damage")
    return fallback[0], fallback[1], eng, [lineup[q % len(lineup)] for q in range(players)]


def markdown(players: int = PLAYERS, seed: int = SEED, lineup=LINEUP) -> str:
    """The worked round as Markdown (the text between the markers in docs/RULES.md)."""
    rl, snap, eng, names = worked_round(players, seed, lineup)
    db = eng.cards
    P = players
    L = [
        f"A round of a real game, generated from the seeded zoo game of `agents/ripmarket/worked_round.py` "
        f"({P} players, game seed {seed}, agents {', '.join(f'{seat_name(q)} {names[q]}' for q in range(P))}; "
        "each agent sees only its own seat). It is the game's round "
        f"{rl.round}, the first in which a Ghost haunts a player and someone takes round damage. Everything "
        "is shown as the referee sees it, hidden hands included; the other players see only what R-12.3 "
        "allows. Regenerate it with `python -m agents.ripmarket.worked_round --write docs/RULES.md` "
        "(`tests/test_worked_round.py` fails when this text is stale).",
        "",
        f"**The table when round {rl.round} begins** (Market: {', '.join(snap['market'])}; "
        f"{snap['deck']} cards in the Living Deck; {seat_name(snap['first_player'])} holds the First Player "
        "token and acts first, then clockwise):",
        "",
        "| seat | agent | HP | hand (hidden from the others) |",
        "|---|---|---|---|",
    ]
    for q in range(P):
        if snap["alive"][q]:
            hand = ", ".join(snap["hand"][q]) or "(empty)"
            L.append(f"| {seat_name(q)} | {names[q]} | {snap['hp'][q]} | {hand} |")
        else:
            held = ", ".join(snap["shadow"][q]) or "no Shadow card"
            L.append(f"| {seat_name(q)} | {names[q]} | Ghost | Shadow hand: {held} |")
    L += ["", "**Every move, in order** (the engine's event log, R-7.4; \"(only choice)\" marks a decision "
          "the engine took because it had one legal option, R-12.1, which only that seat is told):", ""]
    n = 0
    for e in rl.events:
        if e.kind in _SKIP:
            continue
        n += 1
        L.append(f"{n}. {e.text_for('god')}")
    rule = rule_label(rl.rule)
    card = rule_card(rl.events, db) if rule != "none" else None
    L += ["", f"**The rule this round:** {rule_text(rule, card)}.", ""]
    L += ["**Why the round ended as it did** (scores R-7, damage R-8.2, Deflection R-8.3, Shadow cards "
          "R-2.22, R-2.23):", ""]
    seats = [dict(x, haunted_by=[shadow_label(db, s) for s in x["haunted_by"]],
                  haunted_by_designs=list(x["haunted_by"])) for x in rl.seats]

    class _Summary:
        pass

    s = _Summary()
    s.seats, s.events, s.rule = seats, rl.events, rule
    for line in round_story(s, db, seat_name):
        L.append(f"- {line['text']}")
    L.append(f"- {seat_name(rl.first_player)} holds the First Player token for the next round (R-8.6).")
    L += ["", "**After the round:** " + "; ".join(
        f"{seat_name(x['seat'])} " + (f"{x['hp']} HP" if x["alive"] else ("dies and becomes a Ghost" if x["died"]
                                                                        else "Ghost"))
        for x in rl.seats) + "."]
    return "\n".join(L) + "\n"


def splice(doc: str, body: str) -> str:
    """``doc`` with the text between the markers replaced by ``body``."""
    if START not in doc or END not in doc:
        raise ValueError(f"the document has no {START} ... {END} section to fill")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{body}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2 or argv[0] not in ("--write", "--check"):
        print("usage: python -m agents.ripmarket.worked_round --write|--check docs/RULES.md", file=sys.stderr)
        return 2
    path = Path(argv[1])
    doc = path.read_text(encoding="utf-8")
    new = splice(doc, markdown())
    if argv[0] == "--check":
        if new != doc:
            print(f"{path}: the worked round is stale; regenerate it with --write", file=sys.stderr)
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    print(f"wrote the worked round into {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
