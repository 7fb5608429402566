"""Where the server keeps its games: one SQLite file (stdlib ``sqlite3``).

One table, ``games``, one row per game of any registered game, keyed by the game's id
(``game``, the registry id) and its ``game_id``. A live game is stored as what is needed to rebuild it exactly: its
settings, its seed and every seat's actions so far (``TableSession(..., steps=...)``
re-plays them, no bot is asked again); the row is rewritten after every answered
decision, in one transaction, before the answer is sent. A finished game keeps its
record and its final view (what its seat saw), so it can be fetched without rebuilding
it. Seat tokens are stored as SHA-256 digests only.

Why SQLite: it ships with Python, it is one file with no server to run, every write is
an atomic, durable transaction (a crash mid-write leaves the previous state, never a
torn file), and the WAL journal lets reads go on during a write. The server's load is
a few small writes per second, far within what one SQLite file does.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GameRow", "Store", "StoreError", "token_digest"]

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    game        TEXT NOT NULL,          -- the registry id of the game played
    game_id     TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL,
    client      TEXT NOT NULL,
    players     INTEGER NOT NULL,
    seat        INTEGER NOT NULL,
    opponents   TEXT NOT NULL,          -- JSON list of bot names
    seed        TEXT NOT NULL,          -- decimal: seeds are wider than SQLite's integers
    practice    INTEGER NOT NULL,
    rules       TEXT NOT NULL,          -- JSON object: the rules config's fields chosen at setup
    steps       TEXT NOT NULL,          -- JSON list: every seat's actions so far
    status      TEXT NOT NULL,          -- live | over | expired
    created     REAL NOT NULL,          -- wall-clock seconds
    last_action REAL NOT NULL,
    ended       REAL,
    end_reason  TEXT,
    record      TEXT,                   -- the game record (finished games)
    final_view  TEXT                    -- JSON: the seat's view at the end (finished games)
);
CREATE INDEX IF NOT EXISTS games_status ON games (status);
CREATE INDEX IF NOT EXISTS games_game ON games (game, status);
"""


class StoreError(RuntimeError):
    """The game store cannot be opened or written; the message names the file."""


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass
class GameRow:
    game: str
    game_id: str
    token_hash: str
    client: str
    players: int
    seat: int
    opponents: list[str]
    seed: int
    practice: bool
    rules: dict
    steps: list[int]
    status: str
    created: float
    last_action: float
    ended: float | None = None
    end_reason: str | None = None
    record: str | None = None
    final_view: dict | None = None
    error: str | None = None  # why the stored row cannot be read, in words


_COLUMNS = ("game", "game_id", "token_hash", "client", "players", "seat", "opponents", "seed", "practice", "rules",
            "steps", "status", "created", "last_action", "ended", "end_reason", "record", "final_view")


