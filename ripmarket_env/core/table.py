"""The table description: one game as one seat may see it, as plain JSON-able data.

A game's ``GameSpec.table`` hook (``games/<pkg>/table.py``) describes its table for one
viewer, the way boardgame.io lets a game give its board: the terminal game, the web page
and any other front end draw every game from this one description instead of reading the
game's state. ``describe(spec, engine, g, viewer, history)`` calls the hook, or builds the
generic description below from the spec alone (its text render, action names, rewards and
outcome) for a game that gives none, so a game that only registers still plays.

The description (every key always present; the hook fills what its game has)::

    {"game": id, "title": str, "players": P, "viewer": seat,
     "turn": int | None, "turn_word": "round" | "turn" | ...,   # the current span of play
     "over": bool, "actor": seat (-1 when over), "phase": str,
     "prompt": str,            # what the deciding seat is asked, in the viewer's words ("" if not the viewer)
     "seats": [{"seat": q, "name": str, "counters": {label: int | str},   # public: HP, points, Runes, hand size
                "flags": [str], "deciding": bool, "you": bool}],          # flags: Ghost, side A, first player
     "table": [{"name": str, "cards": [{"slot": int | None, "text": str}]}],  # public cards: market, map
     "info": [str],            # other public facts, one line each (decks, active rule, dice)
     "hand": [{"name": str, "count": int, "text": str, "zone": str}],  # the viewer's own cards
     "choices": [{"action": a, "text": str,  # the viewer's legal decisions (empty unless it decides)
                  "refs": [{"zone": str, "slot": int}],  # optional: the cards the choice names, by
                                                         # table zone name and slot ("hand": index in hand)
                  "told": str}],  # optional: the choice as what you did ("let the attack through"),
                                  # for the line that tells you a one-option decision was taken for you
     "standings": None | [{"seat", "name", "place", "winner", "how"}],  # when over, best place first
     "end": str,               # how the game ended ("" while it goes on)
     "extra": {}}              # the game's own public data for its page plugin (GameSpec.web)

It must reveal nothing ``viewer`` may not see: ``spec.scramble_hidden`` of the other seats
leaves every seat's description unchanged (``tests/test_table.py``, for every game).
``history``: the game's events so far (the ``Event`` objects of every step, optional); a
hook may read their public side (e.g. how a seat was eliminated) for the standings.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["describe", "event_lines", "generic_table", "ordinal", "places", "seat_rows", "standings"]


def event_lines(engine, events, viewer: int, label) -> list[dict]:
    """The default story (``GameSpec.story``): one line per event, as ``viewer`` reads it."""
    out = []
    for e in events:
        text = e.text_for(viewer)
        if text:
            out.append({"seat": int(e.seat), "who": label(e.seat) if e.seat >= 0 else "the table",
                        "kind": e.kind, "text": text, "minor": False,
                        "turn": getattr(e, "turn", getattr(e, "round", None))})
    return out


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def places(spec, engine, g: int) -> tuple[list[bool], list[int]]:
    """(winner, place) per seat of finished game ``g``: the game's ``extras["outcome"]``
    hook, else by final reward (equal rewards share a place; the winners are the game's
    ``winners`` field, or the seats of the top reward for a game without one)."""
    P = engine.num_players
    outcome = spec.extras.get("outcome")
    if outcome is not None:
        winners, place = outcome(engine)
        return [bool(x) for x in winners[g][:P]], [int(x) for x in place[g][:P]]
    rewards = [float(x) for x in engine.state[g]["final_rewards"][:P]]
    if "winners" in engine.state.dtype.names:
        won = [bool(x) for x in engine.state[g]["winners"][:P]]
    else:
        won = [x == max(rewards) for x in rewards]
    return won, [1 + sum(1 for y in rewards if y > x) for x in rewards]


def standings(spec, engine, g: int, name, how=lambda q: "", ranked=None) -> list[dict]:
    """The end screen's rows, best place first: ``{"seat", "name", "place", "place_text",
    "winner", "how"}``; ``how(q)``: how seat q lost or finished, in words; ``ranked``:
    (winner, place) per seat when the game ranks its seats itself (default: ``places``)."""
    won, place = ranked or places(spec, engine, g)
    rows = []
    for q in range(engine.num_players):
        shared = place.count(place[q]) > 1
        rows.append({"seat": q, "name": name(q), "place": place[q],
                     "place_text": ordinal(place[q]) + (" (shared)" if shared else ""),
                     "winner": won[q], "how": how(q)})
    rows.sort(key=lambda x: (x["place"], x["seat"]))
    return rows


def seat_rows(engine, g: int, viewer, name, counters=lambda q: {}, flags=lambda q: []) -> list[dict]:
    r = engine.state[g]
    done = bool(r["done"])
    return [{"seat": q, "name": name(q), "counters": counters(q), "flags": list(flags(q)),
             "deciding": not done and int(r["actor"]) == q, "you": viewer is not None and q == viewer}
            for q in range(engine.num_players)]


def base(spec, engine, g: int, viewer) -> dict:
    """The keys every description has, filled from the spec and the state's public face."""
    r = engine.state[g]
    done = bool(r["done"])
    actor = -1 if done else int(r["actor"])
    phases = list(spec.phase_names)
    ph = int(r["phase"])
    names = spec.action_names(engine) if (not done and viewer is not None and actor == viewer) else []
    return {
        "game": spec.id, "title": spec.title, "players": int(engine.num_players),
        "viewer": None if viewer is None else int(viewer),
        "turn": None, "turn_word": "turn", "over": done, "actor": actor,
        "phase": "game_over" if done else (phases[ph] if 0 <= ph < len(phases) else str(ph)),
        "prompt": "", "seats": [], "table": [], "info": [], "hand": [],
        "choices": [{"action": int(a), "text": str(names[a])} for a in engine.legal_actions(g)] if names else [],
        "standings": None, "end": "", "extra": {},
    }


def generic_table(spec, engine, g: int = 0, viewer: int | None = None, history: Sequence = ()) -> dict:
    """The description of a game without a ``table`` hook: seats by number (the reward
    once over), the game's own text render for the viewer as ``info``, the action names as
    choices, the outcome (or the rewards) as standings."""
    d = base(spec, engine, g, viewer)
    r = engine.state[g]

    def name(q):
        return f"player {q}"

    done = bool(r["done"])
    d["seats"] = seat_rows(engine, g, viewer, name,
                           counters=lambda q: {"reward": round(float(r["final_rewards"][q]), 3)} if done else {})
    d["info"] = [ln for ln in spec.render_text(engine, g, viewer=viewer).splitlines() if ln.strip()]
    if d["choices"]:
        d["prompt"] = "Your decision"
    if done:
        d["standings"] = standings(spec, engine, g, name,
                                   lambda q: f"reward {float(r['final_rewards'][q]):+.2f}")
        d["end"] = "the game is over"
    return d


def describe(spec, engine, g: int = 0, viewer: int | None = None, history: Sequence = ()) -> dict:
    """Game ``g`` of ``engine`` described for ``viewer`` (a seat, or None for a spectator):
    the game's ``table`` hook, else ``generic_table``."""
    hook = spec.table or generic_table
    return hook(spec, engine, g, viewer, history)
