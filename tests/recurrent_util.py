"""Helpers shared by tests/test_kind_lstm_cell.py and tests/test_kind_gru_cell.py:
PyTorch's LSTMCell and GRUCell written out in numpy exactly as PyTorch
documents them (its weight layout and gate order), the map from our row
convention weights to that layout, the check of a named mistake, and the
bodies of the tests that are the same for both kinds (each kind's file
keeps its own test names and calls them)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from check_util import inputs_of, key_values, make_key, mistakes_of, recompute, statuses, table, write_toml
from common import floats
from kinds_util import build_and_compile
from worksheet.check import check_answers, recomputer


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


# ---------------------------------------------------------------- PyTorch's layout
def lstm_to_torch(m: dict) -> dict:
    """Our W_f.. (d_in x d_h, row convention) as LSTMCell's weight_ih (4 d_h x d_in,
    gate blocks i, f, g, o), weight_hh, bias_ih and bias_hh (zero: b is the sum)."""
    order = "ifgo"
    return {
        "weight_ih": np.hstack([m[f"W_{g}"] for g in order]).T,
        "weight_hh": np.hstack([m[f"W_h{g}"] for g in order]).T,
        "bias_ih": np.hstack([m[f"b_{g}"] for g in order]).ravel(),
        "bias_hh": np.zeros(4 * m["h0"].shape[1]),
    }


def torch_lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh):
    """torch.nn.LSTMCell's documented computation (one step, a batch of rows)."""
    gates = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh
    i, f, g, o = np.split(gates, 4, axis=1)
    i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
    c = f * c + i * g
    return {"i": i, "f": f, "g": g, "o": o, "c": c, "h": o * np.tanh(c)}


def gru_to_torch(m: dict) -> dict:
    """Our weights as GRUCell's (gate blocks r, z, n); b_hn goes in bias_hh's n block,
    which PyTorch keeps inside r * (h W_hn^T + b_hn)."""
    order = "rzn"
    d_h = m["h0"].shape[1]
    return {
        "weight_ih": np.hstack([m[f"W_{g}"] for g in order]).T,
        "weight_hh": np.hstack([m[f"W_h{g}"] for g in order]).T,
        "bias_ih": np.hstack([m[f"b_{g}"] for g in order]).ravel(),
        "bias_hh": np.concatenate([np.zeros(2 * d_h), m["b_hn"].ravel()]),
    }


def torch_gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh):
    """torch.nn.GRUCell's documented computation (one step)."""
    gi = x @ weight_ih.T + bias_ih
    gh = h @ weight_hh.T + bias_hh
    i_r, i_z, i_n = np.split(gi, 3, axis=1)
    h_r, h_z, h_n = np.split(gh, 3, axis=1)
    r, z = sigmoid(i_r + h_r), sigmoid(i_z + h_z)
    n = np.tanh(i_n + r * h_n)
    return {"r": r, "z": z, "n": n, "h": (1 - z) * n + z * h}


def rows(m: dict) -> np.ndarray:
    return m["x"] if "x" in m else m["X"]


def torch_chain(kind: str, m: dict) -> dict:
    """Every step of T time steps by the PyTorch formulas, named as our steps."""
    X, T = rows(m), rows(m).shape[0]
    out, h, c = {}, m["h0"], m.get("c0")
    for t in range(1, T + 1):
        x = X[t - 1 : t]
        if kind == "lstm-cell":
            s = torch_lstm_cell(x, h, c, **lstm_to_torch(m))
            c = s["c"]
        else:
            s = torch_gru_cell(x, h, **gru_to_torch(m))
        h = s["h"]
        out.update({(k if T == 1 else f"{k}_{t}"): v for k, v in s.items()})
    return out


def real_torch_chain(kind: str, m: dict) -> dict:
    """The states of the real torch.nn.LSTMCell / GRUCell (torch must be installed)."""
    import torch

    X, T, d_h = rows(m), rows(m).shape[0], m["h0"].shape[1]
    layout = lstm_to_torch(m) if kind == "lstm-cell" else gru_to_torch(m)
    cell = (torch.nn.LSTMCell if kind == "lstm-cell" else torch.nn.GRUCell)(X.shape[1], d_h).double()
    with torch.no_grad():
        for name, value in layout.items():
            getattr(cell, name).copy_(torch.from_numpy(np.ascontiguousarray(value)))
        h = torch.from_numpy(m["h0"])
        c = torch.from_numpy(m["c0"]) if kind == "lstm-cell" else None
        out = {}
        for t in range(1, T + 1):
            x = torch.from_numpy(np.ascontiguousarray(X[t - 1 : t]))
            if kind == "lstm-cell":
                h, c = cell(x, (h, c))
                out["c" if T == 1 else f"c_{t}"] = c.numpy().copy()
            else:
                h = cell(x, h)
            out["h" if T == 1 else f"h_{t}"] = h.numpy().copy()
    return out


