"""``ripmarket play --game black-market``: a Black Market game in the terminal.

You hold one seat; the bots (``agents.make(name, game="black-market")``) hold the others
and decide through the same agent protocol. The game is a
:class:`ripmarket_env.app.play_bm.BlackMarketSession` (the web page's too). At each of
your decisions the table is shown from your seat (your hand only; others by size), then
the numbered legal actions; the events of each step are printed as your seat may read
them (hidden cards stay hidden, BM-7).
"""

from __future__ import annotations

from collections.abc import Callable


def play_terminal(players: int, seat: int, mode: str, names: list[str], seed: int,
                  read: Callable[[str], str] = input, write: Callable[[str], None] = print, save=None) -> list[float]:
    from ripmarket_env.app.play_bm import BlackMarketSession
    from ripmarket_env.app.seat_session import ask_choice

    s = BlackMarketSession(players, seat, mode, names, seed=seed)

    def show_moves():
        for m in s.recent():
            if m["seat"] >= 0 and m["seat"] != seat:
                write(f"{m['who']}: {m['action']}")
            for text in m["events"]:
                write("  · " + text)

    while not s.over:
        show_moves()
        write("")
        write(s.table_text())
        write(s.prompt())
        s.act(ask_choice(s.choices(), read, write, "your choice (1-{n}): ",
                         "please type a number from 1 to {n}"))
    show_moves()
    write(s.table_text())
    if save is not None:
        s.save(save)
        write(f"record saved to {save}")
    return [float(x) for x in s.engine.rewards()[0]]
