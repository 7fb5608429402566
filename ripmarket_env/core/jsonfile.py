"""Reading a JSON data file that may come from a stranger or be damaged (card files).

``read_json(path, label, error, max_bytes)`` gives the parsed data or raises ``error`` with
one line naming the file and what is wrong: missing or unreadable, larger than
``max_bytes`` (checked before it is read), not UTF-8 text, malformed JSON, nested too
deeply, an integer of more than 4,300 digits, ``NaN``/``Infinity`` (not JSON, though
Python's parser takes them), or an object that repeats a key. The games' card loaders share it
(docs/ARCHITECTURE.md, "Files from elsewhere")."""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
import unicodedata
from pathlib import Path

#: A card file larger than this is not a card file.
MAX_DATA_FILE_BYTES = 4 << 20


#: A card's name is shown in one cell of a table, one line of a terminal, one button.
MAX_NAME_CHARS = 48
#: A card's rules text (and an erratum's words) is one paragraph.
MAX_TEXT_CHARS = 1000
#: Characters that would reorder what a terminal shows (bidirectional overrides and isolates).
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def text_problem(v, limit: int = MAX_TEXT_CHARS, empty: bool = True) -> str | None:
    """What is wrong with ``v`` as a text field of a card file, or None: it must be a string
    (non-empty unless ``empty``) of at most ``limit`` characters on one line, without control
    characters (line breaks, tabs, terminal escapes) or bidirectional overrides, which would
    break the tables, terminals and pages that show it. Every game's card loader asks it
    about names (``limit=MAX_NAME_CHARS, empty=False``) and texts."""
    what = f"{'a' if empty else 'a non-empty'} string of at most {limit:,} characters on one line, " \
        "without control characters"
    if not isinstance(v, str):
        return f"must be {what}; got {type(v).__name__} {short(v)}"
    if not empty and not v.strip():
        return f"must be {what}; got {short(v)}"
    if len(v) > limit:
        return f"must be {what}; got {len(v):,} characters"
    bad = next((c for c in v if c in _BIDI or unicodedata.category(c) in ("Cc", "Zl", "Zp")), None)
    if bad is not None:
        return f"must be {what}; got {short(v)}, which holds U+{ord(bad):04X}"
    return None


class _Refused:
    """A number JSON data may not hold, left in place by the parser until its field is known."""

    def __init__(self, what: str):
        self.what = what


def _integer(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= 4300 else _Refused(f"an integer of {digits:,} digits (more than 4300 digits)")


def loads(text: str):
    """``json.loads``, refusing what Python's parser would take or choke on: ``NaN``,
    ``Infinity``, integers of more than 4,300 digits and an object that repeats a key
    (Python's parser keeps the last value silently) raise ``ValueError`` naming their field
    (``field 'point_cards[2].points': NaN is not a number JSON allows``)."""
    refused = []

    def constant(name: str) -> _Refused:
        refused.append(name)
        return _Refused(f"{name} is not a number JSON allows")

    def unique(pairs: list) -> dict:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen = set()
            for k, _ in pairs:
                if k in seen:
                    d[k] = _Refused(f"the key {short(k, 40)} appears more than once in its object "
                                    "(each key may appear once)")
                seen.add(k)
            refused.append("duplicate")
        return d

    try:
        data = json.loads(text, parse_constant=constant, object_pairs_hook=unique)
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer past 4,300 digits: parse again, slowly, to find its field
        data = json.loads(text, parse_constant=constant, parse_int=_integer, object_pairs_hook=unique)
        refused.append("int")
    if not refused:
        return data
    stack = [("", data)]
    while stack:  # iterative: a deep document is no recursion here
        where, v = stack.pop()
        if isinstance(v, _Refused):
            raise ValueError(f"field {short(where or '(top level)', 120)}: {v.what}")
        if isinstance(v, dict):
            stack.extend((f"{where}.{k}" if where else str(k), x) for k, x in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x) for i, x in reversed(list(enumerate(v))))
    return data


class TooLarge(OSError):
    """``read_capped``: the file holds more than the bytes allowed."""


