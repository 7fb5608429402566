"""Checkpoints: an SB3 zip with a ``ripmarket.json`` metadata member inside.

The metadata records what the policy was trained against: package (rules) version, card
digest (``CardDB.digest``), observation size and a digest of the observation layout
(``engine.observation.pieces`` names, sizes and scopes), action count, player counts,
the training config and step count. ``read_metadata`` / ``load_policy`` check the
checkpoint against the current code and raise ``CheckpointError`` saying which part
differs; a missing, corrupt or truncated file raises ``CheckpointError`` too (never a
torch traceback).

No loader here runs code from a checkpoint. SB3's zip also holds ``data``, a JSON file
whose values are cloudpickled objects; ``MaskablePPO.load`` unpickles them, so a
stranger's checkpoint can run any command that way. ``load_policy`` and ``load_model``
(the resume path, ``ripmarket train --resume``) never open ``data``: they read the
metadata (JSON), rebuild the network from its training config and read the weights and
optimizer state with ``torch.load(weights_only=True)``, which refuses anything but
tensors and plain containers. Every member's size is checked against a limit before it
is read (``MAX_META_BYTES``, ``MAX_MEMBER_BYTES``), so a small zip that inflates to
gigabytes is refused unread.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

from ripmarket_env.core.jsonfile import short as _short, why_not_a_file

FORMAT = "ripmarket-checkpoint/1"
META_NAME = "ripmarket.json"
WEIGHTS_NAME = "policy.pth"
OPTIMIZER_NAME = "policy.optimizer.pth"
MAX_META_BYTES = 1 << 20  # ripmarket.json: a few KB in practice
MAX_MEMBER_BYTES = 256 << 20  # any other member (the shipped policies' weights are 1-3 MB)
MAX_MEMBERS = 64


#: The game the zoo's trained agents play today; checkpoints written before the metadata
#: named a game are R.I.P. Market's.
GAME = "ripmarket"


def checkpoint_game(meta: dict) -> str:
    """The game id of a checkpoint's metadata (``ripmarket`` for checkpoints that predate it)."""
    return meta.get("game", GAME)


class CheckpointError(ValueError):
    """A checkpoint that cannot be loaded (missing, corrupt, or built for other rules/layout)."""


def require_game(path, game: str, trains: str | None = None) -> None:
    """``CheckpointError`` unless checkpoint ``path`` was trained on ``game`` (its metadata's
    game; the message names both, the file's cut short). ``trains``: the option of a
    training config that named the file (``"init_from"``, ``"--resume"``), whose message
    then says that the config trains ``game``; otherwise that the file cannot play it."""
    got = checkpoint_game(read_metadata(path, check=False))
    if got == game:
        return
    if trains:
        raise CheckpointError(f"{trains}: {path} is a checkpoint of game {_short(got)}; this config trains {game!r}")
    raise _cannot_play(path, got, game)


def _cannot_play(where, got, game: str) -> CheckpointError:
    """The refusal of a checkpoint of game ``got`` (cut short) asked to play ``game``."""
    return CheckpointError(f"{where}: a checkpoint of game {_short(got)}; it cannot play {game!r}")


# ----------------------------------------------------------------------------- facts
def _current_facts(game: str = GAME, cards=None) -> dict[str, Any]:
    """What a checkpoint of ``game`` must agree with: the package version, the card data's
    digest, the observation layout and the action count of the current code. ``cards``: the
    R.I.P. Market card database in play (a ``CardDB``; None: the packaged cards)."""
    from ripmarket_env.core import __version__

    if game != GAME:
        spec = _spec_of(game)
        eng = spec.make_engine(spec.make_rules(), batch_size=1, **spec.records.default_engine_kwargs())
        lay = eng.obs_layout
        return {
            "game": game,
            "package_version": __version__,
            "card_digest": spec.records.cards_digest(eng),
            "obs_size": int(lay.size),
            "layout": layout_description(lay),
            "layout_digest": layout_digest(lay),
            "num_actions": int(eng.num_actions),
        }
    from ripmarket_env.games.ripmarket.cards.loader import default_cards
    from ripmarket_env.games.ripmarket.actions import ActionTable
    from ripmarket_env.games.ripmarket.observation import layout

    db = default_cards() if cards is None else cards
    lay = layout(db.n_living, db.n_shadow)
    return {
        "game": GAME,
        "package_version": __version__,
        "card_digest": db.digest,
        "obs_size": int(lay.size),
        "layout": layout_description(lay),
        "layout_digest": layout_digest(lay),
        "num_actions": int(ActionTable(db.n_living, db.n_shadow).size),
    }


