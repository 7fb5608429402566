"""Soak of `ripmarket serve` on loopback (``make soak``; marked ``slow``).

A real server process (uvicorn, SQLite store in a temporary folder) and 50 clients, each
from its own loopback address (127.0.1.k, so the per-client limits apply per client),
playing whole games of every game the server seats (``GET /api/catalog``: each game's
player counts and bots, its search bots left out for time) for
``RIPMARKET_SOAK_SECONDS`` (default 60 s). Meanwhile one more address tries the lock-out
of issue 19 (64 POST /api/games at once). Then, with games in the middle, the server is
stopped and started again on the same file: every game must come back exactly and play
on to its end. Figures (requests/s, p50/p99, errors, RSS before/after) are printed.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SECONDS = float(os.environ.get("RIPMARKET_SOAK_SECONDS", "60"))
CLIENTS = 50


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Server:
    def __init__(self, db: Path, port: int):
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ripmarket_env.app.cli", "serve", "--port", str(port), "--db", str(db),
             "--max-games", "128", "--max-games-per-client", "4"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import httpx

        deadline = time.monotonic() + 300
        while True:
            assert self.proc.poll() is None, "the server stopped"
            try:
                httpx.get(self.url + "/api/bots", timeout=5)
                return
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.3)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


def _client(addr: str):
    import httpx

    return httpx.Client(transport=httpx.HTTPTransport(local_address=addr), timeout=120)


def _tables(http, url: str) -> list[tuple[str, list[int], list[str]]]:
    """Per game the server seats: its id, player counts and bots (its search bots left out)."""
    games = http.get(url + "/api/catalog").json()["games"]
    out = []
    for g in games:
        bots = http.get(f"{url}/api/{g['id']}/bots").json()
        names = [b["name"] for b in bots["bots"] if "search" not in b["name"]]
        out.append((g["id"], list(bots["player_counts"]), names))
    return out


def _play(http, url: str, rng: random.Random, stats: dict, lock: threading.Lock, stop: threading.Event,
          tables: list, game: dict | None = None, state: dict | None = None, moves: int | None = None):
    """Play one game (a new one of a game drawn from ``tables`` unless ``game``); returns
    (game, state) when stopped early."""
    def call(method, path, **kw):
        t = time.perf_counter()
        r = http.request(method, url + path, **kw)
        with lock:
            stats["lat"].append(time.perf_counter() - t)
            stats["codes"][r.status_code] = stats["codes"].get(r.status_code, 0) + 1
        return r

    if game is None:
        name, counts, bots = rng.choice(tables)
        players = rng.choice(counts)
        r = call("POST", f"/api/{name}/games", json={"players": players, "seat": rng.randrange(players),
                                                     "opponents": [rng.choice(bots) for _ in range(players - 1)]})
        if r.status_code != 201:
            return None, None
        game = state = r.json()
    h = {"X-Seat-Token": game["seat_token"]}
    path = f"/api/{game['game']}/games/{game['game_id']}"
    n = 0
    while not state["over"]:
        if stop.is_set() or (moves is not None and n >= moves):
            return game, state
        if rng.random() < 0.3:
            call("GET", path, headers=h)
        a = rng.choice(state["table"]["choices"])["action"]
        r = call("POST", path + "/actions", headers=h, json={"action": a, "decision_number": state["decision_number"]})
        assert r.status_code == 200, r.text
        state = r.json()
        n += 1
    r = call("GET", path + "/record", headers=h)
    assert r.status_code == 200 and '"result"' in r.text
    with lock:
        stats["games"] += 1
        stats["by_game"][game["game"]] = stats["by_game"].get(game["game"], 0) + 1
    return None, None


def test_fifty_clients_lockout_attempt_and_restart(tmp_path):
    db = tmp_path / "games.sqlite3"
    server = Server(db, _free_port())
    stats = {"lat": [], "codes": {}, "games": 0, "by_game": {}}
    lock, stop = threading.Lock(), threading.Event()
    errors: list[BaseException] = []
    try:
        rss0 = _rss_mb(server.proc.pid)
        with _client("127.0.0.1") as http:
            tables = _tables(http, server.url)
        assert len(tables) >= 3

        def run(k: int):
            rng = random.Random(k)
            try:
                with _client(f"127.0.1.{k + 1}") as http:
                    while not stop.is_set():
                        _play(http, server.url, rng, stats, lock, stop, tables)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(k,)) for k in range(CLIENTS)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        # the lock-out attempt of issue 19, from one more address, while the others play
        with _client("127.0.2.1") as http:
            codes = [http.post(server.url + "/api/games", json={"players": 2, "opponents": ["greedy"]}).status_code
                     for _ in range(64)]
        time.sleep(max(0.0, SECONDS - (time.monotonic() - t0)))
        stop.set()
        for t in threads:
            t.join(timeout=600)
        wall = time.monotonic() - t0
        rss1 = _rss_mb(server.proc.pid)
        assert not errors, errors[:3]
        assert codes.count(201) == 4 and codes.count(429) == 60
        lat = sorted(stats["lat"])
        n = len(lat)
        errs = sum(v for c, v in stats["codes"].items() if c >= 500)
        print(f"\nload: {CLIENTS} clients, {wall:.0f} s, {n} requests ({n / wall:.1f}/s), {stats['games']} whole games, "
              f"p50 {lat[n // 2] * 1000:.0f} ms, p99 {lat[int(n * 0.99)] * 1000:.0f} ms, codes {stats['codes']}, "
              f"RSS {rss0:.0f} -> {rss1:.0f} MB; lock-out attempt: {codes.count(201)} created, "
              f"{codes.count(429)} x 429; whole games by game {stats['by_game']}")
        assert errs == 0 and stats["games"] > 0
        assert set(stats["by_game"]) == {t[0] for t in tables}, stats["by_game"]  # every game was played through
        assert set(stats["codes"]) <= {200, 201}  # nobody else was locked out or lost a game

        # restart in the middle of games
        mid = []
        stop.clear()
        for k in range(10):
            with _client(f"127.0.3.{k + 1}") as http:
                rng = random.Random(100 + k)
                for _ in range(20):  # a short game (the toy's) can end within its two moves: take another
                    g, s = _play(http, server.url, rng, stats, lock, stop, tables[k % len(tables):][:1], moves=2)
                    if g is not None:
                        break
                assert g is not None
                mid.append((k, g, http.get(f"{server.url}/api/{g['game']}/games/{g['game_id']}",
                                           headers={"X-Seat-Token": g["seat_token"]}).json()))
        server.stop()
        server = Server(db, _free_port())
        for k, g, before in mid:
            with _client(f"127.0.3.{k + 1}") as http:
                r = http.get(f"{server.url}/api/{g['game']}/games/{g['game_id']}",
                             headers={"X-Seat-Token": g["seat_token"]})
                assert r.status_code == 200 and r.json() == before  # nothing lost
                done = stats["games"]
                _play(http, server.url, random.Random(k), stats, lock, stop, tables, game=g, state=before)
                assert stats["games"] == done + 1
        print(f"restart: {len(mid)} games in the middle came back exactly and were played to the end")
    finally:
        server.stop()
