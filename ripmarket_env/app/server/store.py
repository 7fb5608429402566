"""Where the server keeps its games: one SQLite file (stdlib ``sqlite3``).

One row per game. A live game is stored as what is needed to rebuild it exactly: its
settings, its seed and every seat's actions so far (``GameSession(..., steps=...)``
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

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    game_id     TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL,
    client      TEXT NOT NULL,
    players     INTEGER NOT NULL,
    seat        INTEGER NOT NULL,
    opponents   TEXT NOT NULL,          -- JSON list of bot names
    seed        TEXT NOT NULL,          -- decimal: seeds are wider than SQLite's integers
    practice    INTEGER NOT NULL,
    rules       TEXT NOT NULL,          -- JSON object (RulesConfig fields given)
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
"""


class StoreError(RuntimeError):
    """The game store cannot be opened or written; the message names the file."""


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass
class GameRow:
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


_COLUMNS = ("game_id", "token_hash", "client", "players", "seat", "opponents", "seed", "practice", "rules",
            "steps", "status", "created", "last_action", "ended", "end_reason", "record", "final_view")


def _row(r: sqlite3.Row) -> GameRow:
    return GameRow(
        game_id=r["game_id"], token_hash=r["token_hash"], client=r["client"], players=r["players"],
        seat=r["seat"], opponents=json.loads(r["opponents"]), seed=int(r["seed"]), practice=bool(r["practice"]),
        rules=json.loads(r["rules"]), steps=json.loads(r["steps"]), status=r["status"], created=r["created"],
        last_action=r["last_action"], ended=r["ended"], end_reason=r["end_reason"], record=r["record"],
        final_view=json.loads(r["final_view"]) if r["final_view"] is not None else None,
    )


