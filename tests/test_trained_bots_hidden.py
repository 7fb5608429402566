"""Nothing hidden is used by any trained bot of any game (R-12.3, BM-11.2, RM-8.4: a seat's
observation shows only what it may see): for every registered agent of every game that
plays a network (a shipped checkpoint, a bot of one network per table, a distilled
imitation), in real mid-game states of its own play at each table, redrawing everything
the acting seat may not see (the other seats' hidden cards, the draw pile's order: the
game's ``GameSpec.scramble_hidden``) and encoding that seat's observation again gives the
same action. Generalises tests/test_heuristics.py's
``test_same_action_when_only_hidden_information_changes`` through the spec."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from ripmarket_env.core.engine import raw_rows  # noqa: E402
from ripmarket_env.games import get, ids  # noqa: E402
from ripmarket_env.testing.conformance import player_counts  # noqa: E402


def _trained(game: str) -> dict:
    """The game's registered agents that decide with a network, made deterministic."""
    out = {}
    for name in agents.names(game):
        bot = agents.make_seeded(name, 5, game=game)
        if hasattr(bot, "logits") and getattr(bot, "deterministic", True):
            out[name] = bot
    return out


def _tables(spec) -> list[dict]:
    """The rules of the tables checked: each count of the conformance suite, in each of
    the game's modes (``extras["modes"]``) when it has some."""
    modes = (spec.extras or {}).get("modes") or (None,)
    return [{"num_players": n, **({"mode": m} if m else {})} for n in player_counts(spec) for m in modes]


@pytest.mark.parametrize("game", ids())
def test_trained_bots_act_the_same_when_only_hidden_information_changes(game):
    spec = get(game)
    bots = _trained(game)
    if not bots:  # a game without trained bots (the tests' toy game) has nothing to check
        assert not any(hasattr(agents.make_seeded(n, 5, game=game), "logits") for n in agents.names(game))
        return
    rng = np.random.default_rng(11)
    checked, changed = {}, 0
    for name, bot in bots.items():
        for k, fields in enumerate(_tables(spec)):
            eng = spec.make_engine(spec.make_rules(rules=fields), batch_size=3)
            eng.reset([100 + 3 * k + i for i in range(3)])
            for t in range(45):
                if eng.terminated.all():
                    break
                actors = np.maximum(eng.current_player(), 0).astype(np.int64)  # a finished game: any seat
                obs, mask = eng.observe(actors), eng.legal_mask()
                acts = bot.act_batch(obs, mask)
                if t % 3 == 0:
                    for g in np.flatnonzero(~eng.terminated):
                        v = int(actors[g])
                        twin = spec.scramble_hidden(eng, g, v, rng)
                        changed += raw_rows(twin.state)[0].tobytes() != raw_rows(eng.state)[g].tobytes()
                        obs2, mask2 = twin.observe([v]), twin.legal_mask()
                        a = bot.act_batch(obs[g:g + 1], mask[g:g + 1])[0]
                        b = bot.act_batch(obs2, mask2)[0]
                        assert a == b, (f"{name} ({game}, table {fields}, game {g}, step {t}): action {a} became {b} "
                                        f"when only what seat {v} may not see was redrawn")
                        checked[name] = checked.get(name, 0) + 1
                eng.step(acts)
    assert changed > 0, f"{game}: no redraw changed a state: the check was vacuous"
    assert set(checked) == set(bots) and min(checked.values()) >= 10, checked
