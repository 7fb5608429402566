"""The card-design audit and the target table of ripmarket_env/games/ripmarket/balance_targets.py (docs/BALANCE.md),
on the packaged second edition and the packaged first edition."""

from __future__ import annotations

import json

import pytest

from ripmarket_env.games.ripmarket.balance_targets import (
    COUNTERPLAY_MIN_SHARE,
    design_audit,
    measured_targets,
    shadow_outcome,
    target_rows,
    targets_markdown,
)
from ripmarket_env.games.ripmarket.cards.loader import CardDataError, card_file, default_cards, load_cards


@pytest.fixture(scope="module")
def first():
    return load_cards("first-edition")


@pytest.fixture(scope="module")
def second():
    return default_cards()


def test_first_edition_is_packaged_by_name(first, second):
    assert card_file("first-edition").name == "first_edition.json"
    assert first.digest != second.digest
    assert [d.name for d in first.living] == [d.name for d in second.living]
    assert first.by_name("Tycoon").value == 8 and first.by_name("Fire Sale").value == 3


def test_an_unknown_name_is_a_missing_file():
    with pytest.raises(CardDataError, match="second-edition: card file not found"):
        load_cards("second-edition")


def test_shadow_outcome_reads_base_value_and_source(first, second):
    possession = first.by_name("Possession")
    assert shadow_outcome(possession, 4, "deck") == (-3, 0)
    assert shadow_outcome(possession, 5, "market") == (0, 0)
    pick = second.by_name("Pickpocket")
    assert shadow_outcome(pick, 5, "market") == (0, 1)
    assert shadow_outcome(pick, 5, "deck") == (0, 0)


def test_first_edition_breaks_the_design_promises(first):
    a = design_audit(first)
    assert sorted(a["blessings_without_string"]) == sorted(
        ["Blessing of the Meek", "Ancestral Favor", "Gilded Chains", "Patron's Gift"])
    bad = {tuple(sorted(p)) for p in a["stacks_without_counterplay"]}
    assert ("Blight", "Possession") in bad  # every card loses 2 or 3
    assert ("Dread", "Withering") in bad  # only a 5 is left (9 of 64 cards)
    assert ("Cold Hands", "Greed's Toll") in bad  # every acquisition is punished
    pairs = {(t["high"], t["low"]) for t in a["living_twins"]}
    assert pairs == {("Tycoon", "Fire Sale"), ("Aftershock", "Earthquake")}


def test_second_edition_keeps_the_design_promises(second):
    a = design_audit(second)
    assert a["blessings_without_string"] == []
    assert all(b["best_gain"] > 0 and b["worst_loss"] < 0 for b in a["blessings"])
    assert a["stacks_without_counterplay"] == []
    assert a["min_safe_share"] >= COUNTERPLAY_MIN_SHARE
    assert len(a["stacks"]) == len(second.shadow) * (len(second.shadow) + 1) // 2
    assert a["living_twins"] == []


def _fake_result(db, P=4, swing=0.08, positions=(0.25, 0.24, 0.26, 0.25), delta=0.05):
    n = sum(int(d.copies) for d in db.living)
    living = [{"name": d.name, "play_share": int(d.copies) / n, "win_delta": delta} for d in db.living]
    living[0]["play_share"] *= 0.3  # one design far under its deck share
    living[1]["win_delta"] = -0.2
    return {"settings": {"cards": "packaged cards.json", "cards_digest": db.digest},
            "by_players": [{"players": P, "games": 100, "games_single_winner": 97, "living": living,
                            "ghost_swings": {"per_round": swing},
                            "position_win": [{"rate": r} for r in positions[:P]]}]}


def test_measured_targets_flag_what_misses(second):
    r = _fake_result(second)
    m = measured_targets(r, second)[4]
    assert m["under_played"][0]["name"] == second.living[0].name
    assert m["under_played"][0]["ratio"] == pytest.approx(0.3)
    assert [x["name"] for x in m["win_delta_over"]] == [second.living[1].name]
    assert m["max_seat_gap"] == pytest.approx(0.01)
    rows = {t: ok for t, _, ok in target_rows(r, second)}
    assert rows["4 players: Shadow swings per round >= 7%"] is True
    assert rows["4 players: every turn position within ±3 pts of 25.0%"] is True
    assert rows["4 players: every Living design's play share >= 40% of its deck share"] is False
    assert rows["4 players: every Living win-rate difference within ±12 pts"] is False
    assert rows["4 players: games with exactly one winner (>= 98%)"] is False


def test_side_by_side_table(first, second):
    md = targets_markdown(_fake_result(first, swing=0.05), first, (_fake_result(second), second))
    head, rule, *rows = md.splitlines()
    assert head.startswith("| target | before | met | after | met |")
    swing = next(r for r in rows if "Shadow swings" in r)
    assert "5.0% | **no** | 8.0% | yes" in swing
    json.dumps(md)  # plain text


def test_a_shadow_design_with_two_triggers_is_refused(tmp_path):
    """R-4.8: one fired flag per attached card, so a design may carry one shadow_trigger; a
    second is refused naming the card and the field (the first draft of Patron's Gift's string)."""
    from ripmarket_env.games.ripmarket.cards.loader import _default_path

    data = json.loads(_default_path().read_text(encoding="utf-8"))
    row = next(r for r in data["shadow"] if r["name"] == "Patron's Gift")
    row["effect"] = [{"op": "shadow_trigger", "kind": "score", "amount": 3, "source": "took_deck"},
                     {"op": "shadow_trigger", "kind": "score", "amount": -2, "source": "took_market"}]
    p = tmp_path / "two_triggers.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CardDataError, match=r"Patron's Gift.*effect.*2 'shadow_trigger' ops; at most one"):
        load_cards(p)
