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

    def __new__(cls, *args, **kwargs):
        # Built directly (``RulesConfig(num_players=4, ghosts=1)``), an unknown field gets the
        # game's error naming the allowed ones, as from ``from_dict``, not Python's TypeError
        # about ``__init__``. (The dataclass's generated ``__init__`` checks the rest.)
        cls._check_known(kwargs)
        return super().__new__(cls)

    @classmethod
    def _check_known(cls, data) -> None:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known, key=str)
        if unknown:
            raise cls.error(f"rules config: unknown field(s) {', '.join(map(str, unknown))}; "
                            f"allowed: {', '.join(sorted(known))}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict):
        """The config from a mapping of its fields; unknown fields or a non-mapping raise
        the game's error naming what is allowed."""
        if not isinstance(data, dict):
            raise cls.error(f"rules config must be a mapping of fields, got {type(data).__name__}")
        cls._check_known(data)
        try:
            return cls(**data)
        except TypeError as exc:  # pragma: no cover - the known-field check comes first
            raise cls.error(f"rules config: {exc}") from None
