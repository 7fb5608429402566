"""Every game's card loader on hostile and damaged files: a one-line error naming the file
and the field, never a traceback, a recursion or a value taken in silence (NaN, a huge
file, an unknown field). The loaders are found through the registry: every game whose spec
has a ``card_reference`` hook (``ripmarket cards --game G --file F``); the corpus is made
from the game's packaged card file. R.I.P. Market's loader has a further corpus of its own
in tests/test_hostile_files.py."""

from __future__ import annotations

import importlib
import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripmarket_env.app.cli import app
from ripmarket_env.core.jsonfile import MAX_DATA_FILE_BYTES
from ripmarket_env.games import get, ids

GAMES = [g for g in ids() if get(g).extras.get("card_reference") is not None]


def _packaged(game: str) -> Path:
    """The game's packaged card file: the ``cards.json`` of its package."""
    pkg = Path(importlib.import_module(get(game).engine_class.__module__).__file__).parent
    return sorted(pkg.rglob("cards.json"))[0]


def _leaves(data, want) -> list[tuple[str, str]]:
    """(path, key) of every leaf for which ``want(value)`` holds, in file order; paths in
    the loaders' notation (``point_cards[3].effect.amount``)."""
    out, stack = [], [("", data, "")]
    while stack:
        where, v, key = stack.pop()
        if isinstance(v, dict):
            stack.extend((f"{where}.{k}" if where else k, x, k) for k, x in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x, key) for i, x in reversed(list(enumerate(v))))
        elif want(v):
            out.append((where, key))
    return out


def _with(data, where: str, value):
    """A copy of ``data`` with the leaf at ``where`` set to ``value``."""
    data = json.loads(json.dumps(data))
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", where)
    cur = data
    for p in parts[:-1]:
        cur = cur[int(p[1:-1])] if p.startswith("[") else cur[p]
    last = parts[-1]
    cur[int(last[1:-1]) if last.startswith("[") else last] = value
    return data


def _corpus(base: Path, packaged: Path) -> dict[str, tuple[Path, str | None]]:
    """name -> (file, the field its message must name, or None for a whole-file problem)."""
    text = packaged.read_text(encoding="utf-8")
    data = json.loads(text)
    ints = _leaves(data, lambda v: isinstance(v, int) and not isinstance(v, bool))
    strs = _leaves(data, lambda v: isinstance(v, str) and v)
    (num, num_key), (word, word_key) = ints[-1], strs[-1]  # deep in the file: not the version
    first_card = next(k for k, v in data.items() if isinstance(v, list) and v and isinstance(v[0], dict))
    mark = '"@@here@@"'
    dup_key = next(iter(data[first_card][0]))
    name = [w for w, k in strs if k == "name"][-1]  # the last card name of the file
    text = [w for w, k in strs if k == "text"][-1]

    def at(where, raw):  # the file with ``raw`` JSON text (NaN, deep brackets) at ``where``
        return json.dumps(_with(data, where, "@@here@@")).replace(mark, raw)

    files = {
        "not_utf8": (b"\xff\xfe{\"a\": 1}", None),
        "deep": ("[" * 100_000 + "]" * 100_000, None),
        "deep_field": (at(word, "[" * 100_000 + "]" * 100_000), None),
        "deep_within_limits": (at(word, "[" * 900 + "]" * 900), word_key),
        "int_5000_digits": (at(num, "9" * 5000), num),
        "huge": (" " * (MAX_DATA_FILE_BYTES + 1) + "{}", None),
        "empty": ("", None),
        "top_list": ("[1, 2]", None),
        "top_string": ('"cards"', None),
        "nan": (at(num, "NaN"), num),
        "infinity": (at(num, "-Infinity"), num),
        "float": (json.dumps(_with(data, num, 1.5)), num_key),
        "int_as_string": (json.dumps(_with(data, num, "3")), num_key),
        "int_400_digits": (at(num, "1" * 400), num_key),
        "text_object": (json.dumps(_with(data, word, {"a": [1]})), word_key),
        "null_field": (json.dumps(_with(data, word, None)), word_key),
        "unknown_key": (json.dumps({**data, "surprise": 1}), "surprise"),
        "unknown_card_field": (json.dumps({**data, first_card: [{**data[first_card][0], "surprise": 1},
                                                                 *data[first_card][1:]]}), "surprise"),
        "cards_not_a_list": (json.dumps({**data, first_card: {"a": 1}}), first_card),
        "card_not_an_object": (json.dumps({**data, first_card: [7, *data[first_card][1:]]}), None),
        # a name or text that would break a table, a terminal or a page that shows it
        "name_escape": (json.dumps(_with(data, name, "Grave\x1b[2J\x1b[31mDigger")), "name"),
        "name_reversed": (json.dumps(_with(data, name, "Grave \u202eDigger")), "name"),
        "name_long": (json.dumps(_with(data, name, "Grave Digger " * 400)), "name"),
        "text_line_break": (json.dumps(_with(data, text, "Score 1.\nScore 2.")), "text"),
        # Python's parser keeps a repeated key's last value; a card file may not repeat one
        "duplicate_key": (json.dumps(data).replace(f'"{first_card}": [{{', f'"{first_card}": [{{"{dup_key}": '
                                                   f'{json.dumps(data[first_card][0][dup_key])}, ', 1), dup_key),
    }
    out = {}
    for name, (body, field) in files.items():
        p = base / f"{name}.json"
        p.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
        out[name] = (p, field)
    out["folder"] = (base, None)
    out["missing"] = (base / "missing.json", None)
    out["device"] = (Path("/dev/zero"), None)  # no size to stat, and no end: read up to the cap only
    os.mkfifo(base / "pipe.json")  # opening a named pipe would wait for a writer: refused before it is opened
    out["named_pipe"] = (base / "pipe.json", None)
    return out