# ---------------------------------------------------------------- named mistakes
def diagnosed(tmp_path, kind: str, options: dict, wrong, code: str, seeds=range(1, 40)):
    """The first generated problem where ``wrong(values) -> (origin, value)`` changes the
    answer; the student answers every step, later ones computed from the wrong value.
    Asserts ``check`` names ``code`` at the origin and carries the later steps forward."""
    for seed in seeds:
        key, doc = make_key(tmp_path, [kind], seed=seed, options=options)
        p = doc.problems[0]
        v = {**inputs_of(p), **key_values(p)}
        origin, bad = wrong(v)
        if np.abs(bad - v[origin]).max() > 0.01:
            break
    else:
        raise AssertionError(f"no seed where the wrong rule changes {kind}")
    run = recomputer(p.kind, p.params, inputs_of(p))
    values = run({origin: bad})
    names = [s.name for s in p.steps]
    report = check_answers(key, write_toml(tmp_path / "answers.toml", table(values, steps=names)))
    st = statuses(report)
    assert mistakes_of(report) == {origin: code}, report.text()
    k = names.index(origin)
    assert all(st[n] == "correct" for n in names[:k]), report.text()
    assert all(st[n] in ("carried-forward", "correct") for n in names[k + 1 :]), report.text()
    return report


# ---------------------------------------------------------------- every format
def every_format_builds(runner, cli, kind: str, out) -> None:
    """One sheet with the kind at 1, 2 and 3 time steps builds in md, tex, json, pdf
    and html (pdf needs LaTeX: skipped without it unless WORKSHEET_REQUIRE_LATEX=1)."""
    import os

    import pytest

    from worksheet.render import pdf as pdfmod

    formats = "md,tex,json,html"
    if pdfmod.engine() is not None:
        formats += ",pdf"
    elif os.environ.get("WORKSHEET_REQUIRE_LATEX") == "1":
        pytest.fail("LaTeX is missing but WORKSHEET_REQUIRE_LATEX=1")
    specs = [f"{kind}:steps={t}" for t in (1, 2, 3)]
    r = runner.invoke(cli, ["build", *specs, "--format", formats, "-o", str(out)])
    assert r.exit_code == 0, (r.output, r.stderr)
    for ext in formats.split(","):
        for name in (f"worksheet.{ext}", f"worksheet-key.{ext}") if ext != "json" else ("worksheet.json",):
            assert (out / name).stat().st_size > 500, name
    if "pdf" in formats:
        assert (out / "worksheet.pdf").read_bytes().startswith(b"%PDF")
    html = (out / "worksheet.html").read_text(encoding="utf-8")
    assert "Values of" in html and "on the tables page" in html and html.count("<h2") >= 3


# ---------------------------------------------------------------- what the two kinds' tests share
ENTRIES = st.fractions(min_value=-2, max_value=2, max_denominator=10)


@st.composite
def cell_inputs(draw, gates: str, states: tuple[str, ...], T: int = 1):
    """Inputs of a cell with ``T`` time steps: fractions in [-2, 2] with denominators up to 10;
    ``states`` are 1 x d_h (h0, c0, b_hn), then W_g, W_hg, b_g of each gate g."""
    d, k = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    mat = lambda r, c: tuple(tuple(draw(ENTRIES) for _ in range(c)) for _ in range(r))
    m = {("x" if T == 1 else "X"): mat(T, d), **{s: mat(1, k) for s in states}}
    for g in gates:
        m[f"W_{g}"], m[f"W_h{g}"], m[f"b_{g}"] = mat(d, k), mat(k, k), mat(1, k)
    return m


def float_inputs(p) -> dict:
    return {n: q.value for n, q in p.inputs.items()}


def one_step_agrees_with_pytorch(p, kind: str, gates: str, carried: str, atol: float, places: int | None = None):
    """The exact ``gates`` equal PyTorch's; each ``carried`` step's value is PyTorch's
    unrounded one and its exact value (carried, rounded) within ``atol`` of it."""
    want = torch_chain(kind, float_inputs(p))
    for name in gates:  # exact gates
        np.testing.assert_allclose(floats(p.step(name).exact), want[name], rtol=1e-12, atol=1e-12, err_msg=name)
    for name in carried:  # value: the unrounded chain; exact: from the carried decimals
        np.testing.assert_allclose(p.step(name).value, want[name], rtol=1e-12, atol=1e-12, err_msg=name)
        assert p.step(name).rounded and (places is None or p.step(name).places == places)
        np.testing.assert_allclose(floats(p.step(name).exact), want[name], atol=atol, err_msg=name)


