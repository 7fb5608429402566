"""Issue 39, item 2: a person is never locked out by their own games. A closed tab's game
stops counting after a short grace: the page's ``pagehide`` beacon (``POST
/api/{game}/games/{id}/away``, the seat token in the body, since a beacon cannot set
headers) marks the game away; any later request of its player (a read, an answer, a
reload's resume) clears the mark; a game away for longer than the grace (``create_app(
away_seconds=...)``, ``ripmarket serve --away-grace``) expires ("tab closed") and frees its
slot, at the next count or by the sweep. Every registered game, the tests' toy game too;
the clock is the app's injected one, so no test waits for the grace. The page's side (a
closed tab in Chromium) is in tests/test_generic_browser.py."""

from __future__ import annotations

import json
import random

import pytest
from fastapi.testclient import TestClient

from ripmarket_env.app.server import create_app
from ripmarket_env.app.server.games import Limits
from ripmarket_env.app.server.kinds import kinds

GAMES = list(kinds())
GRACE = 20.0
SENT_BY_A_BEACON = {"Content-Type": "text/plain;charset=UTF-8"}  # what navigator.sendBeacon(url, string) sends


def make(max_games_per_client: int = 1):
    """A client of a new app whose clock is ``now[0]``: ``(client, now)``."""
    now = [1000.0]
    app = create_app(max_games_per_client=max_games_per_client, away_seconds=GRACE, clock=lambda: now[0])
    return TestClient(app, base_url="http://127.0.0.1", client=("127.0.0.1", 50000)), now


def start(c, game: str, seed: int | None = None):
    """A new two-player game of ``game`` against the random bot (the POST answer)."""
    body = {"players": min(kinds()[game].player_counts), "opponents": ["random"]}
    if seed is not None:
        body["seed"] = seed
    return c.post(f"/api/{game}/games", json=body)


def url(game: str, g: dict) -> str:
    return f"/api/{game}/games/{g['game_id']}"


def tok(g: dict) -> dict:
    return {"X-Seat-Token": g["seat_token"]}


def beacon(c, game: str, g: dict, page: str | None = None):
    """What the page sends on pagehide (with ``page``: the page's X-Page-Id, as the page sends it)."""
    body = {"seat_token": g["seat_token"], **({"page": page} if page is not None else {})}
    return c.post(url(game, g) + "/away", content=json.dumps(body), headers=SENT_BY_A_BEACON)


def one_line(r) -> str:
    body = r.json()
    assert set(body) == {"detail"} and isinstance(body["detail"], str)
    assert "\n" not in body["detail"] and len(body["detail"]) < 600, body["detail"]
    return body["detail"]


@pytest.mark.parametrize("game", GAMES)
def test_a_closed_tabs_game_stops_counting_after_the_grace(game):
    c, now = make()
    r = start(c, game)
    assert r.status_code == 201, r.text
    g = r.json()
    refused = start(c, game)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "1800"  # the idle timeout
    now[0] += 5
    assert beacon(c, game, g).status_code == 204
    now[0] += 1
    refused = start(c, game)  # still counted within the grace; the slot frees when the grace ends
    assert refused.status_code == 429 and refused.headers["Retry-After"] == str(int(GRACE) - 1)
    assert "its tab closed" in one_line(refused)
    now[0] += GRACE - 1  # exactly the grace after the beacon: still counted
    assert start(c, game).status_code == 429
    now[0] += 0.5
    r = start(c, game)  # where it was 429 before: the closed tab's game ended at this count
    assert r.status_code == 201, r.text
    gone = c.get(url(game, g), headers=tok(g))
    assert gone.status_code == 410
    text = one_line(gone)
    assert "has expired: tab closed" in text and f"--away-grace {GRACE:g}" in text
    row = c.app.state.games.store.get(game, g["game_id"])
    assert row.status == "expired" and row.end_reason.startswith("tab closed") and row.ended == now[0]
    # the game cannot be marked again, nor brought back
    assert beacon(c, game, g).status_code == 410
    assert c.post(url(game, g) + "/actions", headers=tok(g), json={"action": 0, "decision_number": 0}).status_code == 410