def _row(r: sqlite3.Row) -> GameRow:
    """The row, or one with ``error`` saying which field of it is unreadable (the game then
    answers 410 with the reason; the other games are not affected)."""
    try:
        created, last = float(r["created"]), float(r["last_action"])
    except (TypeError, ValueError):
        created = last = 0.0
    out = GameRow(game=str(r["game"]), game_id=str(r["game_id"]), token_hash=str(r["token_hash"]),
                  client=str(r["client"]), players=0, seat=0, opponents=[], seed=0, practice=False, rules={},
                  steps=[], status=str(r["status"]), created=created, last_action=last, ended=r["ended"],
                  end_reason=r["end_reason"], record=r["record"])
    try:
        out.players, out.seat = int(r["players"]), int(r["seat"])
        out.opponents = json.loads(r["opponents"])
        out.seed = int(r["seed"])
        out.practice = bool(r["practice"])
        out.rules = json.loads(r["rules"])
        out.steps = json.loads(r["steps"])
        out.final_view = json.loads(r["final_view"]) if r["final_view"] is not None else None
        if not (isinstance(out.opponents, list) and all(isinstance(x, str) for x in out.opponents)):
            raise ValueError("opponents is not a list of bot names")
        if not (isinstance(out.steps, list) and all(type(x) is int for x in out.steps)):
            raise ValueError("steps is not a list of integer actions")
        if not isinstance(out.rules, dict):
            raise ValueError("rules is not an object")
        if out.status not in ("live", "over", "expired"):
            raise ValueError(f"status {out.status[:20]!r} is not live, over or expired")
    except (TypeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        out.error = f"its stored row is unreadable ({str(exc)[:200]})"
    except RecursionError:  # a field of thousands of nested brackets
        out.error = "its stored row is unreadable (a field is nested too deeply)"
    return out


class Store:
    """The SQLite file at ``path`` (``":memory:"`` for a store that lives as long as the
    process). Thread-safe: one connection, one lock."""

    def __init__(self, path: str | Path = ":memory:", legacy_game: str | None = None):
        """``legacy_game``: the game of the rows of a version 1 file (whose ``games`` table
        held one game's rows, without a ``game`` column): such a file is migrated in place
        on opening, its rows given this game (without it, a version 1 file is refused).
        Version 1's other tables (other games' rows of the time) are left as they were,
        unread."""
        self.path = str(path)
        if self.path != ":memory:":
            try:
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the folder of the game store {self.path}: {exc}") from None
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
            self._db.row_factory = sqlite3.Row
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            got = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if got is not None and got[0] == "1" and legacy_game is not None:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("ALTER TABLE games ADD COLUMN game TEXT NOT NULL DEFAULT ''")
                self._db.execute("UPDATE games SET game = ?", (legacy_game,))
                self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
                self._db.execute("COMMIT")
                got = (str(SCHEMA_VERSION),)
            if got is None or got[0] == str(SCHEMA_VERSION):
                self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable game store (SQLite: {exc}); "
                             "give another file with ripmarket serve --db PATH") from None
        if got is None:
            self._db.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        elif got[0] != str(SCHEMA_VERSION):
            raise StoreError(f"{self.path} holds games of store version {got[0]}; this server reads version "
                             f"{SCHEMA_VERSION}; give another file with ripmarket serve --db PATH")
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _exec(self, sql: str, args: tuple = ()) -> sqlite3.Cursor:
        try:
            with self._lock:
                return self._db.execute(sql, args)
        except sqlite3.Error as exc:
            raise StoreError(f"the game store {self.path} failed: {exc}") from None

    # ------------------------------------------------------------------ writes
    def insert(self, g: GameRow) -> None:
        values = (g.game, g.game_id, g.token_hash, g.client, g.players, g.seat, json.dumps(g.opponents), str(g.seed),
                  int(g.practice), json.dumps(g.rules), json.dumps(g.steps), g.status, g.created, g.last_action,
                  g.ended, g.end_reason, g.record, json.dumps(g.final_view) if g.final_view is not None else None)
        self._exec(f"INSERT INTO games ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})", values)

    def save_steps(self, game_id: str, steps: list[int], last_action: float) -> None:
        self._exec("UPDATE games SET steps = ?, last_action = ? WHERE game_id = ?",
                   (json.dumps(steps), last_action, game_id))

    def finish(self, game_id: str, steps: list[int], ended: float, record: str, final_view: dict) -> None:
        self._exec("UPDATE games SET status = 'over', steps = ?, last_action = ?, ended = ?, end_reason = 'finished', "
                   "record = ?, final_view = ? WHERE game_id = ?",
                   (json.dumps(steps), ended, ended, record, json.dumps(final_view), game_id))

    def expire(self, game_id: str, ended: float, reason: str) -> None:
        self._exec("UPDATE games SET status = 'expired', ended = ?, end_reason = ? WHERE game_id = ? "
                   "AND status = 'live'", (ended, reason, game_id))

    def delete(self, game_id: str) -> None:
        self._exec("DELETE FROM games WHERE game_id = ?", (game_id,))

    def purge(self, before: float) -> int:
        """Drop finished and expired games that ended before ``before``; how many."""
        return self._exec("DELETE FROM games WHERE status != 'live' AND ended < ?", (before,)).rowcount

    # ------------------------------------------------------------------ reads
    def get(self, game: str, game_id: str) -> GameRow | None:
        """The row of ``game``'s game ``game_id`` (None for another game's id). A row that
        cannot be read comes back with ``error`` naming the field."""
        r = self._exec("SELECT * FROM games WHERE game = ? AND game_id = ?", (game, game_id)).fetchone()
        return _row(r) if r is not None else None

    def taken(self, game_id: str) -> bool:
        """Whether any game has this id."""
        return self._exec("SELECT 1 FROM games WHERE game_id = ?", (game_id,)).fetchone() is not None

    def live(self) -> list[GameRow]:
        """The live games of every game, oldest first."""
        return [_row(r) for r in self._exec("SELECT * FROM games WHERE status = 'live' ORDER BY created").fetchall()]

    def count(self, status: str | None = None) -> int:
        if status is None:
            return self._exec("SELECT COUNT(*) FROM games").fetchone()[0]
        return self._exec("SELECT COUNT(*) FROM games WHERE status = ?", (status,)).fetchone()[0]
