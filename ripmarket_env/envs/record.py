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
4. when the game is over: ``{"result": {"winners": [seats], "rewards": [...]}}``.

Records are generic over a ``GameSpec``: its ``records`` hooks (``game_log``,
``round_line``, ``result_line``, ``describe_action``, ``cards_digest``,
``default_engine_kwargs``) give the game's lines.

``Recorder`` steps a one-game ``Engine`` and writes these lines. ``replay(path, games)`` re-plays
the actions from the header's rules and seed and checks every round summary and the
result against the file; any difference, an unknown format or version, a card database
other than the current one, or a malformed line raises ``RecordError`` naming the line.
Version 1 records (round lines with scores, damage and HP only) are not read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ripmarket_env.core.engine import Engine, IllegalActionError
from ripmarket_env.core.spec import GameSpec

FORMAT = "ripmarket-record"
VERSION = 2

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
        return "".join(json.dumps(line, separators=(", ", ": ")) + "\n" for line in self.lines)

    def save(self, path) -> Path:
        path = Path(path)
        path.write_text(self.dumps(), encoding="utf-8")
        return path


def _controllers(names, players: int) -> list[str]:
    """The header's ``controllers``: one non-empty name per seat (ValueError otherwise)."""
    if not isinstance(names, (list, tuple)) or len(names) != players or not all(
            isinstance(n, str) and n.strip() for n in names):
        raise ValueError(f"controllers must list one non-empty name per seat ({players}), got {names!r}")
    return [str(n) for n in names]


# ------------------------------------------------------------------------------ replay
def read_record(path) -> list[tuple[int, dict]]:
    """The record's lines as (line number, object); RecordError on unreadable JSON."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot read record {path}: {exc}") from None
    out = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}: line {n} is not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise RecordError(f"{path}: line {n} must be a JSON object, got {type(obj).__name__}")
        out.append((n, obj))
    if not out:
        raise RecordError(f"{path}: the record is empty (no header line)")
    return out


def game_of(path, head: dict, games) -> GameSpec:
    """The GameSpec of a record's header: ``games`` is one spec or a mapping id -> spec."""
    game = head.get("game", "ripmarket")  # records before the multi-game zoo are R.I.P. Market
    if isinstance(games, GameSpec):
        if game != games.id:
            raise RecordError(f"{path}: line 1 (header): a record of game {game!r}, not {games.id!r}")
        return games
    if not isinstance(game, str) or game not in games:
        raise RecordError(
            f"{path}: line 1 (header): unknown game {game!r}; known games: {', '.join(sorted(games))}"
        )
    return games[game]


def _check_header(path, n: int, head: dict, spec: GameSpec, digest: str):
    where = f"{path}: line {n} (header)"
    if head.get("format") != FORMAT:
        raise RecordError(f"{where}: unknown format {head.get('format')!r}; expected {FORMAT!r}")
    if head.get("version") != VERSION:
        raise RecordError(
            f"{where}: unsupported record version {head.get('version')!r}; this package reads version {VERSION}"
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
    try:
        rules = spec.rules_class.from_dict(head["rules"])
    except ValueError as exc:
        raise RecordError(f"{where}: bad rules: {exc}") from None
    seed = head["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise RecordError(f"{where}: seed must be a non-negative integer, got {seed!r}")
    if head["players"] != rules.num_players:
        raise RecordError(
            f"{where}: players={head['players']!r} disagrees with rules.num_players={rules.num_players}"
        )
    if "controllers" in head:
        try:
            _controllers(head["controllers"], rules.num_players)
        except ValueError as exc:
            raise RecordError(f"{where}: {exc}") from None
    return rules, seed


def _kind(obj: dict) -> str | None:
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
        f"{k}: recorded {found.get(k, '(missing)')!r}, replayed {expected.get(k, '(missing)')!r}"
        for k in keys
        if expected.get(k, "(missing)") != found.get(k, "(missing)")
    ]
    return "; ".join(parts)


def _what(obj: dict) -> str:
    k = _kind(obj)
    if k == "round":
        return f"the summary of round {obj['round']}"
    if k == "result":
        return "the result line"
    return f"step {obj.get('step')}"


def replay(path, games, cards=None,
           on_line: Callable[[int, dict, Engine], None] | None = None) -> Engine:
    """Re-create the game of a record and verify it; returns the one-game Engine.

    ``games`` is the record's GameSpec or a mapping of registered games (id -> spec,
    ``ripmarket_env.games.registry()``); ``cards`` replaces the game's packaged card data.
    ``on_line(line_number, obj, engine)`` is called for every verified line (header
    included), after the action it describes has been taken.
    """
    lines = read_record(path)
    n0, head = lines[0]
    spec = game_of(path, head, games)
    kwargs = spec.records.default_engine_kwargs()
    if cards is not None:
        kwargs["cards"] = cards
    probe = spec.make_engine(spec.rules_class(), 1, **kwargs)
    rules, seed = _check_header(path, n0, head, spec, spec.records.cards_digest(probe))
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
        if kind == "action":
            if pending:
                raise RecordError(f"{where}: expected {_what(pending[0])} before step {obj.get('step')}")
            for key in ("seat", "action"):
                if not isinstance(obj.get(key), int) or isinstance(obj.get(key), bool):
                    raise RecordError(f"{where}: field {key!r} must be an integer, got {obj.get(key)!r}")
            if obj["step"] != rec.num_steps:
                raise RecordError(f"{where}: step {obj['step']!r} out of order; expected step {rec.num_steps}")
            if rec.done:
                raise RecordError(f"{where}: step {obj['step']} comes after the end of the game")
            actor = int(rec.engine.current_player()[0])
            if obj["seat"] != actor:
                raise RecordError(
                    f"{where}: step {obj['step']} is recorded for seat {obj['seat']} "
                    f"but seat {actor} decides here"
                )
            try:
                rec.step(obj["action"])
            except IllegalActionError as exc:
                raise RecordError(f"{where}: {exc}") from None
            produced = rec.lines[pos:]
            pos = len(rec.lines)
            if produced[0] != obj:
                raise RecordError(f"{where}: step {obj['step']} differs: {_diff(produced[0], obj)}")
            pending = produced[1:]
        else:
            if not pending:
                if kind == "round":
                    raise RecordError(
                        f"{where}: a summary of round {obj['round']!r} is recorded here, "
                        "but the replayed game did not resolve a round at this point"
                    )
                raise RecordError(f"{where}: a result is recorded here, but the replayed game has not ended")
            expected = pending.pop(0)
            if expected != obj:
                if _kind(expected) != kind:
                    raise RecordError(f"{where}: expected {_what(expected)}, found {_what(obj)}")
                raise RecordError(f"{where}: {_what(obj)} does not match the replay: {_diff(expected, obj)}")
        if on_line is not None:
            on_line(n, obj, rec.engine)
    if pending:
        raise RecordError(f"{path}: the record ends early: {_what(pending[0])} is missing")
    return rec.engine