@pytest.mark.parametrize("game", GAMES)
def test_the_sweep_ends_a_closed_tabs_game_without_a_new_one(game):
    c, now = make(max_games_per_client=4)
    g = start(c, game).json()
    other = start(c, game).json()
    manager = c.app.state.games
    assert beacon(c, game, g).status_code == 204
    now[0] += GRACE / 2
    assert manager.sweep() == 0 and len(manager) == 2
    now[0] += GRACE
    assert manager.sweep() == 1 and len(manager) == 1 and manager.client_games("127.0.0.1") == 1
    assert manager.store.get(game, g["game_id"]).end_reason.startswith("tab closed")
    assert c.get(url(game, other), headers=tok(other)).status_code == 200  # the other game plays on


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("request_kind", ["reload", "action", "record"])
def test_a_request_within_the_grace_keeps_the_game(game, request_kind):
    """A beacon then, within the grace, a request of the game's player: a reload's resume
    (GET, as the page does), an answer, or any other request of the game (the record, not
    yet there): the mark is gone, the game stays live and counting long past the grace."""
    c, now = make()
    g = start(c, game).json()
    assert beacon(c, game, g).status_code == 204
    now[0] += GRACE - 1
    if request_kind == "reload":
        r = c.get(url(game, g), headers=tok(g))
        assert r.status_code == 200 and r.json()["game_id"] == g["game_id"]
        assert r.json()["decision_number"] == g["decision_number"]  # the same game, where it was
    elif request_kind == "action":
        choice = random.Random(0).choice(g["table"]["choices"])["action"]
        r = c.post(url(game, g) + "/actions", headers=tok(g),
                   json={"action": choice, "decision_number": g["decision_number"]})
        assert r.status_code == 200, r.text
    else:
        assert c.get(url(game, g) + "/record", headers=tok(g)).status_code == 409  # not over yet
    now[0] += 10 * GRACE
    assert c.app.state.games.sweep() == 0
    refused = start(c, game)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > GRACE  # counted, not away
    assert c.get(url(game, g), headers=tok(g)).status_code == 200
    # a second beacon (the tab closed after all) marks it again
    assert beacon(c, game, g).status_code == 204
    now[0] += GRACE + 1
    assert start(c, game).status_code == 201


@pytest.mark.parametrize("game", GAMES)
def test_a_reloads_late_beacon_does_not_mark_the_game_its_new_page_took_up(game):
    """A reload: the old page's beacon and the new page's resume race. When the resume
    (X-Page-Id of the new page) reaches the server first, the old page's beacon is ignored,
    so a player who then thinks for longer than the grace still has the game. A beacon of
    the page that asked last marks the game, a beacon without a page too (a client that
    sends none), and a stale beacon never clears a mark."""
    c, now = make()
    g = start(c, game).json()
    away_since = lambda: c.app.state.games._live[g["game_id"]].away_since  # noqa: E731
    assert c.get(url(game, g), headers={**tok(g), "X-Page-Id": "page-1"}).status_code == 200
    assert c.get(url(game, g), headers={**tok(g), "X-Page-Id": "page-2"}).status_code == 200  # the reload
    assert beacon(c, game, g, page="page-1").status_code == 204  # the old page's beacon, late
    assert away_since() is None
    now[0] += 10 * GRACE
    assert c.app.state.games.sweep() == 0 and start(c, game).status_code == 429  # still the player's game
    assert c.post(url(game, g) + "/actions", headers={**tok(g), "X-Page-Id": "page-2"},
                  json={"action": g["table"]["choices"][0]["action"], "decision_number": g["decision_number"]}
                  ).status_code == 200
    assert beacon(c, game, g, page="page-2").status_code == 204  # the tab that asked last closes
    assert away_since() == now[0]
    marked = now[0]
    now[0] += 1
    assert beacon(c, game, g, page="page-1").status_code == 204  # a stale one leaves the mark
    assert away_since() == marked
    now[0] += GRACE
    assert start(c, game).status_code == 201  # the closed tab's game ended
    # a beacon without a page marks as before
    c2, now2 = make()
    g2 = start(c2, game).json()
    assert c2.get(url(game, g2), headers={**tok(g2), "X-Page-Id": "page-9"}).status_code == 200
    assert beacon(c2, game, g2).status_code == 204
    assert c2.app.state.games._live[g2["game_id"]].away_since == now2[0]


