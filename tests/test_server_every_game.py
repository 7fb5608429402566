"""Issue 39, item 6, for every registered game (the tests' toy game too): a game created
with a chosen seed is a practice game (``practice`` in its view and its record), one
without is not and hides its seed until it ends; and every game's create schema says what
the server accepts: per player count, the seats (0 to players-1) and how many bots may be
named (1 to players-1), an absent ``players`` being the default count. The schema's
verdict (jsonschema on the OpenAPI document) and the server's answer agree on every
boundary of every count."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from fastapi.testclient import TestClient

from ripmarket_env.app.server import create_app
from ripmarket_env.app.server.kinds import kinds

GAMES = list(kinds())


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(max_games=10_000, max_games_per_client=10_000), base_url="http://127.0.0.1") as c:
        yield c


def play_out(c, game: str, g: dict, seed: int) -> dict:
    rng, state = random.Random(seed), g
    for _ in range(5000):
        if state["over"]:
            return state
        r = c.post(f"/api/{game}/games/{g['game_id']}/actions", headers={"X-Seat-Token": g["seat_token"]},
                   json={"action": rng.choice(state["table"]["choices"])["action"],
                         "decision_number": state["decision_number"]})
        assert r.status_code == 200, r.text
        state = r.json()
    raise AssertionError(f"{game}: the game did not end")


def record_head(c, game: str, g: dict) -> dict:
    r = c.get(f"/api/{game}/games/{g['game_id']}/record", headers={"X-Seat-Token": g["seat_token"]})
    assert r.status_code == 200, r.text
    return json.loads(r.text.splitlines()[0])


@pytest.mark.parametrize("game", GAMES)
def test_a_chosen_seed_makes_a_practice_game_in_the_view_and_the_record(client, game):
    players = min(kinds()[game].player_counts)
    chosen = client.post(f"/api/{game}/games", json={"players": players, "opponents": ["random"], "seed": 41})
    secret = client.post(f"/api/{game}/games", json={"players": players, "opponents": ["random"]})
    assert chosen.status_code == secret.status_code == 201, (chosen.text, secret.text)
    g, s = chosen.json(), secret.json()
    assert g["practice"] is True and g["seed"] == 41
    assert s["practice"] is False and s["seed"] is None  # secret while it runs
    for game_view, practice in ((g, True), (s, False)):
        read = client.get(f"/api/{game}/games/{game_view['game_id']}", headers={"X-Seat-Token": game_view["seat_token"]})
        assert read.json()["practice"] is practice
        final = play_out(client, game, game_view, 3)
        assert final["practice"] is practice and isinstance(final["seed"], int)
        head = record_head(client, game, game_view)
        assert head["practice"] is practice and head["seed"] == final["seed"]
    assert g["seed"] == 41 and record_head(client, game, g)["seed"] == 41


def create_schema(client, game: str):
    """A validator of ``game``'s create body, from the server's OpenAPI document."""
    doc = client.get("/openapi.json").json()
    ref = doc["paths"][f"/api/{game}/games"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    return jsonschema.Draft202012Validator({"$ref": ref, "components": doc["components"]})


@pytest.mark.parametrize("game", GAMES)
def test_the_create_schema_agrees_with_the_server_for_every_player_count(client, game):
    kind = kinds()[game]
    schema = create_schema(client, game)
    bodies = []
    for p in kind.player_counts:
        bodies += [{"players": p, "seat": p - 1, "opponents": ["random"]},             # the last seat
                   {"players": p, "seat": p, "opponents": ["random"]},                 # one past it
                   {"players": p, "opponents": ["random"] * (p - 1)},                  # a bot per other seat
                   {"players": p, "opponents": ["random"] * p},                        # one bot too many
                   {"players": p, "opponents": []}]                                    # none named
    default = kind.spec.default_players
    bodies += [{"seat": default - 1, "opponents": ["random"]}, {"seat": default, "opponents": ["random"]},
               {"opponents": ["random"] * (default - 1)}, {"opponents": ["random"] * default},
               {"players": min(kind.player_counts) - 1}, {"players": max(kind.player_counts) + 1}]
    for body in bodies:
        valid = schema.is_valid(body)
        r = client.post(f"/api/{game}/games", json=body)
        assert r.status_code == (201 if valid else 422), (body, valid, r.text)
        if valid:
            v = r.json()
            assert v["players"] == body.get("players", default) and v["seat"] == body.get("seat", 0)
            assert len(v["controllers"]) == v["players"]
        else:
            assert "\n" not in r.json()["detail"]
    # the boundaries tried above are the ones the schema states, one branch per count
    branches = {b["properties"]["players"]["const"]: b["properties"] for b in create_branches(client, game)}
    assert {p: (b["seat"]["maximum"], b["opponents"]["maxItems"]) for p, b in branches.items()} == \
        {p: (p - 1, p - 1) for p in kind.player_counts}


def create_branches(client, game: str) -> list[dict]:
    doc = client.get("/openapi.json").json()
    ref = doc["paths"][f"/api/{game}/games"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    return doc["components"]["schemas"][ref.rsplit("/", 1)[1]]["oneOf"]


@pytest.mark.parametrize("game", GAMES)
def test_every_create_body_takes_empty_rules_and_names_the_fields_it_allows(client, game):
    """Every game's create body takes ``"rules": {}`` (a game with no variants over HTTP
    too), and an unknown field, at the top or under ``rules``, is answered with the fields
    that object allows, not a bare "unknown field"."""
    kind = kinds()[game]
    before = len(client.app.state.games)
    r = client.post(f"/api/{game}/games", json={"rules": {}, "seed": 1})
    assert r.status_code == 201, r.text
    r = client.post(f"/api/{game}/games", json={"colour": "red"})
    assert r.status_code == 422 and "colour: unknown field; allowed: players, seat, opponents, seed, rules" \
        in r.json()["detail"], r.text
    r = client.post(f"/api/{game}/games", json={"rules": {"surprise": 1}})
    detail = r.json()["detail"]
    assert r.status_code == 422 and "rules.surprise: unknown field" in detail, r.text
    offered = list(kind.setup_fields)
    assert (f"allowed: {', '.join(offered)}" in detail) if offered else ("this object takes no fields" in detail), detail
    assert len(client.app.state.games) == before + 1  # only the first was created


@pytest.mark.parametrize("game", GAMES)
def test_a_body_nested_too_deeply_is_answered_like_any_bad_body(client, game):
    """Thousands of nested brackets (under the body size limit) make FastAPI's JSON parser
    raise; the answer is the 422 every bad body gets, naming what is wrong and the shape
    expected, not FastAPI's bare 400 "There was an error parsing the body"."""
    deep = {"content": "[" * 32_000, "headers": {"content-type": "application/json"}}
    r = client.post(f"/api/{game}/games", **deep)
    assert r.status_code == 422 and "the request body is not valid JSON (nested too deeply)" in r.json()["detail"]
    assert "Expected a JSON object" in r.json()["detail"]
    r = client.post(f"/api/{game}/bots/random/act", **deep)
    assert r.status_code == 422 and "nested too deeply" in r.json()["detail"]
