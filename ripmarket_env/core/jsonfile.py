"""Reading a JSON data file that may come from a stranger or be damaged (card files).

``read_json(path, label, error, max_bytes)`` gives the parsed data or raises ``error`` with
one line naming the file and what is wrong: missing or unreadable, larger than
``max_bytes`` (checked before it is read), not UTF-8 text, malformed JSON, nested too
deeply, an integer of more than 4,300 digits, or ``NaN``/``Infinity`` (not JSON, though
Python's parser takes them). The games' card loaders share it
(docs/ARCHITECTURE.md, "Files from elsewhere")."""

from __future__ import annotations

import json
import os
from pathlib import Path

#: A card file larger than this is not a card file.
MAX_DATA_FILE_BYTES = 4 << 20


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def read_json(path, label: str, error: type[Exception], max_bytes: int = MAX_DATA_FILE_BYTES):
    """The JSON value in ``path``, or ``error(f"{label}: ...")`` saying what is wrong."""
    p = Path(path)
    try:
        size = os.stat(p).st_size
        if p.is_dir():
            raise error(f"{label}: is a folder, not a data file")
        if size > max_bytes:
            raise error(f"{label}: {size:,} bytes is too large for this file (at most {max_bytes:,})")
        raw = p.read_bytes()
    except FileNotFoundError:
        raise error(f"{label}: file not found") from None
    except OSError as exc:
        raise error(f"{label}: cannot read the file ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:  # grown since the stat
        raise error(f"{label}: {len(raw):,} bytes is too large for this file (at most {max_bytes:,})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{label}: not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise error(f"{label}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise error(f"{label}: nested too deeply to be a data file") from None
    except ValueError as exc:  # NaN/Infinity, or an integer of more than 4,300 digits
        raise error(f"{label}: a value cannot be read ({str(exc).split(';')[0]})") from None


def short(v, limit: int = 60) -> str:
    """``repr(v)`` for a one-line message: cut to ``limit`` characters, a huge integer by its size."""
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 256:
        return f"an integer of about {int(v.bit_length() * 0.30103) + 1:,} digits"
    try:
        r = repr(v)
    except (ValueError, RecursionError):
        return f"a {type(v).__name__} too large to show"
    return r if len(r) <= limit else r[: limit - 3] + "..."
