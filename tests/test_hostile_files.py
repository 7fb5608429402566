"""Hostile and careless files against every loader and the CLI (issue 19).

A corpus of card files, training configs, game records, checkpoints and distilled-zoo
files, each broken one way: wrong types, deep nesting, huge integers, absurd sizes,
binary or non-UTF-8 bytes, truncation, zip members that inflate past their limit, and
pickles that would run a command. Every loader and every CLI command that reads such a
file must refuse it with one line naming the file and what is wrong: no traceback, a
non-zero exit, and no code run (the payloads would create a marker file; it must never
appear). Two controls prove the payloads are live: plain ``pickle.loads`` and SB3's own
``MaskablePPO.load`` do run them.
"""

from __future__ import annotations

import base64
import copy
import io
import json
import os
import pickle
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import sb3_contrib  # noqa: E402,F401

import torch  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from ripmarket_env.games.ripmarket.cards.loader import CardDataError, _default_path, load_cards  # noqa: E402
from ripmarket_env.app.cli import app  # noqa: E402
from ripmarket_env.engine import ConfigError as RulesError  # noqa: E402
from ripmarket_env.engine import Engine, RulesConfig  # noqa: E402
from ripmarket_env import replay  # noqa: E402
from ripmarket_env.envs.record import RecordError, Recorder  # noqa: E402
from agents.checkpoint import META_NAME, CheckpointError, export_policy, load_policy, read_metadata  # noqa: E402
from train.selfplay import load_model  # noqa: E402
from train.config import ConfigError, config_from_dict, load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class _Payload:
    """Unpickling this runs ``touch MARKER`` (what a malicious checkpoint would do)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@dataclass
class Case:
    kind: str  # cards | config | record | checkpoint | distilled | recording
    name: str
    path: Path
    words: tuple[str, ...]  # what the message must say (case-insensitive), besides the file's name
    #: The loaders that read the broken part (None: all of them). The others may accept
    #: the file (they never read that part), but must not run code either.
    readers: frozenset[str] | None = None


# ----------------------------------------------------------------------------- the corpus
def _deep(n: int = 100_000) -> str:
    return "[" * n + "]" * n


def _cards(tmp: Path) -> list[Case]:
    base = json.loads(_default_path().read_text(encoding="utf-8"))
    out = []

    def case(name, data_or_text, *words, raw=False):
        p = tmp / f"cards_{name}.json"
        if isinstance(data_or_text, bytes):
            p.write_bytes(data_or_text)
        else:
            p.write_text(data_or_text if raw else json.dumps(data_or_text), encoding="utf-8")
        out.append(Case("cards", name, p, words))

    def edit(fn):
        d = copy.deepcopy(base)
        fn(d)
        return d

    case("op_list", edit(lambda d: d["living"][0]["effect"][0].update(op=["score_self"])), "effect[0].op", "known ops")
    case("op_dict", edit(lambda d: d["living"][0]["effect"][0].update(op={"a": 1})), "effect[0].op", "known ops")
    case("family_list", edit(lambda d: d["living"][0].update(family=["score"])), "family", "allowed")
    case("family_dict", edit(lambda d: d["shadow"][0].update(family={"curse": 1})), "family", "allowed")
    case("keywords_dict", edit(lambda d: d["living"][0].update(keywords=[{"x": 1}])), "keywords", "drawn from")
    case("deep", _deep(), "nested too deeply", raw=True)
    case("int_5000_digits", '{"version": 1, "living": [{"id": 0, "copies": ' + "9" * 5000 + "}], \"shadow\": []}",
         "4300 digits", raw=True)
    case("duplicate_key", json.dumps(base).replace('"name": ', '"name": "Doubled", "name": ', 1),
         "living[0].name", "more than once", raw=True)
    case("value_huge", edit(lambda d: d["living"][0].update(value=10**300)), "value", "digits")
    def one_card(d):
        d["living"] = d["living"][:1]
        d["living"][0]["copies"] = 1
        d.pop("errata", None)  # its errata name cards this deck no longer has

    case("no_shadow_deck", edit(lambda d: d.pop("shadow")), "'shadow' is missing", "'living' and 'shadow'")
    case("one_card_deck", edit(one_card), "living deck")  # as a custom deck, every game would end at its reset
    case("top_list", [1, 2, 3], "JSON object")
    case("binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "cannot read")
    case("latin1", json.dumps(base).replace("Grave Digger", "Grav\u00e9 Digger").encode("latin-1"), "cannot read")
    case("empty", "", "the file is empty", raw=True)
    return out


def _configs(tmp: Path) -> list[Case]:
    out = []

    def case(name, text, *words):
        p = tmp / f"config_{name}.yaml"
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        out.append(Case("config", name, p, words))

    case("list", "- 1\n- 2\n", "mapping", "list")
    case("string", "just some words\n", "mapping", "str")
    case("integer", "42\n", "mapping", "int")
    case("non_utf8", b"exp_name: caf\xe9\nseed: 1\n", "not UTF-8")
    case("empty", "", "empty", "{}")
    case("comments_only", "# nothing here\n\n", "empty")
    case("duplicate_key", "seed: 1\nn_envs: 32\nseed: 2\n", "duplicate key", "seed")
    case("n_envs_1e12", "n_envs: 1000000000000\n", "n_envs", "<= 65536")
    case("net_arch_1e9", "policy:\n  net_arch: [1000000000]\n", "policy.net_arch", "8192")
    case("rollout_too_large", "n_envs: 65536\nn_steps: 4096\nbatch_size: 4096\n", "rollout", "262,144")
    case("mix_inf", "league:\n  mix: {self: .inf}\n", "league.mix.self", "finite")
    case("mix_nan", "league:\n  mix: {self: .nan, zoo: 1}\n", "league.mix.self", "finite")
    case("int_5000_digits", "seed: " + "9" * 5000 + "\n", "4300 digits")
    case("deep", _deep(50_000), "")  # YAML parser error or nesting: either way one line
    case("python_tag", f"seed: !!python/object/apply:os.system ['touch {tmp / 'MARKER'}']\n", "not valid YAML")
    case("huge_file", "# " + "x" * (1 << 20) + "\nseed: 1\n", "too large")
    # every game's configs go through the one loader: the same hostile keys, and the game's own
    for game in ("black-market", "rune-market"):
        g = f"game: {game}\n"
        tag = game.split("-")[0]
        case(f"{tag}_duplicate_key", g + "seed: 1\nn_envs: 32\nseed: 2\n", "duplicate key", "seed")
        case(f"{tag}_n_envs_1e12", g + "n_envs: 1000000000000\n", "n_envs", "<= 65536")
        case(f"{tag}_net_arch_1e9", g + "policy:\n  net_arch: [1000000000]\n", "policy.net_arch", "8192")
        case(f"{tag}_mix_inf", g + "league:\n  mix: {self: .inf}\n", "league.mix.self", "finite")
        case(f"{tag}_int_5000_digits", g + "seed: " + "9" * 5000 + "\n", "4300 digits")
        case(f"{tag}_python_tag", g + f"seed: !!python/object/apply:os.system ['touch {tmp / 'MARKER'}']\n",
             "not valid YAML")
        case(f"{tag}_rules_deep", g + "rules: " + _deep(50_000) + "\n", "")
        case(f"{tag}_rules_list", g + "rules: [1, 2]\n", "rules", "mapping")
        case(f"{tag}_rules_unknown", g + "rules: {colour: red}\n", "rules.colour", "allowed")
        case(f"{tag}_rules_type", g + "rules: {max_turns: [1]}\n", "rules", "max_turns")
        case(f"{tag}_players", g + "num_players: 7\n", "num_players", "<= 6")
        case(f"{tag}_zoo_other_game", g + "league:\n  zoo: [greedy]\n", "league.zoo", "random")
    # every game's configs, the keys every config reads: unknown keys, wrong types, a section
    # that is not a mapping, NaN, and YAML anchors that expand a few lines into billions of values
    bomb = "".join(f"  - &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    bomb = "  - &a [x, x, x, x, x, x, x, x, x]\n" + bomb
    for game in ("ripmarket", "black-market", "rune-market"):
        g = f"game: {game}\n"
        tag = game.split("-")[0][:3]
        case(f"{tag}_anchor_bomb", g + "exp_name:\n" + bomb, "anchors", "100,000 values")
        case(f"{tag}_anchor_bomb_rules", g + "rules:\n  max_turns:\n" + bomb.replace("  - ", "    - "),
             "anchors", "100,000 values")
        case(f"{tag}_alias_cycle", g + "exp_name: &x [*x]\n", "line 2", "contains itself")  # never ended
        case(f"{tag}_alias_cycle_deep", g + "rules: &y {max_turns: [{a: *y}]}\n", "line 2", "contains itself")
        case(f"{tag}_unknown_key", g + "surprise: 1\n", "surprise", "allowed keys")
        case(f"{tag}_unknown_nested_key", g + "league:\n  surprise: 1\n", "league.surprise", "allowed keys")
        case(f"{tag}_wrong_type", g + "n_envs: '32'\n", "n_envs", "integer")
        case(f"{tag}_league_list", g + "league: [1, 2]\n", "league:", "mapping")
        case(f"{tag}_lr_nan", g + "learning_rate: .nan\n", "learning_rate", "a number in")
        case(f"{tag}_key_list", g + "? [a, b]\n: 1\n", "line 2", "plain value")
        case(f"{tag}_exp_name_nul", g + 'exp_name: "a\\x00b"\n', "exp_name", "printable")
        case(f"{tag}_exp_name_long", g + "exp_name: " + "a" * 100_000 + "\n", "exp_name", "at most 100")
    case("game_unknown", "game: chess\n", "'game'", "black-market")
    case("game_list", "game: [ripmarket]\n", "'game'", "rune-market")
    case("game_deep", "game: " + _deep(50_000) + "\n", "")
    os.mkfifo(tmp / "config_named_pipe.yaml")
    out.append(Case("config", "named_pipe", tmp / "config_named_pipe.yaml", ("not a file",)))
    (tmp / "config_folder.yaml").mkdir()
    out.append(Case("config", "folder", tmp / "config_folder.yaml", ("not a file",)))
    return out


def _record_text() -> str:
    rec = Recorder.new(RulesConfig(num_players=3), seed=9)
    while not rec.done:
        rec.step(rec.engine.legal_actions(0)[0])
    return rec.dumps()


def _records(tmp: Path) -> list[Case]:
    text = _record_text()
    lines = text.splitlines(keepends=True)
    head = json.loads(lines[0])
    out = []

    def case(name, content, *words):
        p = tmp / f"record_{name}.jsonl"
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        out.append(Case("record", name, p, words))

    def header(**changes):
        h = dict(head)
        h.update(changes)
        return json.dumps(h) + "\n" + "".join(lines[1:])

    case("binary", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, "binary")
    case("latin1", text.replace("player_0", "jou\u00e9ur").encode("latin-1"), "not UTF-8")
    case("deep", _deep() + "\n", "nested too deeply")
    case("int_5000_digits", '{"format": "ripmarket-record", "version": 3, "seed": ' + "7" * 5000 + "}\n",
         "line 1", "4300 digits")
    case("duplicate_key", '{"seed": 1, ' + text[1:], "line 1", "'seed'", "more than once")
    case("seed_huge", header(seed=10**300), "seed", "non-negative integer")
    case("rules_list", header(rules=[1, 2]), "bad rules", "mapping")
    case("version_true", header(version=True), "unsupported record version")
    case("header_only", lines[0], "truncated", "only its header")
    case("cut_at_line", "".join(lines[: len(lines) // 2]), "truncated")
    case("cut_mid_line", text[: len(text) - 5], "truncated", "cut off")
    case("empty", "", "empty")
    case("not_a_record", '{"hello": "world"}\n', "no 'format' field", "not a game record")
    case("format_other", header(format="other"), "unknown format", "ripmarket-record")
    case("format_huge", header(format="x" * 5_000_000), "unknown format", "ripmarket-record")
    case("game_huge", header(game="x" * 5_000_000), "unknown game", "known games")
    case("controllers_huge", header(controllers="x" * 100_000), "controllers", "characters)")  # cut, not echoed whole
    big = json.loads(lines[1])
    big["desc"] = "x" * 5_000_000
    case("huge_field", lines[0] + json.dumps(big) + "\n" + "".join(lines[2:]), "step 0 differs")
    os.mkfifo(tmp / "record_named_pipe.jsonl")  # opening it would wait for a writer
    out.append(Case("record", "named_pipe", tmp / "record_named_pipe.jsonl", ("named pipe",)))
    return out


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _checkpoints(tmp: Path, good: Path, marker: Path) -> list[Case]:
    with zipfile.ZipFile(good) as z:
        members = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(members[META_NAME])
    evil = pickle.dumps(_Payload(marker))
    buf = io.BytesIO()
    torch.save({"weight": _Payload(marker)}, buf)
    evil_torch = buf.getvalue()
    out = []

    def case(name, changes, *words, raw: bytes | None = None, readers=None):
        p = tmp / f"ckpt_{name}.zip"
        if raw is not None:
            p.write_bytes(raw)
        else:
            m = dict(members)
            m.update(changes)
            _zip(p, {k: v for k, v in m.items() if v is not None})
        out.append(Case("checkpoint", name, p, words, readers))

    # read_metadata reads the metadata alone; export_policy drops the optimizer state
    weights = frozenset({"load_policy", "load_agent", "load_model", "load_init", "init_policy", "export_policy"})

    def with_meta(**changes):
        m = dict(meta)
        m.update(changes)
        return {META_NAME: json.dumps(m).encode()}

    case("weights_pickle", {"policy.pth": evil}, "policy weights do not load", readers=weights)
    case("weights_torch_pickle", {"policy.pth": evil_torch}, "policy weights do not load", readers=weights)
    case("optimizer_pickle", {"policy.optimizer.pth": evil_torch}, "optimizer state do not load",
         readers=frozenset({"load_model"}))
    case("layout_5", with_meta(layout=5), "layout", "allowed")
    case("net_arch_1e7", with_meta(config={**meta["config"], "policy": {**meta["config"]["policy"], "net_arch": [10**7]}}),
         "policy.net_arch", "8192")
    case("obs_size_str", with_meta(obs_size="big"), "obs_size", "positive integer")
    case("format_other", with_meta(format="something/9"), "unknown checkpoint format")
    case("game_huge", with_meta(game="x" * 900_000), "a checkpoint of game")  # under the 1 MB cap
    case("meta_deep", {META_NAME: _deep().encode()}, "nested too deeply")
    case("meta_int_5000_digits", {META_NAME: b'{"format": ' + b"9" * 5000 + b"}"}, "not valid JSON")
    case("no_meta", {META_NAME: None}, "no ripmarket.json")
    case("not_a_zip", {}, "not a readable checkpoint", raw=b"PK\x03\x04" + os.urandom(4000))
    case("truncated_zip", {}, "not a readable checkpoint", raw=good.read_bytes()[: good.stat().st_size // 2])
    case("empty_file", {}, "not a readable checkpoint", raw=b"")
    # a small zip whose metadata member inflates to 64 MB (streamed: never held in memory here)
    p = tmp / "ckpt_meta_bomb.zip"
    with zipfile.ZipFile(p, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            if k != META_NAME:
                z.writestr(k, v)
        with z.open(META_NAME, "w", force_zip64=True) as f:
            chunk = b" " * (1 << 20)
            for _ in range(64):
                f.write(chunk)
    assert p.stat().st_size < (1 << 20)
    out.append(Case("checkpoint", "meta_bomb", p, ("ripmarket.json", "unpacks to", "at most")))
    os.mkfifo(tmp / "ckpt_named_pipe.zip")
    out.append(Case("checkpoint", "named_pipe", tmp / "ckpt_named_pipe.zip", ("not a file",)))
    return out


def _distilled(tmp: Path, marker: Path) -> list[Case]:
    from agents.checkpoint import _current_facts
    from train.distill import FORMAT

    meta = {"format": FORMAT, "styles": ["greedy"], "hidden": [8], **_current_facts()}
    out = []

    def case(name, blob, *words, raw: bytes | None = None):
        p = tmp / f"zoo_{name}.pt"
        if raw is not None:
            p.write_bytes(raw)
        else:
            torch.save(blob, p)
        out.append(Case("distilled", name, p, words))

    case("state_dict_pickle", {"meta": meta, "state_dict": _Payload(marker)}, "not a readable distilled zoo file")
    case("raw_pickle", None, "not a readable distilled zoo file", raw=pickle.dumps(_Payload(marker)))
    case("hidden_1e7", {"meta": {**meta, "hidden": [10**7]}, "state_dict": {}}, "hidden", "8192")
    case("styles_dict", {"meta": {**meta, "styles": {"a": 1}}, "state_dict": {}}, "styles", "allowed")
    case("garbage", None, "not a readable distilled zoo file", raw=os.urandom(3000))
    return out


def _recordings(tmp: Path, marker: Path) -> list[Case]:
    import numpy as np

    p = tmp / "rec_object_array.npz"
    np.savez(p, obs=np.array([_Payload(marker)], dtype=object))
    q = tmp / "rec_garbage.npz"
    q.write_bytes(os.urandom(2000))
    return [Case("recording", "object_array", p, ("not a readable recording",)),
            Case("recording", "garbage", q, ("not a readable recording",))]


@pytest.fixture(scope="module")
def good_checkpoint(tmp_path_factory) -> Path:
    """A real (small) checkpoint with its optimizer state, from a short smoke run."""
    from train.selfplay import train

    cfg = load_config(ROOT / "configs" / "ripmarket" / "smoke.yaml").to_dict()
    cfg.update(total_timesteps=1024, eval_every=0, checkpoint_every=0, final_eval_games=0)
    cfg["pretrain"]["games"] = 0
    out = tmp_path_factory.mktemp("good")
    summary = train(config_from_dict(cfg), out)
    return Path(summary["checkpoint"])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, good_checkpoint):
    tmp = tmp_path_factory.mktemp("hostile")
    marker = tmp / "MARKER"
    cases = (_cards(tmp) + _configs(tmp) + _records(tmp) + _checkpoints(tmp, good_checkpoint, marker)
             + _distilled(tmp, marker) + _recordings(tmp, marker))
    return tmp, marker, cases


# ----------------------------------------------------------------------------- loaders
def _loaders(kind: str, path: Path, good: Path):
    """(label, call) for every loader of a file of this kind."""
    if kind == "cards":
        def cards_engine():
            db = load_cards(path, custom_deck=True)
            Engine(RulesConfig(num_players=4), cards=db)
        return [("load_cards", lambda: load_cards(path)), ("load_cards(custom_deck)+Engine", cards_engine)]
    if kind == "config":
        return [("load_config", lambda: load_config(path))]
    if kind == "record":
        return [("replay", lambda: replay(path))]
    if kind == "checkpoint":
        from agents.policy import load_agent
        from train.selfplay import init_policy, load_init

        def init_from():
            policy, _ = load_policy(good)
            init_policy(policy, str(path))

        return [("read_metadata", lambda: read_metadata(path)), ("load_policy", lambda: load_policy(path)),
                ("load_agent", lambda: load_agent(path)), ("load_model", lambda: load_model(path)),
                ("load_init", lambda: load_init(str(path))), ("init_policy", init_from),
                ("export_policy", lambda: export_policy(path, path.with_suffix(".out.zip")))]
    if kind == "distilled":
        from agents.policy import load_distilled
        from train.distill import load

        return [("train.distill.load", lambda: load(path)), ("load_distilled", lambda: load_distilled("greedy", path))]
    if kind == "recording":
        return []  # read by the CLI only (ripmarket distill --recording)
    raise AssertionError(kind)


ERRORS = (CardDataError, ConfigError, RulesError, RecordError, CheckpointError)


def _check_message(case: Case, msg: str) -> list[str]:
    problems = []
    msg = msg.strip()
    if "\n" in msg:
        problems.append(f"more than one line: {msg[:300]!r}")
    if "Traceback" in msg:
        problems.append("a traceback")
    if case.path.name not in msg:
        problems.append(f"does not name the file: {msg[:300]!r}")
    for w in case.words:
        if w and w.lower() not in msg.lower():
            problems.append(f"does not say {w!r}: {msg[:300]!r}")
    if len(msg) > 2000:
        problems.append(f"{len(msg):,} characters long")
    return problems


def test_every_loader_refuses_the_corpus(corpus, good_checkpoint):
    tmp, marker, cases = corpus
    failures, calls = [], 0
    for case in cases:
        for label, call in _loaders(case.kind, case.path, good_checkpoint):
            calls += 1
            try:
                call()
            except ERRORS as exc:
                failures += [f"{case.kind}/{case.name} via {label}: {p}" for p in _check_message(case, str(exc))]
            except Exception as exc:  # any other exception is a traceback for the user
                failures.append(f"{case.kind}/{case.name} via {label}: {type(exc).__name__}: {str(exc)[:300]}")
            else:
                if case.readers is None or label in case.readers:
                    failures.append(f"{case.kind}/{case.name} via {label}: accepted")
    assert not marker.exists(), "a hostile file ran code"
    assert calls > 100
    assert not failures, f"{len(failures)} of {calls} loader calls misbehaved:\n" + "\n".join(failures)


# ----------------------------------------------------------------------------- the CLI
def _commands(case: Case, tmp: Path, good: Path) -> list[list[str]]:
    out_dir = tmp / f"out_{case.kind}_{case.name}"
    smoke = str(ROOT / "configs" / "ripmarket" / "smoke.yaml")
    p = str(case.path)
    if case.kind == "cards":
        return [["cards", "--file", p]]
    if case.kind == "config":
        return [["train", p, "--out", str(out_dir)]]
    if case.kind == "record":
        return [["replay", p], ["replay", p, "--god"]]
    if case.kind == "checkpoint":
        cmds = [["train", smoke, "--out", str(out_dir), "--resume", p]]
        if case.readers is None or "load_agent" in case.readers:  # evaluate plays the policy alone
            cmds.append(["evaluate", p, "--games", "1", "--workers", "1"])
        return cmds
    if case.kind == "recording":
        return [["distill", "--recording", p, "--out", str(out_dir / "zoo.pt"), "--workers", "1"]]
    return []  # distilled zoo files: no command takes one by path (agents/checkpoints/zoo-bc.pt)


def test_every_command_refuses_the_corpus(corpus, good_checkpoint):
    tmp, marker, cases = corpus
    runner = CliRunner()
    failures, runs = [], 0
    for case in cases:
        for args in _commands(case, tmp, good_checkpoint):
            runs += 1
            res = runner.invoke(app, args)
            where = f"{case.kind}/{case.name}: ripmarket {args[0]}"
            if res.exception is not None and not isinstance(res.exception, SystemExit):
                failures.append(f"{where}: raised {type(res.exception).__name__}: {str(res.exception)[:300]}")
                continue
            if res.exit_code == 0 or (case.kind == "config" and res.exit_code != 2):
                failures.append(f"{where}: exit {res.exit_code}")
            err = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
            if len(err) != 1:
                failures.append(f"{where}: expected one 'error:' line, got: {res.output[-500:]!r}")
            else:
                failures += [f"{where}: {p}" for p in _check_message(case, err[0])]
            if "Traceback" in res.output:
                failures.append(f"{where}: traceback in the output")
            out_dir = tmp / f"out_{case.kind}_{case.name}"
            if out_dir.exists() and any(out_dir.rglob("*")):
                failures.append(f"{where}: left files in {out_dir}")
    assert not marker.exists(), "a hostile file ran code"
    assert runs > 60
    assert not failures, f"{len(failures)} of {runs} commands misbehaved:\n" + "\n".join(failures)


def test_the_real_cli_prints_no_traceback(corpus):
    """A few files through the installed entry point (a real process, real stderr)."""
    tmp, marker, cases = corpus
    pick = {("record", "binary"), ("record", "header_only"), ("config", "empty"), ("config", "mix_inf"),
            ("cards", "deep"), ("checkpoint", "weights_torch_pickle")}
    smoke = str(ROOT / "configs" / "ripmarket" / "smoke.yaml")
    for case in cases:
        if (case.kind, case.name) not in pick:
            continue
        args = {"record": ["replay", str(case.path)], "config": ["train", str(case.path), "--out", str(tmp / "real")],
                "cards": ["cards", "--file", str(case.path)],
                "checkpoint": ["train", smoke, "--out", str(tmp / "real"), "--resume", str(case.path)]}[case.kind]
        res = subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", *args], capture_output=True, text=True,
                             timeout=300, cwd=ROOT)
        assert res.returncode != 0, (case.name, res.stdout[-500:])
        assert "Traceback" not in res.stderr and "Traceback" not in res.stdout, (case.name, res.stderr[-2000:])
        assert res.stderr.strip().startswith("error:") and case.path.name in res.stderr, (case.name, res.stderr[-500:])
        # one line: no library warning before it, and no advice to load a file unrestricted
        assert res.stderr.strip().count("\n") == 0 and "weights_only" not in res.stderr, (case.name, res.stderr)
    assert not (tmp / "real").exists(), "a refused run left a run folder"
    assert not marker.exists()


def test_a_device_is_read_no_further_than_the_cap():
    """A record or a data file that is a device or a pipe has no size to check before it is
    read (``/dev/zero`` never ends): the readers stop one byte past their cap and refuse it
    in one line, instead of reading until memory runs out."""
    from ripmarket_env.core.jsonfile import read_json

    with pytest.raises(RecordError, match=r"/dev/zero: more than [\d,]+ bytes is too large for a game record"):
        replay("/dev/zero")
    with pytest.raises(CardDataError, match=r"/dev/zero: more than [\d,]+ bytes is too large for a card file"):
        load_cards("/dev/zero")
    with pytest.raises(ValueError, match=r"data: more than 1,000 bytes is too large for this file"):
        read_json("/dev/zero", "data", ValueError, max_bytes=1000)


# ----------------------------------------------------------------------------- controls
def test_the_payloads_are_live(tmp_path, good_checkpoint):
    """Without the safe loaders the same files do run code: plain unpickling, and SB3's
    own loader on a checkpoint whose ``data`` member carries the payload (the resume path
    docs/TRAINING.md used to give)."""
    from sb3_contrib import MaskablePPO

    m1 = tmp_path / "M1"
    pickle.loads(pickle.dumps(_Payload(m1)))
    assert m1.exists()

    m2 = tmp_path / "M2"
    with zipfile.ZipFile(good_checkpoint) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = json.loads(members["data"])
    data["policy_class"][":serialized:"] = base64.b64encode(pickle.dumps(_Payload(m2))).decode()
    members["data"] = json.dumps(data).encode()
    evil = _zip(tmp_path / "evil_data.zip", members)
    try:
        MaskablePPO.load(evil)
    except Exception:
        pass
    assert m2.exists(), "SB3's loader should have run the payload (the control is broken)"

    # ripmarket's loaders on that very file: they never open `data`, so nothing runs and
    # the checkpoint loads (its weights and metadata are intact)
    m2.unlink()
    model, meta = load_model(evil)
    assert model.num_timesteps == meta["training_steps"] > 0
    load_policy(evil)
    assert not m2.exists()
    res = CliRunner().invoke(app, ["train", str(ROOT / "configs" / "ripmarket" / "smoke.yaml"), "--out", str(tmp_path / "r"),
                                   "--resume", str(evil), "--total-timesteps", "2048"])
    assert res.exit_code == 0, res.output
    assert not m2.exists()
