"""``ripmarket play --game black-market``: a Black Market game in the terminal.

You hold one seat; the bots (``agents.make(name, game="black-market")``) hold the others
and decide through the same agent protocol. At each of your decisions the table is shown
from your seat (your hand only; others by size), then the numbered legal actions; the
events of each step are printed as your seat may read them (hidden cards stay hidden).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def play_terminal(players: int, seat: int, mode: str, names: list[str], seed: int,
                  read: Callable[[str], str] = input, write: Callable[[str], None] = print, save=None) -> list[float]:
    import agents
    from ripmarket_env.envs.record import Recorder
    from ripmarket_env.games.blackmarket import SPEC, RulesConfig
    from ripmarket_env.games.blackmarket.render import render_text

    rules = RulesConfig(num_players=players, mode=mode)
    rec = Recorder.new(rules, seed, spec=SPEC)
    eng = rec.engine
    bots = {}
    others = [q for q in range(players) if q != seat]
    for i, q in enumerate(others):
        bots[q] = agents.make(names[i % len(names)], game="black-market", seed=seed + q)

    def show_events():
        for e in eng.events(0):
            write("  · " + e.text_for(seat))

    show_events()
    while not eng.terminated[0]:
        q = int(eng.current_player()[0])
        mask = eng.legal_mask()[0]
        if q == seat:
            write("")
            write(render_text(eng, 0, viewer=seat))
            legal = np.flatnonzero(mask)
            for i, a in enumerate(legal, 1):
                write(f"  {i:2d}. {eng.describe_action(int(a))}")
            while True:
                ans = read(f"your choice (1-{len(legal)}): ").strip()
                if ans.isdigit() and 1 <= int(ans) <= len(legal):
                    a = int(legal[int(ans) - 1])
                    break
                write(f"please type a number from 1 to {len(legal)}")
        else:
            a = int(bots[q].act(eng.observe([q])[0], mask))
            write(f"player {q} ({bots[q].name}): {eng.describe_action(a)}")
        rec.step(a)
        show_events()
    write(render_text(eng, 0, viewer=seat))
    if save is not None:
        rec.save(save)
        write(f"record saved to {save}")
    return [float(x) for x in eng.rewards()[0]]
