"""Play R.I.P. Market against the bots in a browser: a FastAPI app (``create_app``) with a
JSON API, its OpenAPI schema at ``/docs``, and a static web page at ``/``.

Run it with ``ripmarket serve`` (loopback, port 8000 by default).
"""

from ripmarket_env.app.server.app import create_app

__all__ = ["create_app"]
