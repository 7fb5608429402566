"""Black Market's events told as story lines for one seat (``SPEC.story``: the terminal
game's lines and the web page's recent moves).

One line per event, as that seat may read it (``Event.text_for``, BM-7), except the deal:
the Hand Cards dealt to one seat at set-up (BM-3.3) are told in one line, "player 2 is dealt
6 cards", naming the kinds only to that seat (BM-7.1).
"""

from __future__ import annotations

from collections import Counter

from ripmarket_env.games.blackmarket.events import KIND_NAMES, count, seat_name


def story(engine, events, viewer: int, label) -> list[dict]:
    out = []
    i = 0
    while i < len(events):
        e = events[i]
        j = i + 1
        if e.kind == "deal":
            while j < len(events) and events[j].kind == "deal" and events[j].seat == e.seat:
                j += 1
            dealt = events[i:j]
            text = f"{seat_name(e.seat)} is dealt {count(len(dealt))}"
            if e.sees_private(viewer):
                kinds = Counter(KIND_NAMES[x.a] for x in dealt)
                text += ": " + ", ".join(f"{n} {k}" for k, n in kinds.items())
        else:
            text = e.text_for(viewer)
        if text:
            out.append({"seat": int(e.seat), "who": label(e.seat) if e.seat >= 0 else "the table", "kind": e.kind,
                        "text": text, "minor": e.kind in ("deal", "turn"), "turn": e.turn})
        i = j
    return out
