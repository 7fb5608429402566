"""Words-only errata of card files (``ripmarket_env/core/errata.py``; docs/ARCHITECTURE.md,
"Card digests and errata") and R-8.3's erratum of Deflection.

A card file may correct a card's printed words by listing the words it was first printed
with; the card set's digest is computed over the cards as first printed, so the shipped
checkpoints (and so their exports), records made before the correction and the goldens'
digest line stay valid, while a change of a card's numbers is another card set and is
refused where it was refused before. Every game's card loader takes errata."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from ripmarket_env import replay
from ripmarket_env.core.errata import Erratum, errata_markdown, first_printing, parse_errata
from ripmarket_env.envs.record import RecordError
from ripmarket_env.games.blackmarket import cards as bm_cards
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.cards import loader
from ripmarket_env.games.ripmarket.cards.loader import CardDataError, default_cards, load_cards, parse_cards
from ripmarket_env.games.ripmarket.cards.reference import render_cards_markdown
from ripmarket_env.games.ripmarket.cards.text import DEFLECT_NAMES, effect_text, printed_texts
from ripmarket_env.games.runemarket import cards as rm_cards

HERE = Path(__file__).parent
CARDS_JSON = Path(loader.__file__).with_name("cards.json")
RAW = json.loads(CARDS_JSON.read_text(encoding="utf-8"))
#: Made with the code and cards.json of before the erratum (Deflection's first printing):
#: a 4-player game in which a Deflection passes the damage.
RECORD = HERE / "data" / "record_before_errata.jsonl"
GOLDEN_DIGEST = next(line.split(": ")[1] for line in (HERE / "golden" / "playthrough_4p_seed202.txt")
                     .read_text(encoding="utf-8").splitlines() if line.startswith("# cards digest: "))
FIRST_PRINTED = ("Name another living player. At resolution, if you would take round damage, "
                 "they take it instead.")
NOW = ("Name another living player with more HP than you. At resolution, if you would take round "
       "damage, they take it instead.")


def raw() -> dict:
    return copy.deepcopy(RAW)


def card(data: dict, name: str) -> dict:
    return next(c for c in data["living"] + data["shadow"] if c["name"] == name)


def before_erratum() -> dict:
    """cards.json as it was before the erratum: Deflection's first words, no errata."""
    data = {k: v for k, v in raw().items() if k != "errata"}
    card(data, "Deflection")["text"] = FIRST_PRINTED
    return data


def number_edit(data: dict) -> dict:
    """A change of numbers only: a Deflection is a 3 instead of a 2."""
    card(data, "Deflection")["value"] = 3
    return data


# --------------------------------------------------------------------------- R-8.3's erratum


def test_r_8_3_deflection_s_text_names_only_players_with_more_hp():
    """R-8.3 (deflect_target="stronger", the default): a Deflection may name only a living
    player with more HP than its owner, and its printed text now says so; the words it was
    first printed with are its erratum's."""
    db = default_cards()
    assert RulesConfig(num_players=4).deflect_target == "stronger"
    assert db.by_name("Deflection").text == NOW
    assert NOW == effect_text("living", [{"op": "deflect"}]) == printed_texts("living", [{"op": "deflect"}])[0]
    assert db.errata == (Erratum("Deflection", FIRST_PRINTED, "R-8.3"),)
    # the first edition, played under "any", keeps the words its ruling makes true
    first = load_cards("first-edition")
    assert first.by_name("Deflection").text == FIRST_PRINTED == effect_text("living", [{"op": "deflect"}], "any")
    assert first.errata == () and first.digest == first.printing_digest
    # the rules page and the card reference say so
    rules = (HERE.parent / "docs" / "RULES.md").read_text(encoding="utf-8")
    r83 = " ".join(rules[rules.index("- **R-8.3**"):rules.index("- **R-8.4**")].split())
    assert "(erratum)" in r83 and NOW in r83 and FIRST_PRINTED in r83
    page = render_cards_markdown(db)
    assert "## Errata" in page and f"| Deflection | R-8.3 | {FIRST_PRINTED} |" in page
    assert db.printing_digest in page and f"Card database digest: `{db.digest}`" in page


def test_deflection_s_words_follow_every_r_8_3_ruling():
    """R-8.3: a Deflection may print the words of any deflect_target ruling; other words are refused."""
    from ripmarket_env.games.ripmarket.config import DEFLECT_TARGETS

    assert set(DEFLECT_NAMES) == set(DEFLECT_TARGETS)
    texts = printed_texts("living", [{"op": "deflect"}])
    assert len(set(texts)) == 3
    for t in texts:
        data = before_erratum()
        card(data, "Deflection")["text"] = t
        assert parse_cards(data).by_name("Deflection").text == t
    data = raw()
    card(data, "Deflection")["text"] = "Name any player you like."
    with pytest.raises(CardDataError, match=r"'Deflection', field 'text': does not match the text generated from "
                                            r"the effect; expected one of 'Name another living player with more HP"):
        parse_cards(data)
    # a card whose words no ruling decides has one text
    assert len(printed_texts("living", [{"op": "draw", "n": 1}])) == 1


