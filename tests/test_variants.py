"""--variants N: different, equally hard, reproducible versions of a sheet;
one combined file per format (or --split), NAME-variants.csv, JSON with
every variant and its key."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest
from hypothesis import given as hyp_given
from hypothesis import settings
from hypothesis import strategies as st

from worksheet import kinds
from worksheet.build import build_document, build_variants, render_documents, render_variants, variant_id, variant_seed
from worksheet.policy.errors import UnknownKindError, WorksheetError


def available(names):
    out = []
    for name in names:
        try:
            kinds.get(name)
        except UnknownKindError:
            continue
        out.append(name)
    return out


def given(problem):
    return tuple((name, q.exact) for name, q in problem.inputs.items())


@pytest.mark.parametrize("kind", available(kinds.names()))
def test_no_two_variants_share_the_same_given_matrices(kind):
    docs = build_variants([kind], 30, seed=11)
    seen = [given(d.problems[0]) for d in docs]
    assert len(set(seen)) == len(seen)


def test_variants_are_equally_hard_same_kinds_sizes_and_number_mode():
    docs = build_variants(["attention", "attention:causal=true,seq-len=4"], 12, seed=5)
    first = docs[0]
    for d in docs:
        assert d.numbers == "hand"
        for p, q in zip(d.problems, first.problems):
            assert p.kind == q.kind
            assert {k: v.shape for k, v in p.inputs.items()} == {k: v.shape for k, v in q.inputs.items()}
            assert [s.name for s in p.steps] == [s.name for s in q.steps]
            assert {k: v for k, v in p.params.items() if k != "tokens"} == {
                k: v for k, v in q.params.items() if k != "tokens"
            }
            # hand mode: integer given entries, integer scores
            assert all(x.denominator == 1 for row in p.inputs["X"].exact for x in row)
            assert p.step("scores").integral


def test_variants_are_reproducible_and_a_variant_is_the_sheet_of_its_seed():
    a = build_variants(["attention"], 4, seed=9)
    b = build_variants(["attention"], 4, seed=9)
    assert [given(d.problems[0]) for d in a] == [given(d.problems[0]) for d in b]
    assert [d.seed for d in a] == [variant_seed(9, k) for k in range(1, 5)]
    alone = build_document(["attention"], seed=a[2].seed)
    assert given(alone.problems[0]) == given(a[2].problems[0])
    other = build_variants(["attention"], 4, seed=10)
    assert [d.seed for d in other] != [d.seed for d in a]


def test_variant_ids_are_zero_padded_to_the_count():
    assert [variant_id(k, 30) for k in (1, 9, 30)] == ["v01", "v09", "v30"]
    assert variant_id(7, 300) == "v007"
    docs = build_variants(["attention"], 3, seed=1)
    assert [d.variant for d in docs] == ["v01", "v02", "v03"]


def test_too_few_different_numbers_is_a_clear_error(monkeypatch):
    from worksheet.build import variants as b

    monkeypatch.setattr(b, "variant_seed", lambda seed, k, attempt=0: 1)  # every draw the same
    with pytest.raises(WorksheetError, match="different variants"):
        b.build_variants(["attention"], 2)


def test_cli_writes_combined_files_csv_and_json(runner, cli, tmp_path):
    res = runner.invoke(cli, ["build", "--variants", "3", "--seed", "2", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert res.stderr == ""  # no progress bar when stderr is not a terminal
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "worksheet-key.md",
        "worksheet-key.tex",
        "worksheet-variants.csv",
        "worksheet.json",
        "worksheet.md",
        "worksheet.tex",
    ]
    md = (tmp_path / "worksheet.md").read_text()
    for v in ("v01", "v02", "v03"):
        assert f"**Variant:** {v}" in md
    tex = (tmp_path / "worksheet.tex").read_text()
    assert tex.count("\\clearpage") == 2 and tex.count("\\documentclass") == 1
    data = json.loads((tmp_path / "worksheet.json").read_text())
    assert [v["id"] for v in data["variants"]] == ["v01", "v02", "v03"]
    assert all(v["seed"] == variant_seed(2, k) for k, v in enumerate(data["variants"], 1))
    assert all(v["problems"][0]["steps"][-1]["name"] == "output" for v in data["variants"])
    rows = list(csv.DictReader(io.StringIO((tmp_path / "worksheet-variants.csv").read_text())))
    assert [r["variant"] for r in rows] == ["v01", "v02", "v03"]
    assert [int(r["seed"]) for r in rows] == [variant_seed(2, k) for k in (1, 2, 3)]
    assert all(r["pages"] == "" for r in rows)  # no PDF built


def test_cli_split_writes_one_set_of_files_per_variant(runner, cli, tmp_path):
    res = runner.invoke(cli, ["build", "--variants", "2", "--split", "--format", "md,json", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "worksheet-v01-key.md",
        "worksheet-v01.json",
        "worksheet-v01.md",
        "worksheet-v02-key.md",
        "worksheet-v02.json",
        "worksheet-v02.md",
        "worksheet-variants.csv",
    ]
    one = json.loads((tmp_path / "worksheet-v02.json").read_text())
    assert [v["id"] for v in one["variants"]] == ["v02"]
    assert "worksheet-v01.md" in (tmp_path / "worksheet-variants.csv").read_text()


def test_split_needs_variants(runner, cli, tmp_path):
    res = runner.invoke(cli, ["build", "--split", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "--split needs --variants" in res.output


def test_combined_pdf_starts_each_variant_on_a_new_page(tmp_path):
    from test_pdf import page_count, pdf_text, require_latex
    from worksheet.build import write_documents

    require_latex()
    docs = build_variants(["attention"], 3, seed=8)
    write_documents(docs, ["pdf"], tmp_path)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "worksheet-variants.csv").read_text())))
    for role, column in (("worksheet.pdf", "pages"), ("worksheet-key.pdf", "key_pages")):
        ranges = [tuple(map(int, r[column].split("-"))) for r in rows]
        assert ranges[0][0] == 1
        for (_, last), (first, _) in zip(ranges, ranges[1:]):
            assert first == last + 1
        assert ranges[-1][1] == page_count(tmp_path / role)
    pages = pdf_text(tmp_path / "worksheet.pdf").split("\f")
    first_page_of_v2 = pages[int(rows[1]["pages"].split("-")[0]) - 1]
    assert "Variant v02" in first_page_of_v2 and "Name:" in first_page_of_v2


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal_only(monkeypatch):
    import sys

    from worksheet import cli as cli_mod

    fake = _Terminal()
    monkeypatch.setattr(sys, "stderr", fake)
    docs = cli_mod._with_progress(build_variants, ["attention"], 12, seed=1)
    assert len(docs) == 12 and "building variants" in fake.getvalue()
    fake = _Terminal()
    monkeypatch.setattr(sys, "stderr", fake)
    outlines, _ = cli_mod._with_progress(render_variants, ["attention"], 12, ["md"], seed=1, jobs=2)
    assert len(outlines) == 12 and "100%" in fake.getvalue()

    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    cli_mod._with_progress(build_variants, ["attention"], 12, seed=1)
    assert quiet.getvalue() == ""


# -- on every core: the same files, byte for byte, whatever the number of processes

FORMATS = ["md", "tex", "json", "html", "pdf"]


@pytest.mark.parametrize(
    "problems",
    [
        ["attention", "layer-norm", "multi-head-attention:causal=true"],
        ["softmax-scaling:seq-len=2"],  # few different numbers: many variants are drawn again
    ],
)
def test_render_variants_on_two_processes_gives_the_files_of_one(problems):
    docs = build_variants(problems, 30, seed=3)
    expected = render_documents(docs, FORMATS, name="exam", compile_pdf=False)
    for jobs in (1, 2):
        outlines, [(name, got)] = render_variants(problems, 30, FORMATS, name="exam", seed=3, jobs=jobs)
        assert name == "exam"
        assert got.files == expected.files and got.latex_sources == expected.latex_sources
        assert [(d.variant, d.seed) for d in outlines] == [(d.variant, d.seed) for d in docs]


def test_render_variants_split_on_two_processes():
    docs = build_variants(["attention"], 30, seed=2)
    outlines, groups = render_variants(["attention"], 30, ["md", "json"], name="ws", seed=2, jobs=2, split=True)
    assert [n for n, _ in groups] == [f"ws-{d.variant}" for d in docs]
    for (n, got), d in zip(groups, docs):
        assert got.files == render_documents([d], ["md", "json"], name=n).files


def test_an_error_in_a_worker_reaches_the_caller_as_the_same_error(monkeypatch):
    from worksheet.build import variants as b

    monkeypatch.setattr(b, "variant_seed", lambda seed, k, attempt=0: 1)  # every draw the same
    with pytest.raises(WorksheetError, match="different variants"):
        b.render_variants(["attention"], 30, ["md"], jobs=2)


def test_cli_jobs_do_not_change_a_byte(runner, cli, tmp_path):
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        r = runner.invoke(
            cli,
            [
                "build",
                "attention",
                "layer-norm",
                "--variants",
                "30",
                "--jobs",
                jobs,
                "--format",
                "md,tex,json,html",
                "-o",
                str(out),
            ],
        )
        assert r.exit_code == 0, r.output
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outs[0] == outs[1] and len(outs[0]) == 8  # 4 formats, 7 files, and the CSV


def test_cli_jobs_must_be_positive(runner, cli, tmp_path):
    r = runner.invoke(cli, ["build", "--variants", "3", "--jobs", "0", "-o", str(tmp_path)])
    assert r.exit_code == 2 and "--jobs" in r.output


def test_default_jobs_one_process_for_small_builds():
    from worksheet.build import default_jobs

    assert default_jobs(1) == 1 and default_jobs(23) == 1
    assert 1 <= default_jobs(300) <= 8


def test_benchmark_script_runs(capsys):
    """python -m worksheet.bench works (a smoke run at tiny sizes; not timed)."""
    from worksheet import bench

    assert bench.exam(2, ["md", "json"]) > 0
    assert set(bench.attention_end_to_end(2)) == {"--jobs 1", f"--jobs {bench._cores()}"}
    rows = dict(bench.per_kind(1))  # every kind and format once: the smoke run, not a measure
    assert rows["attention"]["generate+solve"] > 0 and set(rows["attention"]) >= {"md", "tex", "json", "html"}
    assert bench.machine()["cores (nproc)"]


@settings(max_examples=200, deadline=None)
@hyp_given(
    seed=st.integers(0, 2**32),
    n=st.integers(1, 12),
    m=st.integers(1, 16),
    table=st.sampled_from(
        [((-1, 0, 1, 2), (0.2, 0.3, 0.35, 0.15)), ((-1, 0, 1), (0.25, 0.45, 0.3)), ((1, 2, 3), (1, 1, 2))]
    ),
)
def test_int_matrix_draws_what_numpy_choice_draws(seed, n, m, table):
    """Seeds keep their numbers: the fast draw is numpy's choice, draw for draw."""
    import numpy as np

    from worksheet.kinds.base import int_matrix

    values, p = table
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    expected = a.choice(np.array(values), size=(n, m), p=np.array(p) / sum(p))
    assert int_matrix(b, n, m, values, p) == tuple(tuple(int(x) for x in row) for row in expected)
    assert a.random() == b.random()


