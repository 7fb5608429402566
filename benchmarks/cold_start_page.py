"""Time from Start to the player's first decision at the web page, on an empty cache.

For each game asked: a fresh ``ripmarket serve`` (its own empty numba cache, empty
``XDG_CACHE_HOME`` and an in-memory store), then what the page does: poll
``/api/{game}/status`` as the set-up screen does, ``POST /api/{game}/games`` with the
game's defaults (the default line-up of bots), and wait until the answer is the player's
first decision (``your_turn``). Prints one JSON line per game: wall seconds from the first
status poll to that answer, and the server's CPU seconds (its process and its helpers, until it ends).

    python benchmarks/cold_start_page.py [GAME ...]     # default: every registered game
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import resource

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(game: str, timeout: float = 900.0) -> dict:
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"), XDG_CACHE_HOME=os.path.join(tmp, "cache"),
                   RIPMARKET_COMPILE_PROGRESS="0")
        server = subprocess.Popen([sys.executable, "-m", "ripmarket_env.app.cli", "serve", "--host", "127.0.0.1",
                                   "--port", str(port), "--db", ":memory:"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cpu0 = _children_cpu()
        base = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=base, timeout=timeout) as http:
                while True:  # the server is up (the page loads)
                    try:
                        http.get("/api/catalog")
                        break
                    except httpx.TransportError:
                        time.sleep(0.2)
                t0 = time.perf_counter()
                http.get(f"/api/{game}/status")  # the set-up screen's first poll: the game is asked for
                stages = []
                while True:
                    st = http.get(f"/api/{game}/status").json()
                    if st.get("stage") and (not stages or stages[-1] != st["stage"]):
                        stages.append(st["stage"])
                    if st["ready"]:
                        break
                    time.sleep(0.5)
                ready = time.perf_counter() - t0
                out = http.post(f"/api/{game}/games", json={})
                out.raise_for_status()
                view = out.json()
                while not view.get("your_turn") and not view.get("over"):
                    time.sleep(0.2)
                    view = http.get(f"/api/{game}/games/{view['game_id']}",
                                    headers={"X-Seat-Token": out.json()["seat_token"]}).json()
                first = time.perf_counter() - t0
        finally:
            server.terminate()
            server.wait(30)
        cpu = _children_cpu() - cpu0  # the server and the helpers it ran, to its end
    return {"game": game, "ready_s": round(ready, 1), "first_decision_s": round(first, 1),
            "server_cpu_s": round(cpu, 1), "stages_seen": len(stages), "load_average": os.getloadavg()}


if __name__ == "__main__":
    import ripmarket_env

    for g in sys.argv[1:] or ripmarket_env.games():
        print(json.dumps(measure(g)), flush=True)