@pytest.mark.parametrize("game", GAMES)
def test_bad_beacons_answer_one_line_and_change_nothing(game):
    c, now = make()
    g = start(c, game).json()
    away = url(game, g) + "/away"
    for body, status, words in (
        ("", 422, "the request body is missing"),
        ("   ", 422, "the request body is missing"),
        ("seat_token=abc", 422, "not valid JSON"),
        ('{"seat_token": "x"', 422, "not valid JSON"),
        (b"\xff\xfe\x00", 422, "not valid JSON"),
        ("[]", 422, "input should be an object"),
        ('"%s"' % g["seat_token"], 422, "input should be an object"),
        ("{}", 422, "seat_token: required but missing"),
        ('{"seat_token": 12}', 422, "seat_token: input should be a valid string"),
        ('{"seat_token": ""}', 422, "seat_token: string should have at least 1 character"),
        ('{"seat_token": "%s"}' % ("t" * 65), 422, "seat_token: string should have at most 64 characters"),
        ('{"seat_token": "%s", "seat": 0}' % g["seat_token"], 422, "seat: unknown field"),
        ('{"seat_token": "%s", "page": 7}' % g["seat_token"], 422, "page: input should be a valid string"),
        ('{"seat_token": "%s", "page": ""}' % g["seat_token"], 422, "page: string should have at least 1 character"),
        ('{"seat_token": "%s", "page": "%s"}' % (g["seat_token"], "p" * 65), 422,
         "page: string should have at most 64 characters"),
        ('{"seat_token": "not-the-token"}', 403, "the seat token does not match"),
    ):
        for headers in (SENT_BY_A_BEACON, {"Content-Type": "application/json"}):
            r = c.post(away, content=body, headers=headers)
            assert r.status_code == status, (body, r.text)
            assert words in one_line(r), (body, r.text)
    # the token in the header alone is not enough: a beacon's body is what the route reads
    r = c.post(away, headers=tok(g))
    assert r.status_code == 422 and '{"seat_token": "<your seat_token>"}' in one_line(r)
    r = c.post(f"/api/{game}/games/no-such-game/away", json={"seat_token": g["seat_token"]})
    assert r.status_code == 404 and "no-such-game" in one_line(r)
    r = c.post(f"/api/not-a-game/games/{g['game_id']}/away", json={"seat_token": g["seat_token"]})
    assert r.status_code == 422 and "path parameter 'game'" in one_line(r)
    r = c.get(away)
    assert r.status_code == 405 and r.headers["Allow"] == "POST"
    r = c.post(away, content="x" * 70_000, headers=SENT_BY_A_BEACON)
    assert r.status_code == 413 and "--max-body" in one_line(r)
    # none of them marked the game: long after the grace it still counts and plays
    now[0] += 10 * GRACE
    assert start(c, game).status_code == 429
    assert c.get(url(game, g), headers=tok(g)).status_code == 200


def test_a_beacon_for_a_finished_game_leaves_it_as_it_is():
    c, now = make()
    g = start(c, "toy").json()
    state, rng = g, random.Random(1)
    while not state["over"]:
        r = c.post(url("toy", g) + "/actions", headers=tok(g),
                   json={"action": rng.choice(state["table"]["choices"])["action"],
                         "decision_number": state["decision_number"]})
        assert r.status_code == 200, r.text
        state = r.json()
    assert beacon(c, "toy", g).status_code == 204
    now[0] += 10 * GRACE
    row = c.app.state.games.store.get("toy", g["game_id"])
    assert row.status == "over" and row.end_reason == "finished"
    assert c.get(url("toy", g), headers=tok(g)).json()["over"] is True


def test_the_route_is_in_the_schema_and_the_grace_is_checked():
    c, _ = make()
    op = c.get("/openapi.json").json()["paths"]["/api/{game}/games/{game_id}/away"]["post"]
    body = op["requestBody"]
    assert body["required"] is True
    schema = body["content"]["application/json"]["schema"]
    assert schema["required"] == ["seat_token"] and schema["additionalProperties"] is False
    assert schema["properties"]["seat_token"]["minLength"] == 1 and schema["properties"]["seat_token"]["maxLength"] == 64
    assert {"204", "403", "404", "410", "422"} <= set(op["responses"])
    assert "text/plain" in op["description"] and "--away-grace" in op["description"]
    assert {p["name"] for p in op["parameters"]} == {"game", "game_id"}
    assert Limits().away_seconds == 30.0
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="away_seconds must be a positive number of seconds"):
            Limits(away_seconds=bad)


def test_serve_has_the_away_grace_option():
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    result = CliRunner().invoke(app, ["serve", "--help"], terminal_width=200)
    assert result.exit_code == 0 and "--away-grace" in result.output
    for value in ("0", "-5", "inf"):
        result = CliRunner().invoke(app, ["serve", "--away-grace", value])
        assert result.exit_code == 2 and f"--away-grace {value}" in result.output and "not allowed" in result.output
