"""What a check report prints as expected, carried forward from a student's own
answers, comes from the high-precision recomputation (worksheet/check/recompute.py
``precise_recomputer``): the same digits on every machine, even where numpy's
exp answers one bit up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import worksheet
from check_util import make_key, table, write_toml
from worksheet.check import check_answers
from worksheet.check.recompute import precise_recomputer
from worksheet.check.key import read_key

NUDGE = Path(__file__).parent / "last_bit"
SOURCE = Path(worksheet.__file__).resolve().parents[1]


def _answers(tmp_path):
    """attention: a slip in the scores, the scaled scores carried forward, weights off by 0.01."""
    key, doc = make_key(tmp_path, ["attention"], seed=3, options={"numbers": "calculator"})
    p = doc.problems[0]
    steps = {s.name: s.value.copy() for s in p.steps}
    steps["scores"][0, 0] += 1
    own = {"scores": steps["scores"]}
    run = precise_recomputer(p.kind, p.params, {k: q.value for k, q in p.inputs.items()})
    steps["scaled"] = np.round(run(own)["scaled"], 4)
    steps["weights"] = np.round(run({**own, "scaled": steps["scaled"]})["weights"], 4)
    steps["weights"][0, 1] += 0.01
    return key, write_toml(tmp_path / "a.toml", table(steps)), p, run


def test_expected_values_carried_forward_are_the_high_precision_ones(tmp_path, monkeypatch):
    key, answers, p, run = _answers(tmp_path)
    exp = np.exp
    monkeypatch.setattr(np, "exp", lambda x: np.nextafter(exp(x), np.inf))  # another machine's numpy
    report = json.loads(check_answers(key, answers).to_json())
    steps = {s["name"]: s for s in report["problems"][0]["steps"]}
    weights = steps["weights"]
    assert weights["status"] == "incorrect" and weights.get("against") == "carried-forward", weights
    kp = read_key(key).problems()[0]
    high = precise_recomputer(kp.kind, kp.params, kp.inputs)
    answered = {s: np.asarray(v, dtype=np.float64) for s, v in _read_toml(answers).items()}
    want = high({"scores": answered["scores"], "scaled": answered["scaled"]})["weights"]
    cells = weights["wrong_cells"]
    assert cells
    for c in cells:
        assert c["expected_value"] == float(want[c["row"] - 1, c["col"] - 1])


def _read_toml(path: Path) -> dict:
    import tomllib

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {k: [[float(x) for x in row] for row in v] for k, v in data.items()}


def test_a_report_is_the_same_when_exp_answers_one_bit_up(tmp_path):
    key, answers, _, _ = _answers(tmp_path)

    def run(nudged: bool) -> str:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WS_NUDGE_LOG")}
        env["PYTHONPATH"] = os.pathsep.join(([str(NUDGE)] if nudged else []) + [str(SOURCE)])
        r = subprocess.run(
            [sys.executable, "-m", "worksheet.cli", "check", str(key), str(answers), "--format", "json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode in (0, 1), r.stderr
        return r.stdout

    plain = run(False)
    assert "from your earlier answers" in plain
    assert run(True) == plain
