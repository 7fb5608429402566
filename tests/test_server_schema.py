"""The JSON API of `ripmarket serve` against its own OpenAPI schema (issue 19, 10; issue 39, 4):
schemathesis generates requests from the schema, in process against the ASGI app, and every
one of its checks must pass over every route of every game: no 5xx, schema-valid requests
accepted, schema-invalid ones refused, every status and content type declared, answers
matching their schemas, 405 with ``Allow``. The stateful test follows the schema's links
from a new game (its id and seat token) to reading it, answering it, its record and its
end, so part of the requests name a real game. Bounded (a few examples per operation) and
derandomized, so a run is the same every time; ``make soak`` runs a larger one, and the
full run against a live server is in docs/SERVER.md."""

from __future__ import annotations

import pytest
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
# The scenarios follow one game over several requests, and a request can wait seconds for a
# compile or a bot on a loaded machine: their games live long enough for a scenario (410 Gone
# of an expired game is the right answer, but not to a request its scenario made in time).
# A scenario starts one or two games, so a few hundred live at most.
scenario_app = create_app(max_games=10_000, max_games_per_client=10_000, bot_calls=10**9,
                          idle_seconds=60.0, max_age_seconds=60.0, keep_seconds=60.0,
                          allowed_hosts=(*LOOPBACK_HOSTS, "testserver"))
scenario_schema = schemathesis.openapi.from_asgi("/openapi.json", scenario_app)
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


class Workflow(scenario_schema.as_state_machine()):
    """Scenarios along the schema's links (``app._links``), every check on every answer."""

    def validate_response(self, response, case, additional_checks=None, **kwargs):
        case.validate_response(response, checks=ALL_CHECKS, transport_kwargs=kwargs or None,
                               recorder=getattr(self, "recorder", None))


def test_the_links_lead_from_a_new_game_to_its_routes():
    links = schema.raw_schema["paths"]["/api/ripmarket/games"]["post"]["responses"]["201"]["links"]
    assert {"ReadGame", "Act", "Record", "EndGame"} <= set(links)  # schemathesis adds links it infers
    assert links["Act"]["parameters"]["header.X-Seat-Token"] == "$response.body#/seat_token"
    shown = schema.raw_schema["paths"]["/api/{game}/games/{game_id}/actions"]["post"]["responses"]["200"]["links"]
    assert shown["Act"]["parameters"]["header.X-Seat-Token"] == "$request.header.X-Seat-Token"


def test_stateful_scenarios_conform():
    Workflow.run(settings=settings(max_examples=4, stateful_step_count=5, derandomize=True, deadline=None,
                                   database=None, suppress_health_check=list(HealthCheck)))


@pytest.mark.slow
def test_stateful_scenarios_conform_at_length():
    """``make soak``: many more scenarios."""
    Workflow.run(settings=settings(max_examples=60, stateful_step_count=10, derandomize=True, deadline=None,
                                   database=None, suppress_health_check=list(HealthCheck)))


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=100, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema_at_length(case):
    """``make soak``: 100 examples per operation."""
    case.call_and_validate(checks=ALL_CHECKS)


def test_a_bot_refuses_an_impossible_observation_with_409():
    """Every game's rule-based and search bots on observations each value of which is within
    its bounds, but which no table shows (every feature at its low, at its high, drawn at
    random): an answer (200) or a one-line 409, never a 500 (nor 422: the request is
    schema-valid, and the schema cannot state which positions a table shows) (a search bot rebuilding a world
    from five dice of a three-dice game raised; schemathesis found it)."""
    import agents
    import numpy as np
    from fastapi.testclient import TestClient

    client = TestClient(app, base_url="http://127.0.0.1")
    rng = np.random.default_rng(0)
    refused = 0
    for game, kind in app.state.kinds.items():
        low, high = kind.observation_bounds
        mask = [1] * kind.num_actions
        profile = agents.game_agents(game)
        names = [*profile.heuristics, *([profile.search] if profile.search else [])] or ["random"]
        for name in names:
            for obs in (low, high, low + (high - low) * rng.random(low.size)):
                r = client.post(f"/api/{game}/bots/{name}/act", json={"observation": obs.tolist(), "action_mask": mask})
                assert r.status_code in (200, 409), (game, name, r.status_code, r.text[:300])
                if r.status_code == 409:
                    refused += 1
                    detail = r.json()["detail"]
                    assert "\n" not in detail and detail.startswith("observation: bot") and kind.title in detail
                else:
                    assert mask[r.json()["action"]]
    assert refused  # the case that raised before
