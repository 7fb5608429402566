"""The JSON API of `ripmarket serve` against its own OpenAPI schema (issue 19, 10): schemathesis
generates requests from the schema, in process against the ASGI app, and every one of its
checks must pass: no 5xx, schema-valid requests accepted, schema-invalid ones refused, every
status and content type declared, answers matching their schemas, 405 with ``Allow``.
Bounded (a few examples per operation) and derandomized, so a run is the same every time;
the full run against a live server is in docs/SERVER.md."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS

from ripmarket_env.app.server import create_app
from ripmarket_env.app.server.app import LOOPBACK_HOSTS

# Limits high enough that POST /api/{game}/games and the bot endpoints reach the game logic
# instead of the 429 of a full server or a spent bot budget; "testserver" is the Host header
# of the in-process client. The schema holds every game's routes. Games expire and are
# dropped within seconds: schemathesis starts thousands of them (every schema branch of every
# game's setup), and a game seated with lookahead bots holds a few MB while it lives.
app = create_app(max_games=10_000, max_games_per_client=10_000, bot_calls=10**9,
                 idle_seconds=2.0, max_age_seconds=2.0, keep_seconds=2.0,
                 allowed_hosts=(*LOOPBACK_HOSTS, "testserver"))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)
ALL_CHECKS = list(CHECKS.get_all())


def test_every_game_has_every_route():
    from ripmarket_env.app.server.kinds import kinds
    from ripmarket_env.games import get, ids

    served = list(kinds())
    # every registered game is served: one without a web session of its own (the tests' toy
    # game) through the generic TableSession (docs/SERVER.md)
    assert served == list(ids()) and "toy" in served
    assert any(not get(g).engine_class.__module__.startswith("ripmarket_env.games.") for g in served)
    paths = schema.raw_schema["paths"]
    for game in served:
        assert f"/api/{game}/games" in paths and f"/api/{game}/bots/{{name}}/act" in paths
    for path in ("/api/{game}/games/{game_id}", "/api/{game}/games/{game_id}/actions",
                 "/api/{game}/games/{game_id}/record", "/api/{game}/bots", "/api/{game}/status"):
        params = [p for op in paths[path].values() for p in op.get("parameters", []) if p["name"] == "game"]
        assert params and all(p["schema"]["$ref"] if "$ref" in p["schema"] else True for p in params)
    enum = next(v for k, v in schema.raw_schema["components"]["schemas"].items() if k == "Game")["enum"]
    assert enum == served


def test_every_check_is_run():
    names = {getattr(c, "__name__", "") for c in ALL_CHECKS}
    assert {"not_a_server_error", "positive_data_acceptance", "negative_data_rejection",
            "status_code_conformance", "content_type_conformance", "response_schema_conformance",
            "unsupported_method"} <= names


@schema.parametrize()
@settings(max_examples=8, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case):
    case.call_and_validate(checks=ALL_CHECKS)
