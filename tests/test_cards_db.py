"""The card database: contents, validation, compiled tables, reference and CLI."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ripmarket_env.games.ripmarket.cards import registry as R
from ripmarket_env.games.ripmarket.cards.loader import (
    FAMILIES,
    CardDataError,
    default_cards,
    load_cards,
    parse_cards,
)
from ripmarket_env.games.ripmarket.cards.reference import REGEN_COMMAND, render_cards_markdown
from ripmarket_env.games.ripmarket.cards.text import TEMPLATES, change, effect_text
from ripmarket_env.app.cli import app

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def db():
    return load_cards()


@pytest.fixture()
def raw():
    """A fresh copy of the packaged cards.json as Python data."""
    text = resources.files("ripmarket_env.games.ripmarket.cards").joinpath("cards.json").read_text(encoding="utf-8")
    return json.loads(text)


def _write(tmp_path, data, name="cards.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return p


def _card(data, deck, name):
    for row in data[deck]:
        if row["name"] == name:
            return row
    raise KeyError(name)


# ---------------------------------------------------------------------------------
# Contents
# ---------------------------------------------------------------------------------


def test_deck_totals(db):
    assert db.living_deck_size == 64 == sum(d.copies for d in db.living)
    assert db.shadow_deck_size == 32 == sum(d.copies for d in db.shadow)
    assert int(db.living_copies.sum()) == 64
    assert int(db.shadow_copies.sum()) == 32


def test_design_counts(db):
    assert 25 <= db.n_living <= 35
    assert 10 <= db.n_shadow <= 16
    assert db.n_living == len(db.living) and db.n_shadow == len(db.shadow)
    assert [d.id for d in db.living] == list(range(db.n_living))
    assert [d.id for d in db.shadow] == list(range(db.n_shadow))


def test_values_in_range(db):
    assert all(2 <= d.value <= 8 for d in db.living)
    assert all(d.value is None for d in db.shadow)
    assert db.living_value.min() >= 2 and db.living_value.max() <= 8


def test_printed_values_span_of_each_edition():
    """R-2.1: printed values stay within 2-8; the first edition prints every value from 2 to
    8, the second edition every value from 2 to 7 (its only 8, Glass Crown, is a 7)."""
    first = load_cards("first-edition")
    assert set(int(v) for v in first.living_value) == set(range(2, 9))
    second = default_cards()
    assert set(int(v) for v in second.living_value) == set(range(2, 8))


def test_every_family_present(db):
    assert {d.family for d in db.living} == set(FAMILIES["living"])
    assert {d.family for d in db.shadow} == set(FAMILIES["shadow"])


def test_low_tide(db):
    c = db.by_name("Low Tide")
    assert c.deck == "living" and c.family == "rule"
    assert "RULE FLIP" in c.keywords
    assert c.op("rule")["rule"] == "low_tide"
    assert c.text.startswith("RULE FLIP: this round the lowest final score wins")


def test_earthquake(db):
    c = db.by_name("Earthquake")
    assert "RULE FLIP" in c.keywords
    assert c.op("rule")["rule"] == "earthquake"
    assert "scores its base value" in c.text


def test_heavy_taxes_reads_base_value(db):
    c = db.by_name("Heavy Taxes")
    op = c.op("score_board")
    assert (op["amount"], op["cond"], op["arg"]) == (-2, "base_ge", 6)
    assert c.text == "Every played card with a base value of 6 or more loses 2."


def test_deflection(db):
    """R-8.3: the text names only a player with more HP (the default ruling; its erratum)."""
    c = db.by_name("Deflection")
    assert c.ops == ("deflect",)
    assert c.text == (
        "Name another living player with more HP than you. At resolution, if you would take round damage, "
        "they take it instead."
    )
    assert c.choice == R.CHOICE_TARGET


def test_possession(db):
    c = db.by_name("Possession")
    assert c.deck == "shadow" and c.family == "curse"
    op = c.op("shadow_score")
    assert (op["amount"], op["cond"]) == (-3, "base_even")
    assert c.text == "If the attached card has an even base value, it loses 3."


def test_backstab_targets_richer_player(db):
    c = db.by_name("Backstab")
    assert c.text == "Choose another living player with more HP than you: they lose 1 HP."
    assert c.choice == R.CHOICE_TARGET_RICHER


def test_stored_text_equals_generated_text(raw):
    for deck in ("living", "shadow"):
        for row in raw[deck]:
            assert row["text"] == effect_text(deck, row["effect"]), row["name"]


def test_every_primitive_has_a_template():
    assert set(TEMPLATES) == {p.name for p in R.PRIMITIVES}


def test_amounts_read_naturally():
    assert change(2) == "gains 2"
    assert change(-3) == "loses 3"
    assert effect_text("living", [{"op": "score_self", "amount": -1}]) == "This card loses 1."


def test_every_shadow_card_has_counterplay(db):
    for d in db.shadow:
        assert d.family in ("curse", "blessing")
        assert d.counterplay and d.counterplay.strip().endswith("."), d.name
    for d in db.living:
        assert d.counterplay is None


def test_shadow_texts_begin_with_the_condition(db):
    for d in db.shadow:
        assert d.text.startswith("If the "), d.name


def test_no_card_heals(db):
    # rulings: no card heals or resurrects; the only HP op is damage
    hp_ops = {"damage_target"}
    for d in db.living + db.shadow:
        for e in d.effect:
            if e.op in hp_ops:
                assert e["amount"] > 0


# ---------------------------------------------------------------------------------
# Compiled tables
# ---------------------------------------------------------------------------------


def test_table_shapes_and_dtypes(db):
    DL, DS, K = db.n_living, db.n_shadow, R.MAX_OPS
    expect = {
        "living_value": ((DL,), np.int8),
        "living_copies": ((DL,), np.int8),
        "living_family": ((DL,), np.int8),
        "living_ops": ((DL, K, 4), np.int8),
        "living_nops": ((DL,), np.int8),
        "living_choice": ((DL,), np.int8),
        "living_face_down": ((DL,), np.bool_),
        "shadow_copies": ((DS,), np.int8),
        "shadow_family": ((DS,), np.int8),
        "shadow_ops": ((DS, K, 4), np.int8),
        "shadow_nops": ((DS,), np.int8),
    }
    for name, (shape, dtype) in expect.items():
        arr = getattr(db, name)
        assert arr.shape == shape, name
        assert arr.dtype == dtype, name
        assert not arr.flags.writeable, name


def test_exact_rows(db):
    ht = db.by_name("Heavy Taxes").id
    assert db.living_ops[ht].tolist() == [
        [R.OP_SCORE_BOARD, -2, R.BASE_CONDS["base_ge"], 6],
        [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0],
    ]
    assert db.living_value[ht] == 5 and db.living_copies[ht] == 2 and db.living_family[ht] == 0

    uc = db.by_name("Undercurrent").id
    assert db.living_ops[uc, 0].tolist() == [R.OP_FACE_DOWN, 0, 0, 0]
    assert db.living_ops[uc, 1].tolist() == [R.OP_RULE, R.RULES["cull"], 0, 0]
    assert db.living_nops[uc] == 2 and db.living_face_down[uc]

    gd = db.by_name("Grave Digger").id
    assert db.living_ops[gd, 0].tolist() == [R.OP_SCORE_SELF, 1, R.SELF_CONDS["per_ghost"], 0]
    ls = db.by_name("Last Stand").id
    assert db.living_ops[ls, 0].tolist() == [R.OP_SCORE_SELF, 3, R.SELF_CONDS["hp_at_most"], 1]

    po = db.by_name("Possession").id
    assert po == 0
    assert db.shadow_ops[po, 0].tolist() == [R.OP_SHADOW_SCORE, -3, R.BASE_CONDS["base_even"], 0]
    pp = db.by_name("Pickpocket").id
    assert db.shadow_ops[pp, 0].tolist() == [
        R.OP_SHADOW_TRIGGER, R.TRIGGER_KINDS["discard_random"], 1, R.TRIGGER_SOURCES["took_market"],
    ]
    assert db.shadow_family[db.by_name("Patron's Gift").id] == 1
    assert db.shadow_family[po] == 0


def test_choice_and_face_down_columns(db):
    for d in db.living:
        assert db.living_choice[d.id] == d.choice
        assert bool(db.living_face_down[d.id]) == d.face_down
        assert db.living_nops[d.id] == len(d.effect)
        # unused rows are all zero
        assert not db.living_ops[d.id, len(d.effect):].any()
    assert db.living_choice[db.by_name("Spite").id] == R.CHOICE_TARGET
    assert db.living_choice[db.by_name("Black Market Deal").id] == R.CHOICE_MARKET
    assert db.living_choice[db.by_name("Double Back").id] == R.CHOICE_HAND
    assert db.living_choice[db.by_name("Tycoon").id] == R.CHOICE_NONE
    assert set(np.flatnonzero(db.living_face_down)) == {db.by_name("Undercurrent").id, db.by_name("Veiled Blade").id}


def test_face_down_compiled_first_whatever_the_json_order(raw, tmp_path):
    row = _card(raw, "living", "Undercurrent")
    row["effect"] = list(reversed(row["effect"]))
    row["text"] = effect_text("living", row["effect"])  # text also puts face_down first
    assert row["text"] == effect_text("living", list(reversed(row["effect"])))
    db2 = load_cards(_write(tmp_path, raw))
    uc = db2.by_name("Undercurrent").id
    assert db2.living_ops[uc, 0, 0] == R.OP_FACE_DOWN
    assert db2.living_ops[uc, 1, 0] == R.OP_RULE
    assert db2.digest == default_cards().digest  # same card, same canonical form


def test_digest(raw, tmp_path, db):
    assert len(db.digest) == 64
    # formatting and omitted defaults do not change it
    p = tmp_path / "compact.json"
    p.write_text(json.dumps(raw, separators=(",", ":")), encoding="utf-8")
    assert load_cards(p).digest == db.digest
    # a real change does
    _card(raw, "living", "Tycoon")["copies"] = 3
    assert load_cards(_write(tmp_path, raw), custom_deck=True).digest != db.digest


def test_default_cards_cached(db):
    assert default_cards() is default_cards()
    assert default_cards().digest == db.digest


def test_by_name_unknown(db):
    with pytest.raises(KeyError, match="Possession"):
        db.by_name("Possesion")


# ---------------------------------------------------------------------------------
# Validation errors
# ---------------------------------------------------------------------------------


def _set(which, card, **fields):
    def mut(d):
        _card(d, which, card).update(fields)
    return mut


def _effect(deck, name, effect, regen_text=True):
    def mut(d):
        row = _card(d, deck, name)
        row["effect"] = effect
        if regen_text:
            try:
                row["text"] = effect_text(deck, effect)
            except Exception:
                pass
    return mut


def _del(deck, name, fld):
    def mut(d):
        del _card(d, deck, name)[fld]
    return mut


def _del_param(deck, name, param):
    def mut(d):
        del _card(d, deck, name)["effect"][0][param]
    return mut


CASES = {
    "unknown op": (
        _effect("living", "Stockpile", [{"op": "teleport"}]),
        ["living card #2", "'Stockpile'", "effect[0].op", "unknown op", "score_self", "market_take"],
    ),
    "missing parameter": (
        _del_param("shadow", "Possession", "cond"),
        ["shadow card #0", "'Possession'", "effect[0].cond", "missing", "base_ge", "base_odd"],
    ),
    "unknown parameter": (
        _set("living", "Stockpile", effect=[{"op": "draw", "n": 2, "colour": 1}]),
        ["'Stockpile'", "effect[0].colour", "unknown parameter", "n"],
    ),
    "int out of range": (
        _effect("living", "Stockpile", [{"op": "draw", "n": 5}], regen_text=False),
        ["'Stockpile'", "effect[0].n", "out of range", "1 to 3"],
    ),
    "amount out of range": (
        _effect("living", "Spite", [{"op": "score_target", "amount": -9}], regen_text=False),
        ["'Spite'", "effect[0].amount", "-6 to 6"],
    ),
    "bad enum": (
        _effect("living", "Low Tide", [{"op": "rule", "rule": "tsunami"}], regen_text=False),
        ["'Low Tide'", "effect[0].rule", "tsunami", "low_tide, earthquake, cull"],
    ),
    "wrong deck for op": (
        _effect("living", "Spite", [{"op": "shadow_score", "amount": -2, "cond": "base_even"}]),
        ["'Spite'", "effect[0].op", "shadow op", "living ops", "score_target"],
    ),
    "living op on shadow card": (
        _effect("shadow", "Blight", [{"op": "draw", "n": 1}]),
        ["shadow card #1", "'Blight'", "effect[0].op", "living op", "shadow_score"],
    ),
    "value too high": (_set("living", "Tycoon", value=9), ["'Tycoon'", "'value'", "2-8"]),
    "value too low": (_set("living", "Mimic", value=1), ["'Mimic'", "'value'", "2-8"]),
    "copies zero": (_set("living", "Mimic", copies=0), ["'Mimic'", "'copies'", "1-"]),
    "ids not contiguous": (_set("living", "Last Stand", id=7), ["'Last Stand'", "'id'", "contiguous", "expected 5"]),
    "duplicate name": (_set("living", "Haunted Relic", name="Grave Digger"), ["'Grave Digger'", "'name'", "duplicate"]),
    "duplicate name across decks": (_set("shadow", "Blight", name="Spite"), ["'Spite'", "'name'", "duplicate"]),
    "too many ops": (
        _effect("living", "Relief", [{"op": "score_board", "amount": 1, "cond": "base_odd"}] * (R.MAX_OPS + 1)),
        ["'Relief'", "'effect'", f"at most {R.MAX_OPS}"],
    ),
    "two choice ops": (
        _effect("living", "Spite", [{"op": "score_target", "amount": -2}, {"op": "market_take"}]),
        ["'Spite'", "'effect'", "more than one choice", "score_target", "market_take"],
    ),
    "face-down with a choice": (
        _effect("living", "Veiled Blade", [{"op": "face_down"}, {"op": "score_target", "amount": -1}]),
        ["'Veiled Blade'", "'effect'", "face-down", "score_target", "may not ask for choices"],
    ),
    "shadow card without ops": (_effect("shadow", "Blight", []), ["'Blight'", "'effect'", "at least one op"]),
    "living card without ops": (_effect("living", "Merchant", []), ["'Merchant'", "'effect'", "at least one op", "draw"]),
    "text mismatch": (
        _set("shadow", "Possession", text="Even cards lose 3."),
        ["'Possession'", "'text'", "If the attached card has an even base value, it loses 3."],
    ),
    "keywords must follow the effect": (_set("living", "Low Tide", keywords=[]), ["'Low Tide'", "'keywords'", "RULE FLIP"]),
    "unknown keyword": (_set("living", "Spite", keywords=["HASTE"]), ["'Spite'", "'keywords'", "FACE-DOWN"]),
    "wrong family": (_set("living", "Spite", family="curse"), ["'Spite'", "'family'", "score, market, rule, deception"]),
    "wrong deck field": (_set("living", "Spite", deck="shadow"), ["'Spite'", "'deck'", "living"]),
    "missing counterplay": (_del("shadow", "Dread", "counterplay"), ["'Dread'", "'counterplay'", "missing"]),
    "empty counterplay": (_set("shadow", "Dread", counterplay=" "), ["'Dread'", "'counterplay'"]),
    "counterplay on a living card": (_set("living", "Spite", counterplay="x"), ["'Spite'", "'counterplay'", "unknown field"]),
    "missing value": (_del("living", "Spite", "value"), ["'Spite'", "'value'", "missing"]),
    "zero amount": (
        _effect("living", "Spite", [{"op": "score_target", "amount": 0}], regen_text=False),
        ["'Spite'", "effect[0].amount", "does nothing"],
    ),
    "arg on a condition that ignores it": (
        _effect("shadow", "Blight", [{"op": "shadow_score", "amount": -2, "cond": "base_odd", "arg": 3}], regen_text=False),
        ["'Blight'", "effect[0].arg", "ignores arg"],
    ),
    "living deck total": (_set("living", "Tycoon", copies=3), ["living deck totals 65", "must be 64", "custom_deck"]),
    "shadow deck total": (_set("shadow", "Possession", copies=3), ["shadow deck totals 31", "must be 32"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_validation_errors(case, raw, tmp_path):
    mutate, needles = CASES[case]
    data = copy.deepcopy(raw)
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(CardDataError) as info:
        load_cards(path)
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    assert "\n" not in msg
    assert str(path) in msg
    for needle in needles:
        assert needle in msg, f"{needle!r} not in {msg!r}"


def test_custom_deck_allows_other_totals(raw, tmp_path):
    _card(raw, "living", "Tycoon")["copies"] = 3
    raw["shadow"] = raw["shadow"][:3]
    db2 = load_cards(_write(tmp_path, raw), custom_deck=True)
    assert db2.living_deck_size == 65
    assert db2.n_shadow == 3 and db2.shadow_deck_size == 10


def test_malformed_json_names_file_and_line(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text('{\n  "version": 1,\n  "living": [\n    {"id": 0,,}\n  ]\n}\n', encoding="utf-8")
    with pytest.raises(CardDataError, match=r"broken\.json.*line 4"):
        load_cards(p)


def test_missing_file(tmp_path):
    with pytest.raises(CardDataError, match="not found"):
        load_cards(tmp_path / "nope.json")


def test_bad_top_level():
    with pytest.raises(CardDataError, match="version"):
        parse_cards({"version": 2, "living": [], "shadow": []})
    with pytest.raises(CardDataError, match="JSON object"):
        parse_cards([])


# ---------------------------------------------------------------------------------
# Reference and CLI
# ---------------------------------------------------------------------------------


def test_cards_md_is_up_to_date(db):
    path = REPO / "docs" / "CARDS.md"
    assert path.exists(), f"docs/CARDS.md is missing: run `{REGEN_COMMAND}`"
    assert path.read_text(encoding="utf-8") == render_cards_markdown(db), (
        f"docs/CARDS.md is stale: run `{REGEN_COMMAND}`"
    )


def test_reference_content(db):
    md = render_cards_markdown(db)
    assert "## Living Deck" in md and "## Shadow Deck" in md
    assert "| Possession | ×4 | curse |" in md
    assert "| Heavy Taxes | 5 | ×2 | score | — | Every played card with a base value of 6 or more loses 2. |" in md
    # Living table sorted by value then name
    rows = [line for line in md.split("## Shadow Deck")[0].splitlines() if line.startswith("| ") and "---" not in line][1:]
    keys = [(int(r.split("|")[2]), r.split("|")[1].strip()) for r in rows]
    assert keys == sorted(keys) and len(keys) == db.n_living
    assert "64 Living cards" in md and "32 Shadow cards" in md


runner = CliRunner()


def test_cli_cards_table():
    result = runner.invoke(app, ["cards"])
    assert result.exit_code == 0, result.output
    assert "Possession" in result.stdout
    assert "Living Deck" in result.stdout


def test_cli_cards_markdown(db):
    result = runner.invoke(app, ["cards", "--markdown"])
    assert result.exit_code == 0
    assert result.stdout == render_cards_markdown(db)


def test_cli_cards_write(db, tmp_path):
    out = tmp_path / "CARDS.md"
    result = runner.invoke(app, ["cards", "--markdown", "--write", str(out)])
    assert result.exit_code == 0
    assert out.read_text(encoding="utf-8") == render_cards_markdown(db)


def test_cli_cards_other_file(raw, tmp_path):
    _card(raw, "living", "Tycoon")["name"] = "Robber Baron"
    result = runner.invoke(app, ["cards", "--markdown", "--file", str(_write(tmp_path, raw))])
    assert result.exit_code == 0
    assert "Robber Baron" in result.stdout and "Tycoon" not in result.stdout


def test_cli_malformed_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"version": 1,\n', encoding="utf-8")
    result = runner.invoke(app, ["cards", "--file", str(p)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "line 2" in lines[0]
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_cli_invalid_card(raw, tmp_path):
    _card(raw, "living", "Tycoon")["value"] = 12
    result = runner.invoke(app, ["cards", "--file", str(_write(tmp_path, raw))])
    assert result.exit_code == 2
    assert "Tycoon" in result.stderr and "value" in result.stderr
    assert "Traceback" not in result.output