class CardDigest:
    """The packaged card database under another card digest: handed as ``cards`` to
    ``load_policy`` it accepts a checkpoint trained on the cards of that digest while the
    layout and action checks still compare against the packaged cards. For fine-tuning an
    older bot on new cards only (``init_from_other_cards``); nothing plays with it."""

    def __init__(self, digest: str):
        from ripmarket_env.games.ripmarket.cards.loader import default_cards

        self._db = default_cards()
        self.digest = str(digest)

    def __getattr__(self, name: str):
        return getattr(self._db, name)


def card_edition(digest: str) -> str | None:
    """The packaged card edition with this digest: ``"second-edition"`` (the packaged
    ``cards.json``), ``"first-edition"`` (``first_edition.json``), else None."""
    from ripmarket_env.games.ripmarket.cards.loader import EDITIONS, default_cards, load_cards

    if digest == default_cards().digest:
        return "second-edition"
    for name in EDITIONS:
        if name not in _EDITION_DIGESTS:
            _EDITION_DIGESTS[name] = load_cards(name).digest
        if digest == _EDITION_DIGESTS[name]:
            return name
    return None


_EDITION_DIGESTS: dict[str, str] = {}


def card_mismatch(where: str, trained: Any, in_play: str) -> str:
    """The one-line refusal of a checkpoint trained on other cards than those in play: both
    card databases named by edition where known (and by digest), and what to do about it."""
    trained = str(trained)
    ed_t, ed_p = card_edition(trained), card_edition(in_play)

    def named(ed, digest, what):
        return (f"the {ed.replace('-', ' ')}{what} (card digest {digest[:12]})" if ed
                else f"an unknown card database (card digest {digest[:12]})")

    if ed_t == "second-edition":
        hint = "retrain it for these cards, or play it with the packaged cards (no --cards)"
    elif ed_t:
        hint = f"retrain it for these cards, or play it with --cards {ed_t}"
    else:
        hint = "retrain it for these cards, or play it with the card file it was trained on (--cards FILE)"
    return (f"{where} was trained on {named(ed_t, trained, chr(39) + 's cards')}; the cards in play are "
            f"{named(ed_p, in_play, '')}: {hint}")


def layout_description(lay) -> list[list]:
    return [[p.name, int(p.size), p.scope] for p in lay.pieces] + [
        ["seat_start", int(lay.seat_start), "meta"], ["seat_size", int(lay.seat_size), "meta"],
    ]


def layout_digest(lay) -> str:
    return hashlib.sha256(json.dumps(layout_description(lay)).encode()).hexdigest()[:16]


def make_metadata(config: dict, num_players: list[int], steps: int, extra: dict | None = None,
                  game: str = GAME) -> dict:
    meta = {"format": FORMAT, **_current_facts(game), "num_players": list(num_players),
            "training_steps": int(steps), "config": config}
    if extra:
        meta.update(extra)
    return meta


