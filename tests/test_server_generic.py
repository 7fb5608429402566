"""A game without a web session of its own (the tests' toy game, tests/toy_game.py) is served
through the generic ``TableSession``: every route exists for it, a whole game is played
through them to the end (TOY-1..TOY-4), and ``/toy`` is the generic page."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from ripmarket_env import replay
from ripmarket_env.app.server import create_app
from ripmarket_env.app.server.kinds import kinds

BASE = "http://127.0.0.1"


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(max_games=16, max_games_per_client=16), base_url=BASE) as c:
        yield c


def test_every_registered_game_is_served():
    from ripmarket_env.games import ids

    assert list(kinds()) == list(ids())
    assert kinds()["toy"].player_counts == [2, 3, 4]


def test_play_the_toy_game_to_its_end_through_the_routes(client, tmp_path):
    r = client.post("/api/toy/games", json={"players": 2, "opponents": ["toy-high"]})
    assert r.status_code == 201, r.text
    g = r.json()
    token = {"X-Seat-Token": g["seat_token"]}
    url = f"/api/toy/games/{g['game_id']}"
    assert g["game"] == "toy" and g["seat"] == 0 and g["controllers"] == ["you", "toy-high"]
    assert g["levels"] == ["", "Easy"] and g["seed"] is None and not g["practice"]
    assert g["table"]["title"] == "Pairs" and [s["you"] for s in g["table"]["seats"]] == [True, False]
    # TOY-1: the hand of the other seat stays hidden; the story says only that it drew
    text = str(g)
    assert text.count("hand [") == 1  # the viewer's own hand only
    assert not re.search(r"P1 draws a \d", text)
    assert client.get(url + "/record", headers=token).status_code == 409  # not before the end

    v, decisions = g, 0
    forced = sum(m["kind"] == "forced" for m in g["recent"])  # your only options, taken for you
    while not v["over"]:
        assert v["your_turn"] and v["table"]["choices"], v
        choice = v["table"]["choices"][0]
        r = client.post(url + "/actions", headers=token,
                        json={"action": choice["action"], "decision_number": v["decision_number"]})
        assert r.status_code == 200, r.text
        stale = client.post(url + "/actions", headers=token,
                            json={"action": choice["action"], "decision_number": v["decision_number"]})
        v = r.json()
        assert stale.status_code == 409 and ("over" if v["over"] else "decision_number") in stale.json()["detail"]
        assert v["recent"][0]["seat"] == 0  # the story since your decision starts with yours
        forced += sum(m["kind"] == "forced" for m in v["recent"])
        decisions += 1
    assert decisions + forced == 8  # TOY-2/TOY-3: 16 cards, one a turn, two seats
    assert client.get(url, headers=token).json()["decision_number"] == 16
    res = v["result"]  # TOY-4
    assert len(res["standings"]) == 2 and res["winners"] and v["seed"] is not None
    assert res["you_won"] == (0 in res["winners"])
    assert v["table"]["choices"] == [] and v["table"]["end"] is not None

    r = client.post(url + "/actions", headers=token, json={"action": 0, "decision_number": 16})
    assert r.status_code == 409 and "over" in r.json()["detail"]
    rec = client.get(url + "/record", headers=token)
    assert rec.status_code == 200 and rec.headers["content-type"].startswith("application/x-ndjson")
    path = tmp_path / "toy.jsonl"
    path.write_text(rec.text)
    assert replay(str(path)) is not None
    assert client.delete(url, headers=token).status_code == 204
    assert client.get(url, headers=token).status_code == 404


def test_toy_errors_are_one_line_and_change_nothing(client):
    g = client.post("/api/toy/games", json={}).json()  # defaults: 3 players, the default line-up
    assert g["players"] == 3 and len(g["controllers"]) == 3
    token = {"X-Seat-Token": g["seat_token"]}
    url = f"/api/toy/games/{g['game_id']}"
    legal = {c["action"] for c in g["table"]["choices"]}
    bad = next(a for a in range(8) if a not in legal)
    r = client.post(url + "/actions", headers=token, json={"action": bad, "decision_number": g["decision_number"]})
    assert r.status_code == 409 and "play a" in r.json()["detail"] and "\n" not in r.json()["detail"]
    r = client.post(url + "/actions", headers=token, json={"action": 99, "decision_number": g["decision_number"]})
    assert r.status_code == 409 and "out of range" in r.json()["detail"]
    assert client.get(url, headers=token).json()["decision_number"] == g["decision_number"]
    r = client.post("/api/toy/games", json={"players": 5})
    assert r.status_code == 422
    r = client.post("/api/toy/games", json={"opponents": ["greedy"]})
    assert r.status_code == 422 and "toy-high" in r.json()["detail"]
    client.delete(url, headers=token)


def test_the_generic_page_serves_a_game_without_its_own(client):
    page = client.get("/toy")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "/static/generic.js" in page.text and "/static/style.css" in page.text
    assert client.get("/static/generic.js").status_code == 200
    assert client.get("/black-market").text == page.text  # Black Market plays on the generic page
    assert "/static/generic.js" in client.get("/ripmarket").text  # R.I.P. Market has the one page too
    assert "/api/catalog" in client.get("/").text  # / is the lobby of every game
    r = client.get("/no-such-game")
    assert r.status_code == 404 and "/toy" in r.json()["detail"]


def test_a_games_page_plugin_is_served_from_its_spec(client):
    """GameSpec.web: the toy game's plugin file is served at /plugins/toy.js; a game without
    one gets an empty script (the generic drawing alone); an unknown game is a 404."""
    import ripmarket_env.games as G

    r = client.get("/plugins/toy.js")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
    assert 'RipmarketTable.register("toy"' in r.text
    plain = next((g for g in G.ids() if not G.get(g).web), None)
    if plain is not None:
        r = client.get(f"/plugins/{plain}.js")
        assert r.status_code == 200 and "register" not in r.text
    r = client.get("/plugins/no-such-game.js")
    assert r.status_code == 404 and "toy" in r.json()["detail"]


def test_bots_gives_what_a_set_up_screen_needs(client):
    """GET /api/{game}/bots names, for every game, what the generic page's set-up screen
    offers: the player counts and the default one, the default bot of every other seat per
    count, the rule variants with the values each count allows and their defaults; every
    default is a value the rules accept at that count."""
    from ripmarket_env.games import get, ids

    toy = client.get("/api/toy/bots").json()
    assert toy["title"] == "Pairs" and toy["player_counts"] == [2, 3, 4] and toy["default_players"] == 3
    assert toy["lineups"] == {"2": ["toy-high"], "3": ["toy-high", "toy-low"], "4": ["toy-high", "toy-low", "toy-high"]}
    assert toy["setup_fields"] == {} and toy["setup_values"] == {"2": {}, "3": {}, "4": {}}
    for game in ids():
        info = client.get(f"/api/{game}/bots").json()
        spec = get(game)
        assert info["default_players"] in info["player_counts"]
        offered = {b["name"] for b in info["bots"]}
        for p in info["player_counts"]:
            lineup = info["lineups"][str(p)]
            assert len(lineup) == p - 1 and set(lineup) <= offered
            defaults = info["setup_defaults"][str(p)]
            assert set(defaults) == set(info["setup_fields"])
            assert set(info["setup_values"][str(p)]) <= set(info["setup_fields"])
            given = {k: v for k, v in defaults.items() if v is not None}
            spec.make_rules(p, **given)  # the defaults are the rules' own: accepted as given