def several_steps_follow_pytorch(kind_module, steps: list[str], seed: int, T: int) -> None:
    """T calculator-mode time steps: steps named by time, no table, one-decimal inputs,
    every value PyTorch's unrounded chain and every carried exact value within 2e-3 of it."""
    params = kind_module.Params(numbers="calculator", steps=T)
    p = kind_module.solve(kind_module.generate(np.random.default_rng(seed), params), params)
    want = torch_chain(p.kind, float_inputs(p))
    assert [s.name for s in p.steps] == [f"{n}_{t}" for t in range(1, T + 1) for n in steps]
    assert not p.aids  # calculator mode: no table
    assert all(10 * x == int(10 * x) for q in p.inputs.values() for row in q.exact for x in row)  # one decimal
    for s in p.steps:
        np.testing.assert_allclose(s.value, want[s.name], rtol=1e-12, atol=1e-12, err_msg=s.name)
        np.testing.assert_allclose(floats(s.exact), want[s.name], atol=2e-3, err_msg=s.name)


def table_values_are_sigma_and_tanh(spec: str, seed: int) -> None:
    """Every printed table value is σ or tanh of its argument to 4 decimals."""
    from worksheet.build import build_document

    p = build_document([spec], seed=seed).problems[0]
    assert p.aids
    for aid in p.aids:
        for (arg, val), x in zip(aid.entries, aid.values):
            want = sigmoid(float(x)) if arg.startswith(r"\sigma") else np.tanh(float(x))
            assert val == f"{want:.4f}", (arg, val)
        for row in aid.grid[1:]:  # the printed grid: row x.x, column 0.0c, the value at x.x + 0.0c
            for c, val in enumerate(row[1:]):
                x = float(row[0]) + c / 100
                if val:
                    want = sigmoid(x) if aid.entries[0][0].startswith(r"\sigma") else np.tanh(x)
                    assert val == f"{want:.4f}", (row[0], c, val)


def agrees_with_real_torch(kind_module) -> None:
    """Three calculator-mode time steps match the real torch cell (skipped without torch)."""
    import pytest

    pytest.importorskip("torch")
    params = kind_module.Params(numbers="calculator", steps=3, d_in=3, d_h=2)
    p = kind_module.solve(kind_module.generate(np.random.default_rng(7), params), params)
    for name, want in real_torch_chain(p.kind, float_inputs(p)).items():
        np.testing.assert_allclose(p.step(name).value, want, rtol=1e-10, atol=1e-12, err_msg=name)


def cli_specs(kind: str) -> list[tuple[str, list[str]]]:
    """The builds of the CLI test: one step, two, three in calculator mode."""
    return [(kind, []), (f"{kind}:steps=2", []), (f"{kind}:steps=3", ["--numbers", "calculator", "--seed", "5"])]


def cli_builds_and_compiles(runner, cli, tmp_path, kind: str, steps: list[str], spec: str, args: list[str]) -> None:
    """The build's tex compiles and its json lists the first time step's steps in order."""
    data = build_and_compile(runner, cli, [spec, *args], tmp_path)
    names = [s["name"] for s in data["problems"][0]["steps"]]
    assert names[: len(steps)] == (steps if spec == kind else [f"{n}_1" for n in steps])


def errors_name_the_matrices(kind_module, change, message: str) -> None:
    """Solving nothing names the missing x; a generated problem with ``change(m)``
    applied is a ShapeError matching ``message``."""
    import pytest

    from worksheet.policy.errors import InputError, ShapeError

    with pytest.raises(InputError, match="missing matrix 'x'"):
        kind_module.solve({}, kind_module.Params())
    m = kind_module.generate(np.random.default_rng(1), kind_module.Params())
    with pytest.raises(ShapeError, match=message):
        kind_module.solve({**m, **change(m)}, kind_module.Params())


def statuses_with_one_wrong_step(tmp_path, kind: str, step: str, by: float = 0.2) -> dict:
    """The statuses ``check`` gives answers to seed 2's problem in which ``step`` is
    off by ``by`` and every later step is computed from that wrong value."""
    key, doc = make_key(tmp_path, [kind], seed=2)
    p = doc.problems[0]
    values = recompute(p, {step: p.step(step).value + by})
    return statuses(check_answers(key, write_toml(tmp_path / "a.toml", table(values))))
