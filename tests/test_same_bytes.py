"""Same arguments and seed, same bytes, on any machine -- shown without a second
machine.  ``worksheet build`` of one problem of every kind (hand and calculator)
runs in fresh processes: once as it is, and once with tests/last_bit/ first on
PYTHONPATH, whose sitecustomize makes exp, tanh, sin, cos (math's and numpy's)
answer one bit up, as another CPU, libm or numpy build may; also under other
PYTHONHASHSEED values (no output may depend on the order of a set or dict of
strings).  Every file must be byte-identical: no decimal that is written may
come from a float computed along the way (docs/reference.md, "How decimals are made").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import worksheet
from worksheet import kinds

NUDGE = Path(__file__).parent / "last_bit"
SOURCE = Path(worksheet.__file__).resolve().parents[1]
FORMATS = "md,tex,json,html,moodle"
SEED = "7"


def _build(out: Path, numbers: str, *, nudged: bool, hash_seed: str, log: Path | None = None) -> dict[str, bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHASHSEED", "WS_NUDGE_LOG")}
    env["PYTHONHASHSEED"] = hash_seed
    env["PYTHONPATH"] = str(SOURCE)  # this worksheet, installed or not
    if nudged:
        env["PYTHONPATH"] = os.pathsep.join([str(NUDGE), str(SOURCE)])
        env["WS_NUDGE_LOG"] = str(log)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "worksheet.cli",
            "build",
            *kinds.names(),
            "--seed",
            SEED,
            "--numbers",
            numbers,
            "--format",
            FORMATS,
            "--out",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_a_last_bit_difference_in_exp_tanh_sin_cos_changes_no_byte(tmp_path, numbers):
    log = tmp_path / "nudged-calls"
    plain = _build(tmp_path / "plain", numbers, nudged=False, hash_seed="0")
    assert len(plain) == 8  # md, tex, html (sheet and key), json, moodle
    other = _build(tmp_path / "other", numbers, nudged=True, hash_seed="4242", log=log)
    calls = sum(int(x) for x in log.read_text().split()) if log.exists() else 0
    assert calls > 100, "the nudge was not active: the test learned nothing"
    assert sorted(other) == sorted(plain)
    differ = [name for name in plain if plain[name] != other[name]]
    assert not differ, f"{differ} change when exp/tanh/sin/cos answer one bit up ({calls} calls nudged)"


def test_the_hash_seed_changes_no_byte(tmp_path):
    a = _build(tmp_path / "a", "hand", nudged=False, hash_seed="1")
    b = _build(tmp_path / "b", "hand", nudged=False, hash_seed="987654")
    assert a == b


def test_the_nudge_is_what_it_says():
    """The sitecustomize moves math's and numpy's results one double up (and
    leaves exact results alone), in a fresh process."""
    code = (
        "import math, numpy as np; "
        "print(math.exp(1) == math.nextafter(2.718281828459045, 3), math.exp(0) == 1.0, "
        "bool(np.tanh(np.array([0.5]))[0] == math.nextafter(0.46211715726000974, 1)))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(NUDGE), str(SOURCE)])}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["True", "True", "True"], r.stderr
