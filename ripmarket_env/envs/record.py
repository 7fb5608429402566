"""Game records: one game as JSON lines, and replays that re-create and verify it.

A record is a text file, one JSON object per line:

1. the header: ``{"format": "ripmarket-record", "version": 2, "game": "ripmarket",
   "rules": {...}, "cards_digest": "...", "seed": 17, "players": 4, "package_version": "0.1.0"}``
   (``game`` is the registry id of the game, ``ripmarket`` for records written before it
   was added; ``rules`` is the rules config's ``to_dict()``, ``cards_digest`` the digest
   of the game's card data), and, when known, ``"controllers": ["person", "greedy", ...]``:
   who played each seat (``"person"`` or the bot's registry name);
2. one line per agent decision: ``{"step": i, "seat": s, "action": a, "desc": "..."}``
   (``desc`` names it in words, hidden cards included: a record is the full game);
3. after the step that resolved a round, one line per resolved round, built from the
   engine's event log by the game (R.I.P. Market: ``games/ripmarket/records.py``):
   ``{"round": k, "rule": "...", "cards": [...], "targets": [...], "haunted_by": [[...]],
   "scores": [...], "damage": [...], "hp": [...], "died": [seats], "first_player": s,
   "log": ["...", ...]}``: per seat the card on the table at resolution (``Name (value)``,
   null for none), the seat its choice named (or null) and the Shadow cards attached;
   ``scores[s]`` is null for a seat that did not compete; ``damage`` is round damage,
   ``hp`` after the round, ``died`` the seats that died in the resolution,
   ``first_player`` the holder of the token after the round; ``log`` is every event of
   the round in words, hidden cards included (a record is the full game). The 2-player
   epilogue round carries ``"epilogue": true``;
4. when the game is over: ``{"result": {"winners": [seats], "rewards": [...]}}``;
5. last, the end marker: ``{"end": {"lines": n, "sha256": "..."}}``: ``n`` lines came
   before it and ``sha256`` is the hex digest of their text (each line's JSON and a
   ``"\n"``, UTF-8). A record saved mid-game has one too: it is complete as saved.

Records are generic over a ``GameSpec``: its ``records`` hooks (``game_log``,
``round_line``, ``result_line``, ``describe_action``, ``cards_digest``,
``default_engine_kwargs``) give the game's lines; an optional ``same_line(replayed,
recorded)`` accepts a recorded line in a game's earlier words for its events (R.I.P.
Market's grace round was reworded), so records written before still verify.

``Recorder`` steps a one-game ``Engine`` and writes these lines; ``Recorder.save`` writes
atomically (a temporary file in the same folder, then ``os.replace``) and, with
``overwrite=False``, never replaces an existing file. ``replay(path, games)`` re-plays the
actions from the header's rules and seed and checks every round summary, the result
and the end marker against the file; any difference, an unknown format or version, a
card database other than the current one, or a malformed line raises ``RecordError``
naming the line. A record without its end marker (cut at a line boundary, or a header
alone) or with a line cut in half raises ``RecordError`` saying it is truncated; lines
after the marker or a digest that differs say the file was altered. Files that are not
UTF-8 text, larger than ``MAX_RECORD_BYTES`` or nested too deeply are refused the same
way. Version 2 records (written before the end marker existed) still replay, with a
note (``notes``) that their completeness cannot be checked. Version 1 records (round
lines with scores, damage and HP only) are not read.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ripmarket_env.core.engine import Engine, IllegalActionError
from ripmarket_env.core.jsonfile import TooLarge, loads, read_capped, short as _short
from ripmarket_env.core.spec import GameSpec

FORMAT = "ripmarket-record"
VERSION = 3
#: Versions ``replay`` reads: 3 (end marker and digest) and 2 (the same lines without them).
READABLE_VERSIONS = (2, 3)
END = "end"
#: A record longer than this is not a game record (a 10-player game of 100 rounds is ~3 MB).
MAX_RECORD_BYTES = 64 << 20

__all__ = ["FORMAT", "VERSION", "RecordError", "Recorder", "replay", "read_record"]


class RecordError(ValueError):
    """A record that cannot be read or does not replay to the game it describes."""


def _package_version() -> str:
    from ripmarket_env.core import __version__

    return __version__


# ------------------------------------------------------------------------------ recorder
class Recorder:
    """Steps a one-game ``Engine`` and keeps the game's record lines.

    >>> rec = Recorder.new(RulesConfig(num_players=4), seed=7)   # the rules' game (rules.spec)
    >>> rec.step(rec.engine.legal_actions(0)[0])
    >>> rec.save("game.jsonl")

    ``Recorder(engine)`` adopts an engine whose game has just been reset (no decision
    taken yet); its seed is read from ``engine.seeds``.
    """

    def __init__(self, engine: Engine, seed: int | None = None, spec: GameSpec | None = None,
                 controllers: list[str] | None = None):
        if not isinstance(engine, Engine):
            raise TypeError(f"Recorder needs an Engine, got {type(engine).__name__}")
        spec = spec if spec is not None else getattr(engine, "spec", None)
        if not isinstance(spec, GameSpec):
            raise TypeError("Recorder needs the game's GameSpec (spec=...)")
        self.spec = spec
        self.hooks = spec.records
        if engine.batch_size != 1:
            raise ValueError(f"Recorder records one game: the engine has batch_size={engine.batch_size}")
        if seed is not None:
            engine.reset([int(seed)])
        elif int(engine.seeds[0]) < 0:
            raise ValueError("the engine has no game yet: pass seed=... or reset it first")
        elif int(engine.state[0]["steps"]) != 0:
            raise ValueError("the engine's game has already started; a record must start at the reset")
        self.engine = engine
        self.seed = int(engine.seeds[0])
        self.lines: list[dict] = [{
            "format": FORMAT,
            "version": VERSION,
            "game": spec.id,
            "rules": engine.rules.to_dict(),
            "cards_digest": self.hooks.cards_digest(engine),
            "seed": self.seed,
            "players": engine.num_players,
            "package_version": _package_version(),
        }]
        if controllers is not None:
            self.lines[0]["controllers"] = _controllers(controllers, engine.num_players)
        self.num_steps = 0
        #: The game's event log, and what the latest step (or the reset) did, in order:
        #: ("event", Event) and ("round", RoundLog) items (``GameLog.items``).
        self.log = self.hooks.game_log(engine, 0)
        self.last_items: list[tuple[str, object]] = self.log.items(engine.events(0))
        self._add_rounds()
        self._finish_if_done()

    @classmethod
    def new(cls, rules, seed: int, cards=None, spec: GameSpec | None = None, controllers: list[str] | None = None,
            **engine_kwargs) -> "Recorder":
        """A Recorder over a fresh one-game Engine of the rules' game started from ``seed``
        (``cards``: the game's card data, default the packaged cards); ``controllers`` names
        who plays each seat (``"person"`` or a bot name) in the header."""
        spec = spec if spec is not None else getattr(rules, "spec", None)
        if not isinstance(spec, GameSpec):
            raise TypeError("Recorder.new needs the game's GameSpec (spec=...) or rules of a registered game")
        if cards is not None:
            engine_kwargs["cards"] = cards
        return cls(spec.make_engine(rules, 1, **engine_kwargs), seed=seed, spec=spec, controllers=controllers)

    @property
    def done(self) -> bool:
        return bool(self.engine.state[0]["done"])

    def step(self, action: int) -> tuple[np.ndarray, np.ndarray]:
        """Take one decision (IllegalActionError if it is not legal) and record it."""
        eng = self.engine
        a = int(action)
        legal = eng.legal_actions(0)
        if a not in legal:  # also catches -1, which Engine.step reads as "skip this game"
            phase = "game_over" if eng.terminated[0] else eng.phase()[0]
            raise IllegalActionError(0, a, legal, phase, eng.describe_action)
        seat = int(eng.current_player()[0])
        desc = self.hooks.describe_action(eng, a)
        out = eng.step(np.array([a], dtype=np.int64))
        self.lines.append({"step": self.num_steps, "seat": seat, "action": a, "desc": desc})
        self.num_steps += 1
        self.last_items = self.log.items(eng.events(0))
        self._add_rounds()
        self._finish_if_done()
        return out

    def _add_rounds(self) -> None:
        for kind, item in self.last_items:
            if kind == "round":
                self.lines.append(self.hooks.round_line(self.engine, item))

    def _finish_if_done(self) -> None:
        if self.done and "result" not in self.lines[-1]:
            self.lines.append(self.hooks.result_line(self.engine))

    def dumps(self) -> str:
        """The record's text: every line, then the end marker with their count and digest."""
        body = "".join(_line_text(line) for line in self.lines)
        return body + _line_text(end_line(body, len(self.lines)))

    def save(self, path, overwrite: bool = True) -> Path:
        """Write the record to ``path`` atomically: readers see the old file or the whole
        new one, never part of it. ``overwrite=False`` raises ``FileExistsError`` instead of
        replacing an existing file (checked and written in one step). A path that exists as
        something else than a file (a folder, a device, a named pipe) raises ``ValueError``:
        replacing it would put a file where ``/dev/full`` was."""
        path = Path(path)
        if path.exists() and not path.is_file():
            from ripmarket_env.core.jsonfile import why_not_a_file

            raise ValueError(f"cannot save a record to {path}: it {why_not_a_file(path)}; give a file name")
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent if str(path.parent) else ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(self.dumps())
                f.flush()
                os.fsync(f.fileno())
            if overwrite:
                os.replace(tmp, path)
            else:
                try:
                    os.link(tmp, path)  # fails with FileExistsError if path exists
                except FileExistsError:
                    raise
                except OSError:  # a file system without hard links: exclusive create
                    with open(path, "x", encoding="utf-8", newline="\n") as f:
                        f.write(self.dumps())
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return path


def _controllers(names, players: int) -> list[str]:
    """The header's ``controllers``: one non-empty name per seat (ValueError otherwise)."""
    if not isinstance(names, (list, tuple)) or len(names) != players or not all(
            isinstance(n, str) and n.strip() for n in names):
        raise ValueError(f"controllers must list one non-empty name per seat ({players}), got {_short(names)}")
    return [str(n) for n in names]


def _line_text(line: dict) -> str:
    return json.dumps(line, separators=(", ", ": ")) + "\n"


def end_line(body: str, n_lines: int) -> dict:
    """The end marker of a record whose lines before it are ``body`` (``n_lines`` lines)."""
    return {END: {"lines": n_lines, "sha256": hashlib.sha256(body.encode("utf-8")).hexdigest()}}


# ------------------------------------------------------------------------------ replay
def _read(path) -> list[tuple[int, dict, str]]:
    """(line number, object, text) of every non-blank line; RecordError on anything that
    is not a record's text."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_RECORD_BYTES:
            raise RecordError(f"{path}: {size:,} bytes is too large for a game record (at most {MAX_RECORD_BYTES:,})")
        data = read_capped(path, MAX_RECORD_BYTES)
    except TooLarge:  # grown since the stat, or a device or pipe
        raise RecordError(f"{path}: more than {MAX_RECORD_BYTES:,} bytes is too large for a game record") from None
    except OSError as exc:
        raise RecordError(f"cannot read record {path}: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise RecordError(f"{path}: not a game record (binary data; a record is UTF-8 JSON lines)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); a record is UTF-8 JSON lines") from None
    raws = [(n, raw.rstrip("\r")) for n, raw in enumerate(text.split("\n"), start=1) if raw.strip()]
    out = []
    for i, (n, raw) in enumerate(raws):
        try:
            obj = loads(raw)
        except RecursionError:
            raise RecordError(f"{path}: line {n} is nested too deeply to be a record line") from None
        except json.JSONDecodeError as exc:
            if i == len(raws) - 1 and not text.endswith("\n"):
                raise RecordError(f"{path}: truncated: the last line ({n}) is cut off") from None
            raise RecordError(f"{path}: line {n} is not valid JSON ({exc.msg})") from None
        except ValueError as exc:  # NaN, an integer of more than 4,300 digits, a repeated key: in its field
            raise RecordError(f"{path}: line {n}: {exc}") from None
        if not isinstance(obj, dict):
            raise RecordError(f"{path}: line {n} must be a JSON object, got {type(obj).__name__}")
        out.append((n, obj, raw))
    if not out:
        raise RecordError(f"{path}: the record is empty (no header line)")
    return out


def game_of(path, head: dict, games) -> GameSpec:
    """The GameSpec of a record's header: ``games`` is one spec or a mapping id -> spec."""
    # A record written before records named their game is the zoo's first game's (the first
    # registered: R.I.P. Market), from before the others existed.
    game = head.get("game", games.id if isinstance(games, GameSpec) else next(iter(games)))
    if isinstance(games, GameSpec):
        if game != games.id:
            raise RecordError(f"{path}: line 1 (header): a record of game {_short(game)}, not {games.id!r}")
        return games
    if not isinstance(game, str) or game not in games:
        raise RecordError(
            f"{path}: line 1 (header): unknown game {_short(game)}; known games: {', '.join(sorted(games))}"
        )
    return games[game]


def read_record(path) -> list[tuple[int, dict]]:
    """The record's lines as (line number, object), the end marker included; RecordError
    on a file that is not JSON lines."""
    return [(n, obj) for n, obj, _ in _read(path)]


def _check_end(path, lines: list[tuple[int, dict, str]]) -> list[tuple[int, dict, str]]:
    """The lines before a version-3 record's end marker, after checking the marker is
    there, last and well formed (its count and digest are checked after the replay)."""
    ends = [i for i, (_, obj, _) in enumerate(lines) if END in obj]
    if not ends:
        last = lines[-1][0]
        what = "only its header" if len(lines) == 1 else f"{len(lines)} lines, the last one line {last}"
        raise RecordError(f"{path}: truncated: the record has no end marker ({what}); "
                          "the file was cut short, some lines are missing")
    i = ends[0]
    n, obj, _ = lines[i]
    if i != len(lines) - 1:
        raise RecordError(f"{path}: line {lines[i + 1][0]} comes after the end marker (line {n}); the file was altered")
    end = obj[END]
    if not (isinstance(end, dict) and isinstance(end.get("lines"), int) and not isinstance(end.get("lines"), bool)
            and isinstance(end.get("sha256"), str) and len(obj) == 1):
        raise RecordError(f"{path}: line {n}: the end marker must be {{\"end\": {{\"lines\": N, \"sha256\": HEX}}}}")
    return lines[:i]


def _check_digest(path, body: list[tuple[int, dict, str]], end: dict) -> None:
    """After the replay (which names a missing or changed line best): the count and the
    digest of the end marker."""
    if end["lines"] != len(body):
        raise RecordError(f"{path}: the end marker counts {end['lines']} lines before it, the file has {len(body)}; "
                          + ("truncated: some lines are missing" if end["lines"] > len(body) else "the file was altered"))
    text = "".join(raw + "\n" for _, _, raw in body)
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != end["sha256"]:
        raise RecordError(f"{path}: the record's digest differs from its end marker: the file was altered or damaged")


def _check_header(path, n: int, head: dict, spec: GameSpec, digest: str):
    where = f"{path}: line {n} (header)"
    if "format" not in head:
        raise RecordError(f"{where}: no 'format' field: not a game record (a record's first line has "
                          f"format {FORMAT!r}; `ripmarket play --save FILE` writes one)")
    if head.get("format") != FORMAT:
        raise RecordError(f"{where}: unknown format {_short(head.get('format'))}; expected {FORMAT!r}")
    if head.get("version") not in READABLE_VERSIONS or isinstance(head.get("version"), bool):
        raise RecordError(
            f"{where}: unsupported record version {_short(head.get('version'))}; this package reads versions "
            f"{' and '.join(map(str, READABLE_VERSIONS))}"
        )
    missing = [k for k in ("rules", "cards_digest", "seed", "players") if k not in head]
    if missing:
        raise RecordError(f"{where}: missing field(s) {', '.join(missing)}")
    if head["cards_digest"] != digest:
        raise RecordError(
            f"{where}: the record was made with a different card database "
            f"(digest {str(head['cards_digest'])[:12]}..., current {digest[:12]}...); "
            "it cannot be replayed with these cards"
        )
    if not isinstance(head["rules"], dict):
        raise RecordError(f"{where}: bad rules: expected a mapping of rule options, got {type(head['rules']).__name__}")
    try:
        rules = spec.rules_class.from_dict(head["rules"])
    except (TypeError, ValueError) as exc:
        raise RecordError(f"{where}: bad rules: {' '.join(str(exc).split())[:300]}") from None
    seed = head["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0 or seed.bit_length() > 256:
        raise RecordError(f"{where}: seed must be a non-negative integer below 2**256, got {_short(seed)}")
    if head["players"] != rules.num_players:
        raise RecordError(
            f"{where}: players={_short(head['players'])} disagrees with rules.num_players={rules.num_players}"
        )
    if "controllers" in head:
        try:
            _controllers(head["controllers"], rules.num_players)
        except ValueError as exc:
            raise RecordError(f"{where}: {exc}") from None
    return rules, seed


def _kind(obj: dict) -> str | None:
    if END in obj:
        return "end"
    if "step" in obj:
        return "action"
    if "round" in obj:
        return "round"
    if "result" in obj:
        return "result"
    return None


def _diff(expected: dict, found: dict) -> str:
    keys = sorted(set(expected) | set(found))
    parts = [
        f"{k if isinstance(k, str) and len(k) <= 40 else _short(k, 40)}: recorded {_short(found.get(k, '(missing)'), 200)}, "
        f"replayed {_short(expected.get(k, '(missing)'), 200)}"
        for k in keys
        if expected.get(k, "(missing)") != found.get(k, "(missing)")
    ]
    return "; ".join(parts[:6]) + (f"; and {len(parts) - 6} more fields" if len(parts) > 6 else "")


def _what(obj: dict) -> str:
    k = _kind(obj)
    if k == "round":
        return f"the summary of round {_short(obj['round'])}"
    if k == "result":
        return "the result line"
    return f"step {_short(obj.get('step'))}"


def replay(path, games, cards=None,
           on_line: Callable[[int, dict, Engine], None] | None = None,
           notes: list[str] | None = None) -> Engine:
    """Re-create the game of a record and verify it; returns the one-game Engine.

    ``games`` is the record's GameSpec or a mapping of registered games (id -> spec,
    ``ripmarket_env.games.registry()``); ``cards`` replaces the game's packaged card data.
    ``on_line(line_number, obj, engine)`` is called for every verified line (header
    included, end marker not), after the action it describes has been taken. ``notes``,
    if given, receives what the user should know about a record that replays (a version
    2 record's completeness cannot be checked).
    """
    raw_lines = _read(path)
    n0, head, _ = raw_lines[0]
    if head.get("version") == VERSION and head.get("format") == FORMAT:
        body = _check_end(path, raw_lines)
        end = raw_lines[-1][1][END]
    else:
        body, end = raw_lines, None
    lines = [(n, obj) for n, obj, _ in body]
    spec = game_of(path, head, games)
    kwargs = spec.records.default_engine_kwargs()
    if cards is not None:
        kwargs["cards"] = cards
    probe = spec.make_engine(spec.rules_class(), 1, **kwargs)
    rules, seed = _check_header(path, n0, head, spec, spec.records.cards_digest(probe))
    # a game whose event words were reworded since a record was written says which older
    # words mean the same (its records hook ``same_line(replayed, recorded)``)
    same_line = getattr(spec.records, "same_line", lambda replayed, recorded: False)
    if end is None and notes is not None:
        notes.append(f"version {head['version']} record (written before records had an end marker): a record cut "
                     "short at a line boundary cannot be told from a complete one")
    rec = Recorder(spec.make_engine(rules, 1, **kwargs), seed=seed, spec=spec, controllers=head.get("controllers"))
    if on_line is not None:
        on_line(n0, head, rec.engine)
    pending: list[dict] = list(rec.lines[1:])  # lines the replay produced that the record must show next
    pos = len(rec.lines)
    for n, obj in lines[1:]:
        where = f"{path}: line {n}"
        kind = _kind(obj)
        if kind is None:
            raise RecordError(f"{where}: not a record line (expected a step, round or result object)")
        if kind == "end":  # only a version-2 record gets here: it has no end marker
            raise RecordError(f"{where}: an end marker in a version {head['version']} record")
        if kind == "action":
            if pending:
                raise RecordError(f"{where}: expected {_what(pending[0])} before step {_short(obj.get('step'))}")
            for key in ("seat", "action"):
                if not isinstance(obj.get(key), int) or isinstance(obj.get(key), bool):
                    raise RecordError(f"{where}: field {key!r} must be an integer, got {_short(obj.get(key))}")
            if obj["step"] != rec.num_steps:
                raise RecordError(f"{where}: step {_short(obj['step'])} out of order; expected step {rec.num_steps}")
            if rec.done:
                raise RecordError(f"{where}: step {_short(obj['step'])} comes after the end of the game")
            actor = int(rec.engine.current_player()[0])
            if obj["seat"] != actor:
                raise RecordError(
                    f"{where}: step {_short(obj['step'])} is recorded for seat {_short(obj['seat'])} "
                    f"but seat {actor} decides here"
                )
            try:
                rec.step(obj["action"])
            except IllegalActionError as exc:
                raise RecordError(f"{where}: {exc}") from None
            produced = rec.lines[pos:]
            pos = len(rec.lines)
            if produced[0] != obj:
                raise RecordError(f"{where}: step {_short(obj['step'])} differs: {_diff(produced[0], obj)}")
            pending = produced[1:]
        else:
            if not pending:
                if kind == "round":
                    raise RecordError(
                        f"{where}: a summary of round {_short(obj['round'])} is recorded here, "
                        "but the replayed game did not resolve a round at this point"
                    )
                raise RecordError(f"{where}: a result is recorded here, but the replayed game has not ended")
            expected = pending.pop(0)
            if expected != obj and not same_line(expected, obj):
                if _kind(expected) != kind:
                    raise RecordError(f"{where}: expected {_what(expected)}, found {_what(obj)}")
                raise RecordError(f"{where}: {_what(obj)} does not match the replay: {_diff(expected, obj)}")
        if on_line is not None:
            on_line(n, obj, rec.engine)
    if pending:
        raise RecordError(f"{path}: the record ends early: {_what(pending[0])} is missing")
    if end is not None:
        _check_digest(path, body, end)
    return rec.engine
