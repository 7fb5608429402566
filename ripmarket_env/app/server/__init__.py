"""Play every registered game against the bots in a browser: a FastAPI app
(``create_app``) with one JSON API keyed by the game, its OpenAPI schema at ``/docs``, and
the games' static web pages (``/`` and ``/<game>``).

Run it with ``ripmarket serve`` (loopback, port 8000 by default).
"""

from ripmarket_env.app.server.app import create_app

__all__ = ["create_app"]
