"""Helpers shared by tests/test_kind_lstm_cell.py and tests/test_kind_gru_cell.py:
PyTorch's LSTMCell and GRUCell written out in numpy exactly as PyTorch
documents them (its weight layout and gate order), the map from our row
convention weights to that layout, and the check of a named mistake."""

from __future__ import annotations

import numpy as np

from check_util import inputs_of, key_values, make_key, mistakes_of, statuses, table, write_toml
from worksheet.check import check_answers, recomputer


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


# ---------------------------------------------------------------- PyTorch's layout
def lstm_to_torch(m: dict) -> dict:
    """Our W_f.. (d_in x d_h, row convention) as LSTMCell's weight_ih (4 d_h x d_in,
    gate blocks i, f, g, o), weight_hh, bias_ih and bias_hh (zero: b is the sum)."""
    order = "ifgo"
    return {"weight_ih": np.hstack([m[f"W_{g}"] for g in order]).T,
            "weight_hh": np.hstack([m[f"W_h{g}"] for g in order]).T,
            "bias_ih": np.hstack([m[f"b_{g}"] for g in order]).ravel(),
            "bias_hh": np.zeros(4 * m["h0"].shape[1])}


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
    return {"weight_ih": np.hstack([m[f"W_{g}"] for g in order]).T,
            "weight_hh": np.hstack([m[f"W_h{g}"] for g in order]).T,
            "bias_ih": np.hstack([m[f"b_{g}"] for g in order]).ravel(),
            "bias_hh": np.concatenate([np.zeros(2 * d_h), m["b_hn"].ravel()])}


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
        x = X[t - 1: t]
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
            x = torch.from_numpy(np.ascontiguousarray(X[t - 1: t]))
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
    assert all(st[n] in ("carried-forward", "correct") for n in names[k + 1:]), report.text()
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
    assert "you may need" in html and html.count("<h2") >= 3