class Store:
    """The SQLite file at ``path`` (``":memory:"`` for a store that lives as long as the
    process). Thread-safe: one connection, one lock."""

    def __init__(self, path: str | Path = ":memory:"):
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
            self._db.executescript(_SCHEMA)
            got = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
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
        values = (g.game_id, g.token_hash, g.client, g.players, g.seat, json.dumps(g.opponents), str(g.seed),
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
    def get(self, game_id: str) -> GameRow | None:
        r = self._exec("SELECT * FROM games WHERE game_id = ?", (game_id,)).fetchone()
        return _row(r) if r is not None else None

    def live(self) -> list[GameRow]:
        """The live games, without their (absent) records."""
        return [_row(r) for r in self._exec("SELECT * FROM games WHERE status = 'live' ORDER BY created").fetchall()]

    def count(self, status: str | None = None) -> int:
        if status is None:
            return self._exec("SELECT COUNT(*) FROM games").fetchone()[0]
        return self._exec("SELECT COUNT(*) FROM games WHERE status = ?", (status,)).fetchone()[0]


class KeyedGames:
    """The games of one more game of the zoo (``game``: ``"black-market"``, ...) in a table
    of their own in the same file, ``keyed_games``, keyed by (game, game_id). A row is its
    ``status`` (live | over | expired), when it last changed, and a JSON object the game's
    routes define (settings, seat-token digest, actions so far, record, final view). The
    table is made on first use, so a store file of version 1 gains it without a migration."""

    _TABLE = """CREATE TABLE IF NOT EXISTS keyed_games (
        game TEXT NOT NULL, game_id TEXT NOT NULL, status TEXT NOT NULL, updated REAL NOT NULL,
        data TEXT NOT NULL, PRIMARY KEY (game, game_id))"""

    def __init__(self, store: Store, game: str):
        self.store, self.game = store, game
        store._exec(self._TABLE)

    def put(self, game_id: str, status: str, updated: float, data: dict) -> None:
        """Insert or replace a game's row, in one transaction."""
        self.store._exec("INSERT OR REPLACE INTO keyed_games (game, game_id, status, updated, data) "
                         "VALUES (?, ?, ?, ?, ?)", (self.game, game_id, status, updated, json.dumps(data)))

    def get(self, game_id: str) -> tuple[str, dict] | None:
        """(status, data) of a game, or None."""
        r = self.store._exec("SELECT status, data FROM keyed_games WHERE game = ? AND game_id = ?",
                             (self.game, game_id)).fetchone()
        return (r["status"], json.loads(r["data"])) if r is not None else None

    def live(self) -> dict[str, dict]:
        """Every live game's data by id."""
        rows = self.store._exec("SELECT game_id, data FROM keyed_games WHERE game = ? AND status = 'live' "
                                "ORDER BY updated", (self.game,)).fetchall()
        return {r["game_id"]: json.loads(r["data"]) for r in rows}

    def delete(self, game_id: str) -> None:
        self.store._exec("DELETE FROM keyed_games WHERE game = ? AND game_id = ?", (self.game, game_id))

    def purge(self, before: float) -> int:
        """Drop this game's finished and expired rows last changed before ``before``."""
        return self.store._exec("DELETE FROM keyed_games WHERE game = ? AND status != 'live' AND updated < ?",
                                (self.game, before)).rowcount


# ---------------------------------------------------------------------- The Rune Market
# Its own table, keyed by game id, created beside the R.I.P. Market games on the same file
# (CREATE TABLE IF NOT EXISTS: a file written before it existed opens as it is). A row is
# what rebuilds the game exactly: the settings, the seed and every seat's actions so far
# (``RuneMarketSession(..., steps=...)`` re-plays them; no bot is asked again), rewritten
# after every answered decision before the answer is sent. Seat tokens: SHA-256 digests.
_RUNE_SCHEMA = """
CREATE TABLE IF NOT EXISTS rune_games (
    game_id     TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL,
    client      TEXT NOT NULL,
    players     INTEGER NOT NULL,
    seat        INTEGER NOT NULL,
    opponents   TEXT NOT NULL,          -- JSON list of bot names
    seed        TEXT NOT NULL,          -- decimal: seeds are wider than SQLite's integers
    practice    INTEGER NOT NULL,
    steps       TEXT NOT NULL,          -- JSON list: every seat's actions so far
    status      TEXT NOT NULL,          -- live | over
    created     REAL NOT NULL,
    last_action REAL NOT NULL
);
"""


@dataclass
class RuneRow:
    game_id: str
    token_hash: str
    client: str
    players: int
    seat: int
    opponents: list[str]
    seed: int
    practice: bool
    steps: list[int]
    status: str
    created: float
    last_action: float
    error: str | None = None  # set when the stored row cannot be read (the reason, in words)


def _rune_row(r: sqlite3.Row) -> RuneRow:
    """The row, or one with ``error`` saying which field of it is unreadable."""
    base = dict(game_id=str(r["game_id"]), token_hash=str(r["token_hash"]), client=str(r["client"]))
    try:
        created, last = float(r["created"]), float(r["last_action"])
    except (TypeError, ValueError):
        created = last = 0.0
    out = RuneRow(**base, players=0, seat=0, opponents=[], seed=0, practice=False, steps=[], status="live",
                  created=created, last_action=last)
    try:
        out.players, out.seat = int(r["players"]), int(r["seat"])
        out.opponents = json.loads(r["opponents"])
        out.seed = int(r["seed"])
        out.practice = bool(r["practice"])
        out.steps = json.loads(r["steps"])
        out.status = str(r["status"])
        if not (isinstance(out.opponents, list) and all(isinstance(x, str) for x in out.opponents)):
            raise ValueError("opponents is not a list of bot names")
        if not (isinstance(out.steps, list) and all(type(x) is int for x in out.steps)):
            raise ValueError("steps is not a list of integer actions")
        if out.status not in ("live", "over"):
            raise ValueError(f"status {out.status!r} is not live or over")
    except (TypeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        out.error = f"its stored row is unreadable ({exc})"
    return out


class RuneGames:
    """The Rune Market's games in a :class:`Store`'s file (the ``rune_games`` table)."""

    def __init__(self, store: Store):
        self.store = store
        try:
            with store._lock:
                store._db.executescript(_RUNE_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"the game store {store.path} failed: {exc}") from None

    def insert(self, g: RuneRow) -> None:
        self.store._exec(
            "INSERT INTO rune_games (game_id, token_hash, client, players, seat, opponents, seed, practice, steps, "
            "status, created, last_action) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (g.game_id, g.token_hash, g.client, g.players, g.seat, json.dumps(g.opponents), str(g.seed),
             int(g.practice), json.dumps(g.steps), g.status, g.created, g.last_action))

    def save(self, game_id: str, steps: list[int], last_action: float, over: bool) -> None:
        self.store._exec("UPDATE rune_games SET steps = ?, last_action = ?, status = ? WHERE game_id = ?",
                         (json.dumps(steps), last_action, "over" if over else "live", game_id))

    def delete(self, game_id: str) -> None:
        self.store._exec("DELETE FROM rune_games WHERE game_id = ?", (game_id,))

    def get(self, game_id: str) -> RuneRow | None:
        r = self.store._exec("SELECT * FROM rune_games WHERE game_id = ?", (game_id,)).fetchone()
        return _rune_row(r) if r is not None else None

    def rows(self) -> list[RuneRow]:
        """Every stored game, oldest first (unreadable ones with ``error`` set)."""
        return [_rune_row(r) for r in self.store._exec("SELECT * FROM rune_games ORDER BY created").fetchall()]
