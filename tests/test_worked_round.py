"""docs/RULES.md's "A Worked Round" (the rulebook's section 10) is generated from a seeded
zoo game (agents/ripmarket/worked_round.py): the committed text must be current, and the
round it narrates must show every play, Shadow card, score, damage and the token."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.ripmarket import worked_round as W
from scenario import serial

RULES_MD = Path(__file__).resolve().parent.parent / "docs" / "RULES.md"


@pytest.fixture(scope="module")
def generated():
    with serial():
        return W.markdown()


def test_committed_worked_round_is_current(generated):
    """Staleness: regenerating the section gives the committed text (a rules, cards or zoo
    change that alters the game shows up here; regenerate with --write)."""
    doc = RULES_MD.read_text(encoding="utf-8")
    assert W.splice(doc, generated) == doc, (
        "docs/RULES.md's worked round is stale: python -m agents.ripmarket.worked_round --write docs/RULES.md")


def test_worked_round_narrates_every_move(generated):
    """The round has a haunt and round damage; every seat's play, the Shadow card, each
    score, the damage and the First Player token are narrated, in the log's order."""
    with serial():
        rl, snap, eng, names = W.worked_round()
    kinds = [e.kind for e in rl.events]
    assert "haunt" in kinds and any(x["damage"] for x in rl.seats)
    for e in rl.events:
        if e.kind not in W._SKIP:
            assert e.text_for("god") in generated
    for x in rl.seats:
        if x["competed"]:
            assert f"scores {x['score']} with" in generated
    assert "takes the First Player token" in generated and "holds the First Player token" in generated
    assert all(name in generated for name in names)
    lines = [ln for ln in generated.splitlines() if ln[:1].isdigit()]
    assert [ln.split(". ", 1)[1] for ln in lines] == [e.text_for("god") for e in rl.events if e.kind not in W._SKIP]


def test_cli_check_and_bad_documents(tmp_path, generated):
    doc = RULES_MD.read_text(encoding="utf-8")
    stale = tmp_path / "RULES.md"
    stale.write_text(W.splice(doc, "old text\n"), encoding="utf-8")
    assert W.main(["--check", str(stale)]) == 1
    assert W.main(["--write", str(stale)]) == 0 and W.main(["--check", str(stale)]) == 0
    assert W.main(["--check"]) == 2
    with pytest.raises(ValueError, match="worked-round:start"):
        W.splice("no markers here", generated)