def why_not_a_file(path) -> str:
    """Why ``path``, which is not a regular file, cannot be read as one, for a message
    (``f"{path} {why_not_a_file(path)}"``): it does not exist, or it is a folder, a named pipe
    or socket, or a device."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "is a named pipe or socket, not a file"
    return "is a device, not a file" if not stat.S_ISREG(mode) else "is a file"


def read_capped(path, max_bytes: int) -> bytes:
    """The bytes of ``path``, reading at most ``max_bytes + 1`` of them: ``TooLarge`` if there
    are more. A device or a pipe reports no size (``/dev/zero`` never ends), so the cap is on
    what is read, not on what ``stat`` says; a folder raises ``IsADirectoryError``, and a
    named pipe or a socket an ``OSError`` before it is opened (opening a pipe waits for a
    writer that may never come)."""
    if stat.S_ISFIFO(mode := os.stat(path).st_mode) or stat.S_ISSOCK(mode):
        raise OSError(errno.ESPIPE, "a named pipe or socket, not a file")
    with open(path, "rb") as f:
        raw = f.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise TooLarge(f"more than {max_bytes:,} bytes")
    return raw


def read_json(path, label: str, error: type[Exception], max_bytes: int = MAX_DATA_FILE_BYTES):
    """The JSON value in ``path``, or ``error(f"{label}: ...")`` saying what is wrong."""
    p = Path(path)
    try:
        size = os.stat(p).st_size
        if p.is_dir():
            raise error(f"{label}: is a folder, not a data file")
        if size > max_bytes:
            raise error(f"{label}: {size:,} bytes is too large for this file (at most {max_bytes:,})")
        raw = read_capped(p, max_bytes)
    except FileNotFoundError:
        raise error(f"{label}: file not found") from None
    except TooLarge:  # grown since the stat, or a device or pipe
        raise error(f"{label}: more than {max_bytes:,} bytes is too large for this file") from None
    except OSError as exc:
        raise error(f"{label}: cannot read the file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{label}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise error(f"{label}: the file is empty (expected a JSON object)")
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{label}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise error(f"{label}: nested too deeply to be a data file") from None
    except ValueError as exc:  # NaN/Infinity, or an integer of more than 4,300 digits, in its field
        raise error(f"{label}: {exc}") from None


def listed_twice(got, index: int) -> str:
    """The hint for a card whose ``id`` (expected ``index``, its place in the list) is an
    earlier card's: " (a card listed twice?)", else ""."""
    return " (a card listed twice?)" if isinstance(got, int) and not isinstance(got, bool) and 0 <= got < index else ""


def other_game(data, game_id: str) -> str | None:
    """The game another game's card file names itself for (its ``"game"`` field, or a
    ``"format"`` of ``"<game>-cards"``), when that is not ``game_id``; None otherwise."""
    if not isinstance(data, dict):
        return None
    named = data.get("game")
    fmt = data.get("format")
    if not isinstance(named, str) and isinstance(fmt, str) and fmt.endswith("-cards"):
        named = fmt[:-len("-cards")]
    return named if isinstance(named, str) and named and named != game_id else None


def short(v, limit: int = 60) -> str:
    """``repr(v)`` for a one-line message: cut after ``limit`` characters with its length
    said (``'ppp...' (50,002 characters)``), a huge integer by its size; every error that
    echoes a user's input (files, records, checkpoints, HTTP requests) goes through it."""
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 256:
        return f"an integer of about {int(v.bit_length() * 0.30103) + 1:,} digits"
    try:
        r = repr(v)
    except (ValueError, RecursionError):
        return f"a {type(v).__name__} too large to show"
    return r if len(r) <= limit else r[:limit] + f"... ({len(r):,} characters)"


_SAVING = threading.Lock()


def save_cache_json(path: Path, data) -> None:
    """Write ``data`` to ``path`` as JSON in one step (a temporary file, then a rename, so a
    reader never sees half a file; the threads of a process save one at a time, each
    writing what ``data`` holds when its turn comes, so an older copy never replaces a newer
    one); a cache that cannot be written is skipped."""
    with _SAVING:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(data, sort_keys=True))
            os.replace(tmp, path)
        except OSError:
            pass
