"""docs/SCALE_OUT.md's cluster recipe on one machine: a Ray head started with ``ray start
--head`` on the loopback address, then ``ripmarket train`` (backend rllib, an env runner on
the cluster), ``ripmarket tournament`` and ``ripmarket evaluate`` (the trained checkpoint)
with ``--ray auto``, each a separate process that joins the cluster as a user's would.

The head runs in its own process group (``ray start --block``) with its own temp folder and
port; the fixture always stops that group (SIGTERM, then SIGKILL), so every process the head
started ends and no other Ray instance on the machine is touched (``ray stop --force`` on a
real cluster node, where the node is yours alone; see docs/SCALE_OUT.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ripmarket_env.games import ids

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
START_TIMEOUT = 120.0
RUN_TIMEOUT = 300.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the head's children leave after it
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.5)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """``ray start --head`` on 127.0.0.1 (2 CPUs); yields the env of a shell that joined it
    (``RAY_ADDRESS``, so that ``--ray auto`` finds this head and no other) and the head's
    temp folder."""
    port = _free_port()
    temp = Path("/tmp") / f"rh{os.getpid()}"  # short: Ray's socket paths must stay under 108 bytes
    log = tmp_path_factory.mktemp("ray-head") / "head.log"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [str(BIN / "ray"), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
             "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        address = f"127.0.0.1:{port}"
        env = {**env, "RAY_ADDRESS": address, "PYTHONPATH": str(ROOT)}
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"ray start --head exited ({proc.returncode}): {log.read_text()[-2000:]}")
            r = subprocess.run([str(BIN / "ray"), "status", f"--address={address}"], env=env,
                               capture_output=True, text=True, timeout=60)
            if r.returncode == 0 and "CPU" in r.stdout:
                break
            if time.monotonic() > deadline:
                pytest.fail(f"the Ray head did not come up in {START_TIMEOUT:.0f} s: {log.read_text()[-2000:]}")
            time.sleep(2)
        yield env, temp
    finally:
        _stop_group(proc)
        shutil.rmtree(temp, ignore_errors=True)


def _run(env, *args) -> subprocess.CompletedProcess:
    r = subprocess.run([str(BIN / "ripmarket"), *args], env={**env, "COLUMNS": "400"}, cwd=ROOT, capture_output=True, text=True,
                       timeout=RUN_TIMEOUT)
    assert r.returncode == 0, f"ripmarket {' '.join(args)}: {r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def _env_runner_logs(temp: Path) -> set[Path]:
    """The head's worker logs that name an env runner actor (one per actor process)."""
    return {f for f in (temp / "session_latest" / "logs").glob("worker-*")
            if "EnvRunner" in f.read_text(errors="replace")}


@pytest.mark.parametrize("game", ids())
def test_cluster_recipe_train_tournament_evaluate(ray_head, tmp_path, game):
    """Every registered game: its smoke config trained with backend rllib and an env runner on the head,
    a tournament of its heuristics (the random agent for a game without any) and an
    evaluation of the trained checkpoint, each with ``--ray auto``."""
    import agents

    from ripmarket_env.games import get

    env, temp = ray_head
    smoke = ROOT / "configs" / game / "smoke.yaml"
    spec = get(game)
    # The game's smoke config; a game without one (the tests' toy game) the same run with the defaults.
    d = yaml.safe_load(smoke.read_text(encoding="utf-8")) if smoke.exists() else {
        "game": game, "num_players": min(max(4, spec.min_players), spec.max_players), "progress": False,
        "league": {"mix": {"self": 0.4, "zoo": 0.4, "random": 0.2}}}
    d.update(backend="rllib", total_timesteps=128, n_envs=8, n_steps=16, batch_size=64, checkpoint_every=0,
             final_eval_games=0, eval_every=0, policy={"arch": "mlp", "net_arch": [16]}, rllib={"num_env_runners": 1})
    d.pop("pretrain", None)
    d["league"].update(snapshot_every=64, pool_size=2)
    config = tmp_path / "cluster.yaml"
    config.write_text(yaml.safe_dump(d), encoding="utf-8")
    runners_before = _env_runner_logs(temp)
    r = _run(env, "train", str(config), "--out", str(tmp_path), "--ray", "auto")
    assert "(rllib):" in r.stdout + r.stderr
    (ckpt,) = (tmp_path / "checkpoints").glob("*/latest.zip")
    # The run used the head: its env runner was a new actor there (the head's worker logs name it).
    assert _env_runner_logs(temp) - runners_before
    players = str(d.get("num_players", 4))
    lineup = ["random", *agents.game_agents(game).heuristics[:1]]
    r = _run(env, "tournament", "--game", game, "--agents", ",".join(lineup), "--players", players,
             "--games", "24", "--chunk-sets", "2", "--quiet", "--out", str(tmp_path / "t"), "--ray", "auto")
    results = json.loads((tmp_path / "t" / "results.json").read_text())
    assert results["settings"]["backend"] == "ray" and results["settings"]["chunks"] >= 2
    r = _run(env, "evaluate", str(ckpt), "--game", game, "--players", players, "--games", "8", "--zoo", "random",
             "--json", "--ray", "auto")
    res = json.loads(r.stdout[r.stdout.index("{"):])
    assert res["games"] == 8