# --------------------------------------------------------------------------- the card set's digest


def test_the_erratum_keeps_the_card_set_s_digest():
    """The packaged cards keep the digest the goldens, the shipped checkpoints and the balance
    run carry; the digest of the cards as they read now is reported beside it."""
    from agents.checkpoint import card_edition, read_metadata
    from agents.policy import CHECKPOINT_DIR

    db = default_cards()
    assert db.digest == GOLDEN_DIGEST
    assert read_metadata(CHECKPOINT_DIR / "ppo.zip", check=False)["card_digest"] == db.digest
    assert json.loads(RECORD.read_text(encoding="utf-8").splitlines()[0])["cards_digest"] == db.digest
    balance = json.loads((HERE.parent / "docs" / "balance" / "second-edition" / "balance.json").read_text())
    assert balance["settings"]["cards_digest"] == db.digest
    assert card_edition(db.digest) == "second-edition"
    old = parse_cards(before_erratum())
    assert old.digest == old.printing_digest == db.digest
    assert db.printing_digest != db.digest
    assert hashlib.sha256(db.canonical_json().encode()).hexdigest() == db.digest
    assert hashlib.sha256(db.canonical_json(printing=True).encode()).hexdigest() == db.printing_digest
    assert parse_cards(raw()).printing_digest == db.printing_digest


def test_a_number_edit_or_undeclared_words_are_another_card_set():
    """Only the text field is put back: a number edit changes the digest though the erratum
    stays, and new words without an erratum are another card set, as before."""
    db = default_cards()
    assert parse_cards(number_edit(raw())).digest != db.digest
    undeclared = raw()
    del undeclared["errata"]
    assert parse_cards(undeclared).digest == db.printing_digest != db.digest
    # another ruling's words, declared: words only
    other = raw()
    card(other, "Deflection")["text"] = effect_text("living", [{"op": "deflect"}], "not_weaker")
    assert parse_cards(other).digest == db.digest


