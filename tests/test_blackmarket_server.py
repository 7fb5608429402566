"""Black Market on the web server (``/api/black-market/games``, the routes every game has; loopback test
client), played through the one session of every game (``app/session.py`` ``TableSession``)
and drawn from the game's table description (``games/blackmarket/table.py``): whole games
over HTTP in both modes, what each seat may see (BM-7), every choice naming the map card of
the slot it acts on (BM-4.1), bad requests answered with one-line errors that leave the game
as it was, the server's limits, games that outlive a restart of the server (the SQLite
store), and the terminal game's end screen."""

from __future__ import annotations

import json
import random
import re

import pytest
from fastapi.testclient import TestClient

from ripmarket_env.app.server import create_app

DRAW = re.compile(r"player (\d) draws a (?:Red|Black|Flip) card")
HEIST = re.compile(r"player (\d) takes (\d) cards? from player (\d)(: [A-Za-z, ]+)?")
SLOT = re.compile(r"slot (\d): ")


class Clock:
    def __init__(self, t: float = 1_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def _client(**kw) -> TestClient:
    kw.setdefault("max_games", 4)
    return TestClient(create_app(**kw), base_url="http://127.0.0.1")


def _new(c, **body):
    if "mode" in body:  # a variant of the rules config (BM-1.3, BM-1.4)
        body["rules"] = {"mode": body.pop("mode")}
    r = c.post("/api/black-market/games", json=body)
    assert r.status_code == 201, r.text
    v = r.json()
    return v, v["game_id"], {"X-Seat-Token": v["seat_token"]}


def _choices(v) -> list[dict]:
    return v["table"]["choices"]


def _answer(c, gid, h, v, rng):
    ch = rng.choice(_choices(v))
    r = c.post(f"/api/black-market/games/{gid}/actions", headers=h,
               json={"action": ch["action"], "decision_number": v["decision_number"]})
    assert r.status_code == 200, r.text
    return r.json()


def _texts(v) -> list[str]:
    return [m["text"] for m in v["recent"]]


def check_choices_name_their_cards(t: dict) -> None:
    """BM-4.1: a die acts on the map slot of its number; every choice that names a slot or a
    die names that slot's card as the Map shows it, and refers to that slot (``refs``)."""
    (zone,) = t["table"]
    assert zone["name"] == "Map" and [c["slot"] for c in zone["cards"]] == [1, 2, 3, 4, 5, 6]  # BM-2.1
    shown = {c["slot"]: c["text"] for c in zone["cards"]}
    for ch in t["choices"]:
        named = SLOT.search(ch["text"])
        if re.match(r"(Flip|Rotate|Buy|Draw|Set the die|The die)", ch["text"]):
            assert named, ch["text"]
        if not named:
            assert "refs" not in ch, ch
            continue
        k = int(named.group(1))
        assert ch["refs"] == [{"zone": "Map", "slot": k}], ch
        card = ch["text"][named.end():].split(" (")[0]  # "Red 2" of "slot 3: Red 2 (2 pt) ..."
        assert shown[k].startswith(card) or (card == "an unseen card" and shown[k].startswith("unseen card")), \
            (ch["text"], shown[k])
        if "die showing" in ch["text"]:
            assert f"die showing {k} " in ch["text"]


def _play_out(c, gid, h, v, seed):
    """Random choices to the end; every story line the seat was shown."""
    rng = random.Random(seed)
    seen = _texts(v)
    while not v["over"]:
        t = v["table"]
        assert v["your_turn"] and len(t["choices"]) >= 2  # BM-12.3: one option is taken by the engine
        assert t["prompt"] and t["actor"] == v["seat"]
        check_choices_name_their_cards(t)
        you = [s for s in t["seats"] if s["you"]]
        assert [s["seat"] for s in you] == [v["seat"]] and you[0]["deciding"]
        assert not any("their turn" in f or "rolls the dice" in f for f in you[0]["flags"])  # your own seat
        assert all(re.fullmatch(r"1 card|\d+ cards", s["counters"]["hand"]) for s in t["seats"])
        v = _answer(c, gid, h, v, rng)
        seen += _texts(v)
    return v, seen


@pytest.mark.parametrize("players,mode,seat", [(4, "teams", 1), (2, "ffa", 0)])
def test_a_whole_game_over_http(players, mode, seat):
    c = _client()
    v, gid, h = _new(c, players=players, mode=mode, seat=seat, seed=3)
    t = v["table"]
    assert v["players"] == players and v["rules"]["mode"] == mode and v["seat"] == seat and v["practice"] is True
    assert all("faces side" in x["text"] for x in t["table"][0]["cards"])  # BM-2.1: six slots, each facing a side
    assert [s["flags"][0] for s in t["seats"]] == [f"side {'AB'[q % 2]}" for q in range(players)]  # BM-1.2
    mates = [s["seat"] for s in t["seats"] if "your teammate" in s["flags"]]
    assert mates == ([q for q in range(players) if q != seat and q % 2 == seat % 2] if mode == "teams" else [])
    assert all(v["levels"][q] for q in range(players) if q != seat)  # every bot has a difficulty label
    assert v["controllers"][seat] == "you" and v["levels"][seat] == ""
    assert "seat_token" not in c.get(f"/api/black-market/games/{gid}", headers=h).json()
    assert c.get(f"/api/black-market/games/{gid}/record", headers=h).status_code == 409  # not before the end
    v, _ = _play_out(c, gid, h, v, 3)
    res, t = v["result"], v["table"]
    assert res["winners"] and len(res["standings"]) == players and t["choices"] == []
    rows = res["standings"]
    assert [r["place"] for r in rows] == sorted(r["place"] for r in rows) and rows[0]["winner"]
    assert {r["name"] for r in rows} == {"you"} | {f"player {q} ({v['controllers'][q]})" for q in range(players) if q != seat}
    points = {r["seat"]: int(re.search(r"(\d+) points?: (won|lost)$", r["how"]).group(1)) for r in rows}
    target = v["rules"]["target_points"]
    if mode == "teams":  # BM-1.3: a side wins together, on its players' total
        side = res["winners"][0] % 2
        assert {q % 2 for q in res["winners"]} == {side} and set(res["winners"]) == set(range(side, players, 2))
        assert all(r["how"].startswith(f"side {'AB'[r['seat'] % 2]}, ") for r in rows)
        assert sum(p for q, p in points.items() if q % 2 == side) >= target
        assert res["end"].startswith(f"Side {'AB'[side]} wins")
    else:  # BM-1.4: a player's own points
        assert max(points.values()) >= target and res["end"].startswith(f"Player {res['winners'][0]} wins")
    r = c.get(f"/api/black-market/games/{gid}/record", headers=h)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    head = json.loads(r.text.splitlines()[0])
    assert head["game"] == "black-market" and head["controllers"][seat] == "person"
    assert c.get(f"/api/black-market/games/{gid}", headers=h).json() == v  # the final view is kept
    r = c.post(f"/api/black-market/games/{gid}/actions", headers=h, json={"action": 0, "decision_number": 0})
    assert r.status_code == 409 and "over" in r.json()["detail"]


def test_hidden_hands_and_heists_per_seat():
    """BM-7.1, BM-7.3: a drawn card is named to its drawer only; a Heist's cards to the thief
    and the victim only. Seed 0 has a Heist between two bots, seed 13 one on the person."""
    c = _client()
    for seed, you_in_heist in ((0, False), (13, True)):
        v, gid, h = _new(c, players=4, mode="ffa", seat=0, seed=seed,
                         opponents=["bm-builder", "bm-denier", "bm-rusher"])
        t = v["table"]
        assert {x["name"] for x in t["hand"]} <= {"Red", "Black", "Flip"}
        assert sum(x["count"] for x in t["hand"]) == int(t["seats"][0]["counters"]["hand"].split()[0])
        assert all(set(s["counters"]) == {"points", "hand", "owns"} for s in t["seats"])  # others by size only
        deals = [line for line in _texts(v) if " is dealt " in line]  # BM-3.3: one line per seat, kinds to its own
        assert [line.split(":")[0] for line in deals] == [f"player {q} is dealt 6 cards" for q in range(4)]
        assert re.fullmatch(r"player 0 is dealt 6 cards: \d (Red|Black|Flip)(, \d (Red|Black|Flip))*", deals[0])
        assert all(":" not in line for line in deals[1:])
        v, seen = _play_out(c, gid, h, v, seed)
        draws = [int(m.group(1)) for line in seen for m in DRAW.finditer(line)]
        assert draws and set(draws) == {0}
        heists = [m for line in seen for m in HEIST.finditer(line)]
        assert heists, f"seed {seed}: no Heist was played"
        for m in heists:
            thief, victim, named = int(m.group(1)), int(m.group(3)), m.group(4)
            assert (named is not None) == (0 in (thief, victim))
            assert ("takes 1 card from" in m.group(0)) == (m.group(2) == "1")  # counts in words
        assert any(0 in (int(m.group(1)), int(m.group(3))) for m in heists) == you_in_heist
        c.delete(f"/api/black-market/games/{gid}", headers=h)


def test_bad_requests_change_nothing():
    c = _client()
    v, gid, h = _new(c, players=4, seat=2, seed=5)
    url = f"/api/black-market/games/{gid}"
    before = c.get(url, headers=h).json()
    legal = {ch["action"] for ch in _choices(v)}
    bad = next(a for a in range(69) if a not in legal)
    for body, code, needle in (
        ({"action": bad, "decision_number": v["decision_number"]}, 409, "not legal now"),  # BM-12.4
        ({"action": 99_999, "decision_number": v["decision_number"]}, 422, "action"),
        ({"action": 69, "decision_number": v["decision_number"]}, 409, "out of range (actions are 0 to 68)"),
        ({"action": _choices(v)[0]["action"], "decision_number": v["decision_number"] + 1}, 409, "decision_number"),
        ({"action": "x", "decision_number": 0}, 422, "action"),
        ({"action": True, "decision_number": 0}, 422, "boolean"),
        ({"action": 1, "decision_number": 0, "more": 1}, 422, "unknown field"),
        ({"action": 1}, 422, "decision_number: required"),
    ):
        r = c.post(url + "/actions", headers=h, json=body)
        assert r.status_code == code, (body, r.text)
        detail = r.json()["detail"]
        assert needle in detail and "\n" not in detail
    assert c.get(url, headers=h).json() == before
    assert c.get(url, headers={"X-Seat-Token": "nope"}).status_code == 403
    assert c.get(url).status_code == 422
    assert c.get(url + "?token=abc", headers=h).status_code == 400
    r = c.get("/api/black-market/games/none", headers=h)
    assert r.status_code == 404 and "no game of Black Market" in r.json()["detail"]
    for body, needle in (
        ({"players": 3}, "allowed: 2, 4, 6"),  # BM-1.1
        ({"players": 4, "seat": 4}, "seat: 4 is not a seat"),
        ({"players": 4, "rules": {"mode": "solo"}}, "'teams' or 'ffa'"),
        ({"players": 4, "opponents": ["greedy"]}, "unknown bot 'greedy'"),
        ({"players": 2, "opponents": ["random", "random"]}, "2 bots named for 1 other seat"),
        ({"players": 4, "opponents": []}, "opponents"),
        ({"players": 4, "seed": -1}, "seed"),
        ({"players": 4, "mode": "ffa"}, "unknown field"),  # a variant goes in rules
        ({"players": 4, "rules": {"target_points": 9}}, "unknown field"),  # not offered at setup
    ):
        r = c.post("/api/black-market/games", json=body)
        assert r.status_code == 422, (body, r.text)
        assert needle in r.json()["detail"] and "\n" not in r.json()["detail"], r.text
    assert c.get(url, headers=h).json() == before
    comp = c.get("/openapi.json").json()["components"]["schemas"]
    schema = comp["CreateBlackMarketGame"]
    assert schema["properties"]["players"]["enum"] == [2, 4, 6]
    assert comp["BlackMarketRules"]["properties"]["mode"]["anyOf"][0]["enum"] == ["teams", "ffa"]
    assert "bm-denier" in schema["properties"]["opponents"]["items"]["enum"]
    assert [b["properties"]["seat"]["maximum"] for b in schema["oneOf"]] == [1, 3, 5]
    page = c.get("/black-market").text  # the one page of every game, with the game's plugin
    assert "/static/generic.js" in page
    plugin = c.get("/plugins/black-market.js")
    assert plugin.status_code == 200 and 'RipmarketTable.register("black-market"' in plugin.text
    bots = c.get("/api/black-market/bots").json()["bots"]
    assert {b["name"] for b in bots} >= {"random", "bm-rusher", "bm-denier", "bm-builder"}
    assert all(b["level"] and b["level"] != "Unrated" for b in bots)


def test_limits_and_expiry():
    clock = Clock()
    c = _client(max_games=2, max_games_per_client=1, idle_seconds=60, clock=clock)
    v, gid, h = _new(c, players=2, seed=1)
    r = c.post("/api/black-market/games", json={"players": 2})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert "you already have 1 live games" in r.json()["detail"]
    clock.t += 30
    assert c.get(f"/api/black-market/games/{gid}", headers=h).status_code == 200  # reading keeps nothing alive
    clock.t += 31
    r = c.get(f"/api/black-market/games/{gid}", headers=h)
    assert r.status_code == 410 and "no decision was answered" in r.json()["detail"]
    v2, gid2, h2 = _new(c, players=2, seed=2)  # the slot is free again
    r = c.post(f"/api/black-market/games/{gid}/actions", headers=h, json={"action": 0, "decision_number": 0})
    assert r.status_code == 410
    assert c.delete(f"/api/black-market/games/{gid2}", headers=h2).status_code == 204
    assert c.get(f"/api/black-market/games/{gid2}", headers=h2).status_code == 404


def test_a_restart_keeps_live_and_finished_games(tmp_path):
    db = tmp_path / "games.sqlite3"
    c = _client(db=db)
    v, gid, h = _new(c, players=4, mode="teams", seat=0, seed=11)
    rng = random.Random(11)
    for _ in range(2):
        v = _answer(c, gid, h, v, rng)
    c.close()

    c2 = _client(db=db)  # a new server on the same file
    again = c2.get(f"/api/black-market/games/{gid}", headers=h)
    assert again.status_code == 200, again.text
    w = again.json()
    for key in ("decision_number", "table", "recent", "controllers", "levels", "rules", "your_turn"):
        assert w[key] == v[key], key
    assert c2.get(f"/api/black-market/games/{gid}", headers={"X-Seat-Token": "x"}).status_code == 403
    w, _ = _play_out(c2, gid, h, w, 12)
    c2.close()

    c3 = _client(db=db)
    assert c3.get(f"/api/black-market/games/{gid}", headers=h).json() == w
    r = c3.get(f"/api/black-market/games/{gid}/record", headers=h)
    assert r.status_code == 200 and '"game": "black-market"' in r.text.splitlines()[0]
    assert c3.get("/api/games/" + gid, headers=h).status_code == 404  # R.I.P. Market's games are apart


def test_session_replays_its_steps_and_refuses_bad_ones():
    """The session the server stores: ``steps`` rebuild a game exactly (no bot asked again);
    a step that is not legal is refused naming it; an illegal action changes nothing (BM-12.4)."""
    from ripmarket_env.app.session import NotYourTurnError, SetupError, TableSession
    from ripmarket_env.core.engine import IllegalActionError

    def session(**kw):
        return TableSession("black-market", 6, 3, ["bm-denier", "random"], seed=21, rules={"mode": "teams"}, **kw)

    s = session()
    assert s.controllers == ["bm-denier", "random", "bm-denier", "you", "random", "bm-denier"]
    rng = random.Random(21)
    for _ in range(3):
        s.act(rng.choice(s.choices())["action"])
    again = session(steps=s.steps)
    assert again.view() == s.view() and again.steps == s.steps
    with pytest.raises(SetupError, match=r"steps\[1\]=999 is not a legal action"):
        session(steps=[s.steps[0], 999])
    before = s.view()
    illegal = next(a for a in range(69) if a not in s.legal_actions())
    with pytest.raises(IllegalActionError):
        s.act(illegal)
    assert s.view() == before
    s.seat = (s.seat + 1) % 6  # another seat decides now
    with pytest.raises(NotYourTurnError):
        s.act(s.legal_actions()[0])


def test_the_terminal_game_ends_with_the_standings():
    """``ripmarket play --game black-market`` (the same TableSession): every choice naming a
    slot names its card, and the end screen gives each seat's place, side and points,
    not a bare reward."""
    import io

    from rich.console import Console

    from ripmarket_env.app.play import play_terminal

    buf = io.StringIO()
    con = Console(file=buf, width=100, color_system=None)
    answers = iter(["1"] * 2000)
    s = play_terminal("black-market", 4, 0, ["bm-rusher"], seed=9, rules={"mode": "teams"},
                      input_fn=lambda prompt: next(answers), console=con)
    assert s.over
    text = buf.getvalue()
    assert re.search(r"\d\) (Flip|Rotate|Buy) slot \d: ", text) and "GAME OVER" in text
    end = text[text.index("GAME OVER"):]
    assert "Standings" in end and "reward" not in end
    for row in s.result()["standings"]:
        assert re.search(rf"{re.escape(row['place_text'])}.*{re.escape(row['name'])}.*side {'AB'[row['seat'] % 2]}, \d+ point", end)
    assert not re.search(r"\b1 cards", text) and "card(s)" not in text
