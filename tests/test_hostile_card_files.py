"""Every game's card loader on hostile and damaged files: a one-line error naming the file
and what is wrong, never a traceback, a recursion or a value taken in silence (NaN, a huge
file). R.I.P. Market's loader has its own corpus in tests/test_hostile_files.py; this one
runs the siblings' loaders and the `ripmarket cards --game G --file` command on each file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripmarket_env.app.cli import app
from ripmarket_env.games.blackmarket import cards as bm_cards
from ripmarket_env.games.runemarket import cards as rm_cards

LOADERS = {"black-market": (bm_cards.load, bm_cards.CardDataError, bm_cards.DATA),
           "rune-market": (rm_cards.load_cards, rm_cards.CardDataError, rm_cards.DATA_FILE)}


def _corpus(base: Path, packaged: Path) -> dict[str, Path]:
    text = packaged.read_text(encoding="utf-8")
    files = {
        "not_utf8": b"\xff\xfe{\"a\": 1}",
        "deep": "[" * 100_000 + "]" * 100_000,
        "deep_field": '{"point_cards": ' + "[" * 900 + "]" * 900 + "}",
        "int_5000_digits": '{"x": ' + "9" * 5000 + "}",
        "huge": " " * (12 << 20) + "{}",
        "empty": "",
        "top_list": "[1, 2]",
        "nan": re.sub(r"(: )(\d+)", r"\1NaN", text, count=3),
        "infinity": re.sub(r"(: )(\d+)", r"\1-Infinity", text, count=3),
        "float": re.sub(r"(: )(\d+)", r"\g<1>1.5", text, count=3),
        "name_object": re.sub(r'"name": "[^"]*"', '"name": {"a": [1]}', text, count=1),
        "int_400_digits": re.sub(r"(: )(\d+)", r"\g<1>" + "1" * 400, text, count=1),
        "unknown_key": json.dumps({**json.loads(text), "surprise": 1}),
    }
    out = {}
    for name, body in files.items():
        p = base / f"{name}.json"
        p.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
        out[name] = p
    out["folder"] = base
    out["missing"] = base / "missing.json"
    return out


@pytest.mark.parametrize("game", sorted(LOADERS))
def test_every_hostile_card_file_is_refused_in_one_line(tmp_path, game):
    load, error, packaged = LOADERS[game]
    for name, path in _corpus(tmp_path, Path(packaged)).items():
        with pytest.raises(error) as info:
            load(path)
        msg = str(info.value)
        assert "\n" not in msg and len(msg) < 300, f"{game} {name}: {msg[:400]}"
        assert str(path) in msg or path.name in msg or name in ("deep_field",), f"{game} {name}: {msg}"
    assert load(None).digest == load(packaged).digest  # the packaged cards still load


@pytest.mark.parametrize("game", sorted(LOADERS))
def test_the_cards_command_reports_them_without_a_traceback(tmp_path, game):
    corpus = _corpus(tmp_path, Path(LOADERS[game][2]))
    for name in ("not_utf8", "deep", "nan", "huge", "int_400_digits"):
        res = CliRunner().invoke(app, ["cards", "--game", game, "--file", str(corpus[name])])
        assert res.exit_code == 2, (name, res.output)
        assert res.output.startswith("error: ") and res.output.count("\n") == 1, (name, res.output)
