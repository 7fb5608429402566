"""The server's warm-up (issue 39, cold start): the game asked for loads first, its
helper process starts at once, and the status names that game's kernels or bots with an
estimate. Nothing is compiled here: the helper processes are stand-ins and the cache is
said to be cold."""

from __future__ import annotations

import threading

import pytest

import ripmarket_env.app.server.warmup as warmup
from ripmarket_env.app.server.games import registered_kinds


class FakeHelper:
    """A helper process that never runs: ``finish()`` ends it like a real one."""

    made: list = []

    def __init__(self, game, bots, on_exit):
        self.game, self.bots, self.on_exit = game, list(bots), on_exit
        self.started = warmup.time.monotonic() - 3.0
        self.line = ""
        self.returncode = None
        FakeHelper.made.append(self)

    @property
    def done(self):
        return self.returncode is not None

    def finish(self, rc=0):
        self.returncode = rc
        self.on_exit(self)


@pytest.fixture
def cold(monkeypatch, tmp_path):
    FakeHelper.made = []
    monkeypatch.setattr(warmup, "_Helper", FakeHelper)
    monkeypatch.setattr(warmup, "engine_cached", lambda spec: False)
    kinds = registered_kinds()
    return warmup.Warmup(kinds, helpers=1, times_file=tmp_path / "times.json"), kinds


def test_the_game_asked_for_goes_first_and_its_helper_starts_at_once(cold):
    w, kinds = cold
    games = list(kinds)
    last = games[-1]
    assert w.parts()[0] == (games[0], warmup.engine_part(games[0]))  # nobody asked: registry order
    with w._cond:
        w._start_helpers()
    assert [h.game for h in FakeHelper.made] == [games[0]]  # one background helper at a time
    w.want(last)
    assert [h.game for h in FakeHelper.made] == [games[0], last]  # asked for: its helper at once
    parts = w.parts()
    assert parts[0] == (last, warmup.engine_part(last))
    # its default line-up's slow bots load with it, before any other game's engine
    mine = w.default_bots(last)
    assert parts[1:1 + len(mine)] == [(last, b) for b in mine]
    assert FakeHelper.made[1].bots == mine
    s = w.status(last)
    title = kinds[last].title
    assert s["parts"][0]["game"] == last and s["parts"][0]["what"] == f"{title}'s rules engine"
    assert s["stage"].startswith(f"Compiling {title}'s rules engine") and "helper process" in s["stage"]
    for k in warmup.engine_kernels(kinds[last].spec):  # the kernels by name
        assert k in s["stage"]
    assert "at this machine's load (not measured here yet)" in s["stage"] and "so far" in s["stage"]
    assert not s["ready"] and s["elapsed"] >= 3.0
    assert len(s["loading"]) == 2 and s["loading"][0] == s["stage"]
    # another game's status says its own part first
    other = w.status(games[0])
    assert other["stage"].startswith(f"Compiling {kinds[games[0]].title}'s rules engine")
    assert other["loading"] == [other["stage"], s["stage"]]


def test_a_request_waits_for_its_own_helper_only_and_the_estimate_is_measured(cold, monkeypatch):
    w, kinds = cold
    games = list(kinds)
    last = games[-1]
    loaded = []
    monkeypatch.setattr(w, "_short_game", lambda game: loaded.append(game))
    with w._cond:
        w._start_helpers()  # the first game's helper (it never finishes here)
    t = threading.Thread(target=w.prepare, args=(last, []))
    t.start()
    t.join(1.0)
    assert t.is_alive() and loaded == []  # waiting for its helper
    FakeHelper.made[-1].line = f"compiled games.x.kernels.reset_game with 40 kernels it calls in 20.1 s"
    assert w.status(last)["stage"].endswith("compiled games.x.kernels.reset_game with 40 kernels it calls in 20.1 s")
    FakeHelper.made[-1].finish()
    t.join(5.0)
    assert not t.is_alive() and loaded == [last]  # then loads here, not waiting for the first game's helper
    assert w.status(last)["ready"] and not w.status(games[0])["ready"]
    assert w.status(last)["stage"] is None  # ready: the first game's helper is not its business
    waiting = w.status(games[1])  # no helper of its own yet: it waits behind the first game's
    assert waiting["stage"].endswith(f" - then {kinds[games[1]].title}'s rules engine")
    # the helper's time is kept: the next cold start's estimate is measured, not guessed
    w2 = warmup.Warmup(kinds, helpers=1, times_file=w.times_file)
    secs, measured = w2.estimate(f"{last}|helper", 1.0)
    assert measured and secs >= 3.0


def test_the_status_route_puts_the_asked_game_first():
    """``GET /api/{game}/status`` (an app without warm-up: nothing loads) lists the asked
    game's parts first and the warm-up's order follows the ask."""
    from fastapi.testclient import TestClient

    from ripmarket_env.app.server.app import create_app

    app = create_app(db=":memory:", max_games=4)
    c = TestClient(app, base_url="http://127.0.0.1")
    games = list(app.state.kinds)
    for g in reversed(games):
        s = c.get(f"/api/{g}/status").json()
        assert s["parts"][0] == {"name": f"{g} engine", "game": g, "what": f"{app.state.kinds[g].title}'s rules engine",
                                 "ready": False}
        assert s["stage"] is None and s["loading"] == []
    assert [g for g, _ in app.state.warmup.parts()[:1]] == [games[-1]]  # asked first, loads first
    order = app.state.warmup.order()
    assert order == list(reversed(games))


def test_cache_files_saved_by_two_threads_at_once_keep_every_write(tmp_path):
    """``core.jsonfile.save_cache_json`` from two threads of one process (the warm-up's
    background thread and a helper's exit) save one at a time through their own temporary
    files: no save fails on the other's rename, the file is always whole and holds a
    complete save."""
    import json

    from ripmarket_env.core.jsonfile import save_cache_json

    path = tmp_path / "times.json"
    start = threading.Barrier(2)

    def save(key):
        start.wait()
        for i in range(300):
            save_cache_json(path, {key: i})

    threads = [threading.Thread(target=save, args=(k,)) for k in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert json.loads(path.read_text()) in ({"a": 299}, {"b": 299})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["times.json"]  # no temporary file left


def test_the_stage_is_never_blank_while_the_warm_up_starts(cold, tmp_path):
    """Between the start of the warm-up thread and its first part, a game that is not ready
    says what loads next (it said nothing: stage null, loading empty); an estimate past its
    end reads 'done any moment now'."""
    w, kinds = cold
    game = list(kinds)[0]
    hold = threading.Event()
    w._thread = threading.Thread(target=hold.wait, daemon=True)
    w._thread.start()
    try:
        s = w.status(game)
        assert not s["ready"] and s["loading"] == []
        assert s["stage"] == f"Starting: {kinds[game].title}'s rules engine loads next"
    finally:
        hold.set()
        w._thread.join()
    assert w.status(game)["stage"] is None  # no warm-up running: nothing is said to load
    assert w._about(5, True, 9).endswith("9 s so far, done any moment now")
    assert w._about(5, True, 2).endswith("2 s so far, about 3 s left")
