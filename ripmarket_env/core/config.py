"""What every game's rules config shares: ``to_dict`` and a checked ``from_dict``.

A game's ``RulesConfig`` is a frozen dataclass that subclasses ``RulesBase`` and names its
error class in ``error`` (a ``ValueError`` subclass); its own ``__post_init__`` checks
the values."""

from __future__ import annotations

from dataclasses import asdict, fields


class RulesBase:
    error: type = ValueError
    setup_fields: dict = {}
    """The variants a person may choose when setting up a game against the bots (the web
    server's ``rules`` object), as JSON Schema fragments by field name: ``type``
    (``integer``, ``boolean``) with ``minimum``/``maximum``, or ``enum``, and a
    ``description``. A field left out cannot be chosen there (the card database). The
    rules config and the engine still check every value; the server states, per player
    count, the values of each field they accept."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict):
        """The config from a mapping of its fields; unknown fields or a non-mapping raise
        the game's error naming what is allowed."""
        if not isinstance(data, dict):
            raise cls.error(f"rules config must be a mapping of fields, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise cls.error(f"rules config: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(known))}")
        try:
            return cls(**data)
        except TypeError as exc:  # pragma: no cover - the known-field check comes first
            raise cls.error(f"rules config: {exc}") from None