def test_first_words_are_history():
    """A first printing need not be words today's templates generate (a reworded template is
    an erratum too): the digest is over those words, whatever they are."""
    data = raw()
    data["errata"][0]["printed"] = "Name a player: they take your round damage."
    old = before_erratum()
    card(old, "Deflection")["text"] = "Name a player: they take your round damage."
    with pytest.raises(CardDataError, match="does not match the text generated from the effect"):
        parse_cards(old)  # no longer a card file of today's templates ...
    assert parse_cards(data).digest == hashlib.sha256(json.dumps(
        {"version": 1, **{deck: [dict(d.to_json(), text=data["errata"][0]["printed"]) if d.name == "Deflection"
                                 else d.to_json() for d in getattr(default_cards(), deck)]
                          for deck in ("living", "shadow")}},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()  # ... but its digest is


@pytest.mark.parametrize("errata,message", [
    ("Deflection", r"field 'errata' must be a list of objects with keys card, printed, rule, got str"),
    (["Deflection"], r"errata\[0\] must be an object with keys card, printed, rule; got str"),
    ([{"card": "Deflection", "printed": FIRST_PRINTED}], r"errata\[0\]\.rule must be a non-empty string of at most 1,000 characters on one line.*got NoneType None"),
    ([{"card": "Deflection", "printed": FIRST_PRINTED, "rule": "R-8.3", "digest": "ab"}],
     r"errata\[0\]: unknown key\(s\) 'digest'; allowed: card, printed, rule"),
    ([{"card": "Deflektion", "printed": FIRST_PRINTED, "rule": "R-8.3"}],
     r"errata\[0\]\.card: 'Deflektion' names no card of this file; known cards: .*Deflection"),
    ([{"card": "Deflection", "printed": NOW, "rule": "R-8.3"}],
     r"errata\[0\]\.printed: is the text 'Deflection' reads now; an erratum lists the words the card "
     r"was first printed with"),
    ([{"card": "Deflection", "printed": FIRST_PRINTED, "rule": "R-8.3"}] * 2,
     r"errata\[1\]\.card: 'Deflection' has an erratum already; list each card once"),
])
def test_errata_that_do_not_hold_are_refused_in_one_line(errata, message):
    data = raw()
    data["errata"] = errata
    with pytest.raises(CardDataError, match=r"^<memory>: " + message) as err:
        parse_cards(data)
    assert "\n" not in str(err.value)


def test_a_card_file_with_errata_names_itself_in_errors(tmp_path):
    data = raw()
    data["errata"][0]["card"] = "Nobody"
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CardDataError, match=r"mine\.json: errata\[0\]\.card: 'Nobody' names no card"):
        load_cards(path)


def test_the_core_helpers():
    e = Erratum("A", "old words", "X-1")
    rows = [{"name": "A", "text": "new words", "n": 1}, {"name": "B", "text": "b"}]
    assert first_printing(rows, [e]) == [{"name": "A", "text": "old words", "n": 1}, {"name": "B", "text": "b"}]
    assert rows[0]["text"] == "new words"  # copies
    assert errata_markdown((), "d") == []
    assert "| A | X-1 | old words |" in errata_markdown([e], "d")

    def fail(msg):
        raise ValueError(msg)

    with pytest.raises(ValueError, match="'A' names 2 cards of this file; an erratum names one"):
        parse_errata([e.to_json()], [("A", "x"), ("A", "y")], fail)
    assert parse_errata(None, [], fail) == ()


# --------------------------------------------------------------------------- what carries the digest


def test_a_record_made_before_the_erratum_replays_and_a_number_edit_is_refused(tmp_path):
    """The record was written with Deflection's first words; it replays line by line with
    the corrected cards (no record line comes from a card's text), and not with a number edit."""
    from ripmarket_env.envs.record import Recorder

    eng = replay(RECORD)
    assert eng.terminated[0]
    assert "passes the damage" in RECORD.read_text(encoding="utf-8")
    with pytest.raises(RecordError, match=r"made with a different card database \(digest 9df0419150"):
        replay(RECORD, cards=parse_cards(number_edit(raw())))
    # a record made with the corrected words carries the same digest and replays with the first words
    rec = Recorder.new(RulesConfig(num_players=3), 5)
    rng = np.random.default_rng(5)
    while not rec.done:
        legal = rec.engine.legal_actions(0)
        rec.step(legal[rng.integers(len(legal))])
    assert rec.lines[0]["cards_digest"] == GOLDEN_DIGEST
    assert replay(rec.save(tmp_path / "after.jsonl"), cards=parse_cards(before_erratum())).terminated[0]


def test_a_shipped_checkpoint_loads_with_the_corrected_words_and_not_with_a_number_edit():
    """ppo.zip was trained before the erratum: it loads and plays the corrected cards, its
    file unchanged (so its export stays current), and is refused by a number edit."""
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    from agents.checkpoint import CheckpointError
    from agents.export import stale_exports
    from agents.policy import CHECKPOINT_DIR, load_agent

    ckpt = CHECKPOINT_DIR / "ppo.zip"
    for cards in (None, parse_cards(before_erratum())):
        bot = load_agent(ckpt, seed=1, cards=cards)
        eng = Engine(RulesConfig(num_players=4), batch_size=2, **({"cards": cards} if cards else {}))
        eng.reset([3, 4])
        for _ in range(40):
            eng.step(np.where(eng.terminated, -1, bot.act_batch(eng.observe(), eng.legal_mask())))
    with pytest.raises(CheckpointError, match=r"card digest 9df0419150"):
        load_agent(ckpt, cards=parse_cards(number_edit(raw())))
    assert stale_exports() == []


# --------------------------------------------------------------------------- every game's card files


def _bm_edit(data):
    data["point_cards"][0]["points"] = (data["point_cards"][0]["points"] + 1) % 10


def _rm_edit(data):
    data["deck"][0]["copies"] += 1


@pytest.mark.parametrize("module,parse,words,numbers", [
    (bm_cards, bm_cards.parse, lambda d: d["hand_cards"][0], _bm_edit),
    (rm_cards, rm_cards.parse, lambda d: d["market"][0], _rm_edit),
])
def test_every_game_s_card_files_take_words_only_errata(module, parse, words, numbers):
    """Black Market and The Rune Market read errata with the same core helper: corrected
    words keep the digest, a number edit or undeclared words do not."""
    path = module.DATA if hasattr(module, "DATA") else module.DATA_FILE
    base = json.loads(Path(path).read_text(encoding="utf-8"))
    digest = parse(copy.deepcopy(base)).digest

    data = copy.deepcopy(base)
    row = words(data)
    first = row.get("text", "")
    row["text"] = first + " (corrected)"
    assert parse(copy.deepcopy(data)).digest != digest  # undeclared: another card set
    data["errata"] = [{"card": row["name"], "printed": first, "rule": "X-1"}]
    db = parse(copy.deepcopy(data))
    assert db.digest == digest != db.printing_digest
    assert db.errata == (Erratum(row["name"], first, "X-1"),)
    page = module.reference_markdown(db) if hasattr(module, "reference_markdown") else module.render_markdown(db)
    assert "## Errata" in page and f"| {row['name']} | X-1 |" in page
    numbers(data)
    assert parse(copy.deepcopy(data)).digest != digest
    data["errata"][0]["card"] = "Nobody"
    with pytest.raises(module.CardDataError, match=r"errata\[0\]\.card: 'Nobody' names no card of this file"):
        parse(data)