def _problems(name: str, path: Path, field: str | None, msg: str) -> list[str]:
    out = []
    if "\n" in msg.strip() or len(msg) > 400 or "Traceback" in msg:
        out.append(f"{name}: not one short line: {msg[:400]!r}")
    if str(path) not in msg and path.name not in msg:
        out.append(f"{name}: does not name the file: {msg[:300]!r}")
    if field is not None and field not in msg:
        out.append(f"{name}: does not name the field {field!r}: {msg[:300]!r}")
    return out


def test_every_game_with_card_files_is_checked():
    assert len(GAMES) >= 3 and all(_packaged(g).is_file() for g in GAMES)


@pytest.mark.parametrize("game", GAMES)
def test_every_hostile_card_file_is_refused_in_one_line(tmp_path, game):
    hook = get(game).extras["card_reference"]
    packaged = _packaged(game)
    problems = []
    for name, (path, field) in _corpus(tmp_path, packaged).items():
        try:
            hook(path)
        except ValueError as exc:  # every game's CardDataError is a ValueError
            problems += _problems(name, path, field, str(exc))
        except Exception as exc:  # anything else would be a traceback for the user
            problems.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
        else:
            problems.append(f"{name}: accepted")
    assert not problems, "\n".join(problems)
    assert hook(None)[0] == hook(packaged)[0]  # the packaged cards still load


@pytest.mark.parametrize("game", GAMES)
def test_the_cards_command_reports_them_without_a_traceback(tmp_path, game):
    corpus = _corpus(tmp_path, _packaged(game))
    for name in ("not_utf8", "deep", "deep_field", "nan", "huge", "int_400_digits", "unknown_card_field", "device"):
        path, field = corpus[name]
        res = CliRunner().invoke(app, ["cards", "--game", game, "--file", str(path)])
        assert res.exit_code == 2, (name, res.output)
        assert res.output.startswith("error: ") and res.output.count("\n") == 1, (name, res.output)
        assert not _problems(name, path, field, res.output), res.output


@pytest.mark.parametrize("value, limit, empty, problem", [
    ("Grave Digger", 48, False, None),
    ("", 1000, True, None),
    ("Stille Nacht \u2013 \u6b7b\u8005 \U0001f480", 48, False, None),  # any printable script or symbol
    ("", 48, False, "non-empty"),
    ("   ", 48, False, "non-empty"),
    ("x" * 49, 48, False, "49 characters"),
    ("a\tb", 48, False, "U+0009"),
    ("a\x1b[2Jb", 1000, True, "U+001B"),
    ("a\u2028b", 1000, True, "U+2028"),
    ("left \u2067right", 1000, True, "U+2067"),
    (7, 48, False, "got int 7"),
    (None, 1000, True, "got NoneType None"),
])
def test_text_problem_refuses_what_would_break_a_line(value, limit, empty, problem):
    """``core.jsonfile.text_problem``, the card loaders' one check of names and texts: one
    short line of printable characters (any script), or what is wrong with it."""
    from ripmarket_env.core.jsonfile import text_problem

    got = text_problem(value, limit, empty=empty)
    assert (got is None) if problem is None else (problem in got and "without control characters" in got), got


def test_a_card_file_says_what_a_designer_got_wrong(tmp_path):
    """A card file that is empty, of another game, with a card listed twice, or with a
    misspelt field says so in those words (not only "Expecting value" or "field 'points' is
    missing")."""
    import json
    from pathlib import Path

    import ripmarket_env
    from ripmarket_env.games import get

    root = Path(ripmarket_env.__file__).parent / "games"
    files = {"ripmarket": root / "ripmarket/cards/cards.json", "black-market": root / "blackmarket/cards.json",
             "rune-market": root / "runemarket/cards.json"}
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    for game, own in files.items():
        load = get(game).card_files.load if get(game).card_files else get(game).extras["card_reference"]
        with pytest.raises(ValueError, match="the file is empty"):
            load(empty)
        for other, path in files.items():
            if other != game and other != "ripmarket":  # R.I.P. Market's file names no game
                with pytest.raises(ValueError, match=f"a card file of '{other}', not of .*--game {other} reads it"):
                    load(path)
    bm = json.loads(files["black-market"].read_text())
    twice = {**bm, "point_cards": [bm["point_cards"][0], *bm["point_cards"]]}
    typo = {**bm, "point_cards": [{("pionts" if k == "points" else k): v for k, v in bm["point_cards"][0].items()},
                                  *bm["point_cards"][1:]]}
    for data, words in ((twice, "a card listed twice"), (typo, "'pionts' is not a field of this card")):
        (tmp_path / "bm.json").write_text(json.dumps(data))
        with pytest.raises(ValueError, match=words):
            get("black-market").extras["card_reference"](tmp_path / "bm.json")
    rip = json.loads(files["ripmarket"].read_text())
    (tmp_path / "rip.json").write_text(json.dumps({**rip, "living": [rip["living"][0], *rip["living"]]}))
    with pytest.raises(ValueError, match="a card listed twice"):
        get("ripmarket").card_files.load(tmp_path / "rip.json")
    rm = json.loads(files["rune-market"].read_text())
    del rm["deck"][0]["copies"]
    (tmp_path / "rm.json").write_text(json.dumps(rm))
    with pytest.raises(ValueError, match="field 'copies'.*is missing; allowed: an integer from 0 to 12"):
        get("rune-market").extras["card_reference"](tmp_path / "rm.json")