# ----------------------------------------------------------------------------- save
def save_checkpoint(model, path: str | Path, metadata: dict) -> Path:
    """Write ``model`` (SB3) to ``path`` (.zip) with the metadata inside, atomically."""
    path = Path(path)
    if path.suffix != ".zip":
        path = path.with_suffix(".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.zip")
    model.save(tmp)
    with zipfile.ZipFile(tmp, "a", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(META_NAME, json.dumps(metadata, indent=1, sort_keys=True))
    os.replace(tmp, path)
    return path


def save_policy_checkpoint(policy, path: str | Path, metadata: dict) -> Path:
    """Write a policy network alone (a ``MaskableActorCriticPolicy``) as a checkpoint that
    ``load_policy`` reads: its weights (``policy.pth``) and the metadata, atomically; no
    SB3 ``data`` member, no optimizer (it plays; it does not resume SB3 training)."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    torch.save(policy.state_dict(), buf)
    tmp = path.with_name(path.name + ".tmp.zip")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(WEIGHTS_NAME, buf.getvalue())
        z.writestr(META_NAME, json.dumps(metadata, indent=1, sort_keys=True))
    os.replace(tmp, path)
    return path


# ----------------------------------------------------------------------------- load
def _open(path: Path) -> zipfile.ZipFile:
    if not path.is_file():
        why = why_not_a_file(path)
        raise CheckpointError(f"checkpoint not found: {path}" if why == "does not exist" else
                              f"{path}: {why}; a checkpoint is a .zip file")
    try:
        z = zipfile.ZipFile(path)
        infos = z.infolist()
        if len(infos) > MAX_MEMBERS:
            raise CheckpointError(f"{path}: {len(infos)} members is not a checkpoint (at most {MAX_MEMBERS})")
        for info in infos:
            limit = MAX_META_BYTES if info.filename == META_NAME else MAX_MEMBER_BYTES
            if info.file_size > limit:
                raise CheckpointError(f"{path}: member {info.filename[:80]!r} unpacks to {info.file_size:,} bytes; "
                                      f"allowed: at most {limit:,}")
        bad = z.testzip()
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise CheckpointError(f"{path}: not a readable checkpoint (corrupt or truncated zip: {e})") from None
    except Exception as e:  # zlib.error and friends from a damaged member
        raise CheckpointError(f"{path}: not a readable checkpoint (damaged data: {e})") from None
    if bad is not None:
        raise CheckpointError(f"{path}: corrupt checkpoint (member {bad[:80]!r} fails its CRC check)")
    return z


def _is_int(v: Any, lo: int = 0, hi: int = 1 << 62) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _check_shape(meta: dict, path: Path) -> None:
    """The metadata fields the loaders use, with the types they need (the values are
    compared with the current code by ``check_compatible``)."""
    def bad(field: str, allowed: str):
        raise CheckpointError(f"{path}: {META_NAME} field {field!r} is {_short(meta.get(field))}; allowed: {allowed}")

    lay = meta.get("layout")
    if not (isinstance(lay, list) and len(lay) <= 256 and all(
            isinstance(r, list) and len(r) == 3 and isinstance(r[0], str) and _is_int(r[1], 0, 1 << 20)
            and isinstance(r[2], str) for r in lay)):
        bad("layout", "a list of [name, size, scope] rows")
    for field in ("obs_size", "num_actions"):
        if not _is_int(meta.get(field), 1, 1 << 20):
            bad(field, "a positive integer below 2**20")
    if not _is_int(meta.get("training_steps", 0)):
        bad("training_steps", "a non-negative integer")
    np_ = meta.get("num_players", [])
    if not (isinstance(np_, list) and len(np_) <= 16 and all(_is_int(x, 2, 10) for x in np_)):
        bad("num_players", "a list of player counts 2..10")
    for field in ("card_digest", "layout_digest"):
        if not isinstance(meta.get(field), str):
            bad(field, "a digest string")
    if not isinstance(meta.get("config"), dict):
        bad("config", "the training config (a mapping)")


def read_metadata(path: str | Path, check: bool = True, cards=None) -> dict:
    """The checkpoint's metadata; with ``check`` it must match the current rules and layout
    and the card database in play (``cards``, a ``CardDB``; None: the packaged cards)."""
    path = Path(path)
    with _open(path) as z:
        if META_NAME not in z.namelist():
            raise CheckpointError(f"{path}: no {META_NAME} inside; not a ripmarket checkpoint")
        try:
            meta = json.loads(z.read(META_NAME))
        except (ValueError, UnicodeDecodeError) as e:  # integers past 4,300 digits are a ValueError too
            raise CheckpointError(f"{path}: {META_NAME} is not valid JSON ({str(e)[:160]})") from None
        except RecursionError:
            raise CheckpointError(f"{path}: {META_NAME} is nested too deeply to be checkpoint metadata") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else meta
        raise CheckpointError(f"{path}: unknown checkpoint format {_short(got)} (expected {FORMAT})")
    _check_shape(meta, path)
    if check:
        check_compatible(meta, str(path), cards=cards)
        _policy_config(meta, path)  # a network the config bounds allow (net_arch: [10**7] is not)
    return meta


#: The packages of the other games whose trained agents the zoo ships (agents read a game
#: through its own package, never through the registry: tests/test_layers.py).
_GAME_PACKAGES = {"rune-market": "ripmarket_env.games.runemarket", "black-market": "ripmarket_env.games.blackmarket"}


def _spec_of(game: str):
    """The spec of a game: one a layer above has loaded (a game registered from outside the
    package, e.g. the tests' toy game), else the zoo's own package of it."""
    from ripmarket_env.core.spec import built

    spec = built(game)
    if spec is None:
        import importlib

        spec = importlib.import_module("ripmarket_env.games.ripmarket" if game == GAME else _GAME_PACKAGES[game]).SPEC
    return spec


def _registered(game: str) -> bool:
    from ripmarket_env.core.spec import built

    return game == GAME or game in _GAME_PACKAGES or built(game) is not None


def check_compatible(meta: dict, where: str = "checkpoint", game: str | None = None, cards=None) -> None:
    """Raise ``CheckpointError`` naming the part of ``meta`` that differs from the current
    code. ``game``: the game the caller wants to play (None: the checkpoint's own, when it
    is a registered game; otherwise R.I.P. Market). ``cards``: R.I.P. Market's card
    database in play (a ``CardDB``; None: the packaged cards)."""
    got = checkpoint_game(meta)
    if game is None:
        game = got if _registered(got) else GAME
    if got != game:  # (the current facts below are ``game``'s own)
        raise _cannot_play(where, got, game)
    now = _current_facts(game, cards if game == GAME else None)
    if meta.get("card_digest") != now["card_digest"]:
        if game == GAME:
            raise CheckpointError(card_mismatch(where, meta.get("card_digest"), now["card_digest"]))
        raise CheckpointError(
            f"{where}: card database differs: the checkpoint was trained on cards with digest "
            f"{str(meta.get('card_digest'))[:12]}, the current cards have {now['card_digest'][:12]}")
    if meta.get("layout_digest") != now["layout_digest"] or meta.get("obs_size") != now["obs_size"]:
        old = {r[0]: tuple(r[1:]) for r in meta.get("layout", [])}
        new = {r[0]: tuple(r[1:]) for r in now["layout"]}
        diffs = [f"{k}: {old.get(k)} -> {new.get(k)}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        if not diffs and [r[0] for r in meta.get("layout", [])] != [r[0] for r in now["layout"]]:
            diffs = ["piece order changed"]
        raise CheckpointError(
            f"{where}: observation layout differs (checkpoint obs_size {meta.get('obs_size')}, "
            f"layout {meta.get('layout_digest')}; current obs_size {now['obs_size']}, layout "
            f"{now['layout_digest']}); pieces that differ (name: (size, scope) checkpoint -> current): "
            + ("; ".join(diffs) or "unknown"))
    if meta.get("num_actions") != now["num_actions"]:
        raise CheckpointError(f"{where}: action count differs: checkpoint {meta.get('num_actions')}, "
                              f"current {now['num_actions']}")


def _read_member(z: zipfile.ZipFile, name: str, path: Path, required: bool = True) -> bytes | None:
    if name not in z.namelist():
        if not required:
            return None
        raise CheckpointError(f"{path}: no {name} inside; not an SB3 checkpoint")
    return z.read(name)  # sizes were checked by _open


#: The lines of torch's refusal that are advice (among them: load the file unrestricted), not facts.
_TORCH_ADVICE = ("Weights only load failed", "Please file an issue", "Check the documentation")


def _torch_load(raw: bytes, what: str, path: Path):
    """``torch.load(weights_only=True)``: tensors and plain containers only, never code.
    Anything else (a pickled object or call, or no pickle at all) is refused in one line
    naming what torch's restricted unpickler met, without torch's warnings or its advice to
    load the file unrestricted."""
    import pickle
    import warnings

    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's note on the pickle protocol: noise here
            return torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        lines = (x.strip().removeprefix("WeightsUnpickler error:").strip() for x in str(e).splitlines())
        found = next((x for x in lines if x and not x.startswith(_TORCH_ADVICE)), "").split(". ")[0]
        raise CheckpointError(f"{path}: {what} do not load: not tensors alone "
                              f"({_short(found or type(e).__name__, 160)}); refused, as weights are "
                              "read as tensors only, never run as code") from None
    except Exception as e:
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        raise CheckpointError(f"{path}: {what} do not load ({msg})") from None


def _policy_config(meta: dict, path: Path):
    """The checkpoint's policy section, validated like a training config's."""
    from agents.policy_config import check_policy

    pol = meta["config"].get("policy")
    if not isinstance(pol, dict):
        raise CheckpointError(f"{path}: metadata has no usable policy config (config.policy is {_short(pol)})")
    try:
        return check_policy(pol)
    except ValueError as e:
        raise CheckpointError(f"{path}: {META_NAME} config: {e}") from None


def load_policy(path: str | Path, cards=None):
    """``(policy, metadata)``: the trained policy network (eval mode, CPU), checked against
    the current rules and layout and the card database in play (``cards``, a ``CardDB``;
    None: the packaged cards). Needs torch and sb3-contrib. Never unpickles."""
    from agents.networks import policy_kwargs

    path = Path(path)
    meta = read_metadata(path, check=True, cards=cards)
    pcfg = _policy_config(meta, path)
    return policy_from_zip(path, meta["obs_size"], meta["num_actions"], policy_kwargs(pcfg)), meta


def policy_from_zip(path: Path, obs_size: int, num_actions: int, kwargs: dict):
    """The ``MaskableActorCriticPolicy`` built with ``kwargs`` for these sizes, holding the
    zip's ``policy.pth`` (read with ``torch.load(weights_only=True)``), in eval mode."""
    import numpy as np
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    with _open(path) as z:
        raw = _read_member(z, WEIGHTS_NAME, path)
    state = _torch_load(raw, "policy weights", path)
    policy = MaskableActorCriticPolicy(spaces.Box(-np.inf, np.inf, (obs_size,), np.float32),
                                       spaces.Discrete(num_actions), lambda _: 0.0, **kwargs)
    try:
        policy.load_state_dict(state)
    except Exception as e:
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        raise CheckpointError(f"{path}: policy weights do not load ({msg})") from None
    policy.set_training_mode(False)
    return policy


def export_policy(src: str | Path, dst: str | Path) -> Path:
    """Copy a checkpoint without the optimizer state (about a third of the size): enough to
    play (``load_policy``, ``agents.policy.load_agent``), not to resume training."""
    src, dst = Path(src), Path(dst)
    _, meta = load_policy(src)  # the weights must load (safely) before they are copied on
    meta["optimizer_stripped"] = True
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp.zip")
    with _open(src) as zin, zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if item.filename == "policy.optimizer.pth":
                continue
            data = zin.read(item.filename)
            if item.filename == META_NAME:
                data = json.dumps(meta, indent=1, sort_keys=True).encode()
            zout.writestr(item.filename, data)
    os.replace(tmp, dst)
    return dst