def test_without_fork_the_variants_are_built_in_this_process(monkeypatch):
    from worksheet.build import variants as b

    monkeypatch.setattr(b, "_can_fork", lambda: False)
    assert b.default_jobs(300) == 1
    outlines, [(_, got)] = b.render_variants(["attention"], 5, ["md"], seed=8, jobs=4)
    assert got.files == render_documents(build_variants(["attention"], 5, seed=8), ["md"]).files


def test_render_variants_gives_back_the_collector_thresholds(monkeypatch):
    import gc

    from worksheet.build import variants as b

    before = gc.get_threshold()
    b.render_variants(["attention"], 2, ["md"], seed=1)
    assert gc.get_threshold() == before
    monkeypatch.setattr(b, "variant_seed", lambda seed, k, attempt=0: 1)  # fails: every draw the same
    with pytest.raises(WorksheetError):
        b.render_variants(["attention"], 3, ["md"], jobs=1)
    assert gc.get_threshold() == before


@pytest.mark.parametrize("split", [False, True])
def test_an_existing_file_with_other_content_is_named_and_nothing_is_written(runner, cli, tmp_path, split):
    out = tmp_path / "out"
    out.mkdir()
    existing = out / ("ws-v07.md" if split else "ws-variants.csv")
    existing.write_text("mine")
    args = ["build", "--variants", "8", "--name", "ws", "--format", "md,json", "-o", str(out)]
    r = runner.invoke(cli, args + (["--split"] if split else []))
    assert r.exit_code == 2 and f"{existing} already exists with other content" in r.output
    assert existing.read_text() == "mine" and os.listdir(out) == [existing.name]


def test_render_variants_keeps_no_tables_of_rendered_variants():
    """Each variant's shared render tables go once it is rendered (memory of big exams)."""
    from worksheet.render import base

    render_variants(["attention"], 5, ["md", "tex", "json"], seed=4, jobs=1)
    assert not base._TABLES
