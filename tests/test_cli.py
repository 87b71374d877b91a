"""CliRunner tests of every command and every bad-input path (exit 2, one line)."""

import json
import os
import stat
import subprocess
import sys

import pytest
from common import one_line_error
from worksheet import kinds

KEYS = ["worksheet.md", "worksheet-key.md", "worksheet.tex", "worksheet-key.tex", "worksheet.json"]


def test_version(runner, cli):
    r = runner.invoke(cli, ["--version"])
    assert r.exit_code == 0 and "worksheet" in r.output


def test_list_names_every_kind(runner, cli):
    r = runner.invoke(cli, ["list"])
    names = [line.split()[0] for line in r.output.splitlines()]
    assert names[:3] == ["attention", "self-attention-basic", "softmax-scaling"]
    assert names == kinds.names() and {"lstm-cell", "gru-cell", "decoder-block"} <= set(names)


def test_list_examples(runner, cli):
    r = runner.invoke(cli, ["list", "--examples"])
    assert "thinking-machines" in r.output and "masking-4x4" in r.output


def test_help_and_list_do_not_import_sympy_numpy_or_jinja():
    code = (
        "import sys; from worksheet.cli import main\n"
        "for args in (['--help'], ['list']):\n"
        "    try: main(args)\n"
        "    except SystemExit: pass\n"
        "print([m for m in ('sympy', 'numpy', 'jinja2') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_build_writes_sheet_key_and_json(runner, cli, tmp_path):
    r = runner.invoke(cli, ["build", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(tmp_path)) == sorted(KEYS)
    data = json.loads((tmp_path / "worksheet.json").read_text())
    p = data["problems"][0]
    assert p["kind"] == "attention" and p["seed"] == 1
    assert [s["name"] for s in p["steps"]] == ["Q", "K", "V", "scores", "scaled", "weights", "output"]
    sheet = (tmp_path / "worksheet.md").read_text()
    key = (tmp_path / "worksheet-key.md").read_text()
    assert "Seed:** 1" in sheet and "Name:" in sheet
    assert "q_{12} = x_{1}" in key and "q_{12}" not in sheet  # no answers on the sheet
    assert "Exact:" in key and "Exact:" not in sheet
    assert "Values of $e^x$" in sheet


def test_build_is_reproducible_whatever_the_hash_seed(tmp_path):
    outs = []
    for hs in ("0", "123"):
        d = tmp_path / hs
        env = {**os.environ, "PYTHONHASHSEED": hs}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "worksheet.cli",
                "build",
                "attention",
                "attention:causal=true",
                "--seed",
                "7",
                "-o",
                str(d),
            ],
            check=True,
            env=env,
            capture_output=True,
        )
        outs.append({f: (d / f).read_bytes() for f in KEYS})
    assert outs[0] == outs[1]


def test_seed_changes_the_numbers(runner, cli, tmp_path):
    for s in ("1", "2"):
        runner.invoke(cli, ["build", "--seed", s, "--format", "json", "-o", str(tmp_path / s)])
    a, b = ((tmp_path / s / "worksheet.json").read_text() for s in ("1", "2"))
    assert a != b


def test_build_several_problems_in_order(runner, cli, tmp_path):
    r = runner.invoke(
        cli, ["build", "attention", "attention:seq-len=2,causal=true", "--format", "json", "-o", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    probs = json.loads((tmp_path / "worksheet.json").read_text())["problems"]
    assert [p["params"]["seq_len"] for p in probs] == [3, 2]
    assert "masked" in [s["name"] for s in probs[1]["steps"]]


def test_build_to_stdout(runner, cli):
    r = runner.invoke(cli, ["build", "--format", "md", "-o", "-"])
    assert r.exit_code == 0 and r.output.startswith("# Scaled dot-product attention")


def test_existing_files_are_not_touched_without_force(runner, cli, tmp_path):
    (tmp_path / "worksheet.md").write_text("mine")
    r = runner.invoke(cli, ["build", "-o", str(tmp_path)])
    assert "already exists" in one_line_error(r)
    assert os.listdir(tmp_path) == ["worksheet.md"] and (tmp_path / "worksheet.md").read_text() == "mine"
    assert runner.invoke(cli, ["build", "-o", str(tmp_path), "--force"]).exit_code == 0
    assert (tmp_path / "worksheet.md").read_text() != "mine"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_folder(runner, cli, tmp_path):
    tmp_path.chmod(stat.S_IREAD | stat.S_IEXEC)
    try:
        assert "cannot write" in one_line_error(runner.invoke(cli, ["build", "-o", str(tmp_path / "x")]))
    finally:
        tmp_path.chmod(stat.S_IRWXU)


def test_output_folder_that_is_a_file(runner, cli, tmp_path):
    (tmp_path / "f").write_text("")
    assert "cannot write" in one_line_error(runner.invoke(cli, ["build", "-o", str(tmp_path / "f")]))
    assert os.listdir(tmp_path) == ["f"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["build", "atention"], "did you mean 'attention'"),
        (["build", "--format", "md,docx"], "unknown format 'docx'"),
        (["build", "--d-k", "3"], "perfect square"),
        (["build", "--seq-len", "0"], "--seq-len"),
        (["build", "attention:bogus=1"], "no setting 'bogus'"),
        (["build", "--bogus"], "No such option"),
        (["solve", "attention"], "needs KIND --input FILE"),
        (["solve", "--example", "thinking"], "did you mean 'thinking-machines'"),
    ],
)
def test_bad_usage_is_one_line_exit_2(runner, cli, args, message, tmp_path):
    r = runner.invoke(cli, args + ([] if args[0] != "build" or "-o" in args else ["-o", str(tmp_path)]))
    assert message in one_line_error(r)
    assert not any(tmp_path.iterdir())


def test_solve_json_input_reads_decimals_exactly(runner, cli, tmp_path):
    f = tmp_path / "in.json"
    f.write_text('{"Q": [[0.2, 1]], "K": [[1, 0.2], [0, 1]], "V": [[1], ["3/4"]], "tokens": ["étudiant"]}')
    r = runner.invoke(cli, ["solve", "attention", "--input", str(f), "--format", "json"])
    assert r.exit_code == 0, r.output
    p = json.loads(r.output)["problems"][0]
    assert p["inputs"]["Q"]["exact"] == [["1/5", "1"]]
    assert p["steps"][0]["exact"] == [["2/5", "1"]]
    assert p["inputs"]["Q"]["rows"] == ["étudiant"]


def test_solve_toml_input_with_projection_and_causal(runner, cli, tmp_path):
    f = tmp_path / "in.toml"
    f.write_text(
        'X = [[1, 0], [0, 1]]\nW_Q = [[1, 0], [0, 1]]\nW_K = [[1, 1], [0, 1]]\n'
        'W_V = [[2, 0], [0, 2]]\ncausal = true\ntokens = ["didn\'t", "cross"]\n'
    )
    r = runner.invoke(cli, ["solve", "attention", "-i", str(f)])
    assert r.exit_code == 0, r.output
    assert "Causal mask" in r.output and "didn't" in r.output


def test_solve_to_file_refuses_to_overwrite(runner, cli, tmp_path):
    f = tmp_path / "in.json"
    f.write_text('{"Q": [[1]], "K": [[1]], "V": [[1]]}')
    out = tmp_path / "sol.md"
    assert runner.invoke(cli, ["solve", "attention", "-i", str(f), "-o", str(out)]).exit_code == 0
    assert "already exists" in one_line_error(runner.invoke(cli, ["solve", "attention", "-i", str(f), "-o", str(out)]))


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"Q": [[1, "x"]], "K": [[1, 1]], "V": [[1]]}', "Q, row 1, column 2: not a number"),
        ('{"Q": [[1, "nan"]], "K": [[1, 1]], "V": [[1]]}', "Q, row 1, column 2"),
        ('{"Q": [[1, Infinity]], "K": [[1, 1]], "V": [[1]]}', "Q, row 1, column 2: not finite: 'Infinity'"),
        ('{"Q": [[1, 1]], "K": [[1, 1]], "V": [[NaN]]}', "V, row 1, column 1: not finite: 'NaN'"),
        ('{"Q": [[1, 1]], "K": [[-Infinity, 1]], "V": [[1]]}', "K, row 1, column 1: not finite: '-Infinity'"),
        ('{"Q": [[1, 2], [3]], "K": [[1, 1]], "V": [[1]]}', "Q, row 2: ragged rows"),
        ('{"Q": [[1, 2]], "K": [[1, 1, 1]], "V": [[1]]}', "Q is 1 x 2 and K is 1 x 3"),
        (
            '{"X": [[1, 2]], "W_Q": [[1], [1]], "W_K": [[1], [1], [1]], "W_V": [[1], [1]]}',
            "X is 1 x 2 and W_K is 3 x 1",
        ),
        ('{"Q": [[1]], "K": [[1]]}', "missing matrix 'V'"),
        ('{"Q": [[1]], "K": [[1]], "V": [[1]], "Qq": 1}', "unknown field; did you mean 'Q'"),
        ('{"Q": [[1]], "K": [[1]], "V": [[1]], "causal": "yes"}', "causal: must be true or false"),
        ('{"Q": [[1]], "K": [[1]], "V": [[1]], "tokens": ["a", "b"]}', "2 labels for 1 rows"),
        ('{"Q": [[1]], "K": [[1]], "V": [[1]], "d_k": 4}', "d_k = 4 but the keys have 1 columns"),
        ('{"Q": [[1]], "K": [[1]] "V": [[1]]}', "invalid JSON at line 1"),
        ("[1, 2]", "one table of named matrices"),
        ('{"Q": [["__import__(\'os\').system(\'touch PWNED\')"]], "K": [[1]], "V": [[1]]}', "Q, row 1, column 1"),
    ],
)
def test_bad_input_file_names_file_field_and_position(runner, cli, tmp_path, content, message):
    f = tmp_path / "bad.json"
    f.write_text(content)
    line = one_line_error(runner.invoke(cli, ["solve", "attention", "-i", str(f)]))
    assert str(f) in line and message in line
    assert not (tmp_path / "PWNED").exists() and not os.path.exists("PWNED")


def test_non_utf8_and_missing_files(runner, cli, tmp_path):
    f = tmp_path / "bad.toml"
    f.write_bytes(b"Q = [[1]]\n\xff\xfe")
    assert "not UTF-8" in one_line_error(runner.invoke(cli, ["solve", "attention", "-i", str(f)]))
    assert "cannot read" in one_line_error(runner.invoke(cli, ["solve", "attention", "-i", str(tmp_path / "no.json")]))


def test_solve_examples(runner, cli):
    r = runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", "json"])
    w = json.loads(r.output)["problems"][0]["steps"][-2]
    assert w["name"] == "weights" and w["exact"][0] == ["1/(1 + exp(-2))", "exp(-2)/(1 + exp(-2))"]


def test_written_files_get_the_usual_permissions(runner, cli, tmp_path):
    old = os.umask(0o022)
    try:
        runner.invoke(cli, ["build", "--format", "md", "-o", str(tmp_path)])
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "worksheet.md").stat().st_mode) == 0o644
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


# ---------------------------------------------------------------- issue 10: hostile input, one line each
def _unchanged(runner, cli, tmp_path, args) -> str:
    """Run a bad command in a folder with old output: one line, exit 2, nothing changed."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / "worksheet.md").write_text("old")
    before = sorted((p.name, p.read_bytes()) for p in out.iterdir())
    line = one_line_error(runner.invoke(cli, [*args, "-o", str(out)]))
    assert sorted((p.name, p.read_bytes()) for p in out.iterdir()) == before
    return line


@pytest.mark.parametrize("extra", [[], ["--variants", "2"]])
def test_a_negative_seed_is_one_line(runner, cli, tmp_path, extra):
    line = _unchanged(runner, cli, tmp_path, ["build", "--seed", "-1", "--force", *extra])
    assert "--seed" in line and "-1" in line


def test_a_seed_beyond_numpys_range_is_one_line(runner, cli, tmp_path):
    assert "--seed" in _unchanged(runner, cli, tmp_path, ["build", "--seed", str(2**32), "--force"])


def test_positions_that_are_not_numbers_name_the_field(runner, cli, tmp_path):
    f = tmp_path / "pos.toml"
    f.write_text('positions = "0 1 x"\nd_model = 4\n')
    line = one_line_error(runner.invoke(cli, ["solve", "positional-encoding", "-i", str(f)]))
    assert f"{f}, positions: must be a list of whole numbers" in line
    line = _unchanged(runner, cli, tmp_path, ["build", "positional-encoding:positions=0 x", "--force"])
    assert "positions: must be a list of whole numbers" in line


@pytest.mark.parametrize(
    "points, shown", [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"), ("1e308", "1e+308"), ("1000001", "1000001")]
)
def test_spec_points_must_be_finite_and_bounded(runner, cli, tmp_path, points, shown):
    spec = tmp_path / "exam.toml"
    section = f'[[sections]]\nkind = "attention"\npoints = {points}\n'
    spec.write_text('title = "x"\n' + section + section)  # two sections: their sum must not overflow
    line = _unchanged(runner, cli, tmp_path, ["build", "--spec", str(spec), "--force"])
    assert f"{spec}, sections[1].points: must be a number of points from 0 to 1000000" in line
    assert shown in line


def test_spec_points_at_the_limit_add_up(runner, cli, tmp_path):
    spec = tmp_path / "exam.toml"
    section = '[[sections]]\nkind = "attention"\npoints = 1e6\n'
    spec.write_text('title = "x"\n' + section + section)
    r = runner.invoke(cli, ["build", "--spec", str(spec), "-o", str(tmp_path / "o"), "--format", "md"])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("name", ["a\nerror: forged", "\x1b[31mred\x1b[0m", "tab\there", "nul\x00", "\u2028x"])
def test_control_characters_in_names_are_escaped_on_one_line(runner, cli, tmp_path, name):
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"Q": [[1]], "K": [[1]], "V": [[1]], name: 1}))
    line = one_line_error(runner.invoke(cli, ["solve", "attention", "-i", str(f)]))
    assert line.isprintable() and "unknown field" in line
    assert repr(name)[1:-1] in line  # shown escaped, e.g. \n and \x1b


def test_control_characters_in_a_file_name_are_escaped(runner, cli, tmp_path):
    f = tmp_path / "in\nerror: forged.json"
    line = one_line_error(runner.invoke(cli, ["solve", "attention", "-i", str(f)]))
    assert line.isprintable() and "in\\nerror: forged.json" in line


def test_control_characters_in_answer_step_names_are_escaped(runner, cli, tmp_path):
    key = tmp_path / "k.json"
    assert (
        runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", "json", "-o", str(key)]).exit_code
        == 0
    )
    a = tmp_path / "a.json"
    a.write_text(json.dumps({"sco\nres\x1b[2J": [[1, 2]]}))
    r = runner.invoke(cli, ["check", str(key), str(a)])  # reported; the rest of the file is marked
    assert r.exit_code == 1 and "\x1b" not in r.output
    line = next(x for x in r.output.splitlines() if "unknown step" in x)
    assert line.isprintable() and "sco\\nres\\x1b[2J" in line


@pytest.mark.parametrize("constant", ["NaN", "Infinity"])
def test_json_nan_in_an_answer_file_names_step_row_and_column(runner, cli, tmp_path, constant):
    key = tmp_path / "k.json"
    assert (
        runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", "json", "-o", str(key)]).exit_code
        == 0
    )
    a = tmp_path / "a.json"
    a.write_text('{"scores": [[112, %s], [96, 88]]}' % constant)
    r = runner.invoke(cli, ["check", str(key), str(a)])  # the step is reported, the rest marked
    assert r.exit_code == 1
    assert f"scores   could not be read: line 1, row 1, column 2: not a finite number: {constant}" in r.output


def _run(code: str, *args, **kw) -> subprocess.CompletedProcess:
    # Ctrl-C as in a terminal, even when pytest itself was started in the background
    # by a shell (which makes it, and so its children, ignore SIGINT)
    import signal

    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **kw,
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_one_line():
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [sys.executable, "-m", "worksheet.cli", "solve", "--example", "scaling"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert r.returncode == 2
    assert r.stderr.splitlines() == ["error: cannot write to standard output: No space left on device"]


def test_a_closed_pipe_ends_quietly():
    code = (
        "import sys, os\n"
        "r, w = os.pipe(); os.close(r); os.dup2(w, 1)\n"  # stdout: a pipe nobody reads
        "from worksheet.cli import main\n"
        "main(['solve', '--example', 'thinking-machines'])\n"
    )
    r = _run(code)
    assert r.returncode == 141 and r.stderr == ""


INTERRUPT = (
    "import os, signal, sys\n"
    "import importlib\n"
    "b = importlib.import_module('worksheet.build')  # worksheet.build is the library's build()\n"
    "def interrupted(*a, **k):\n"
    "    os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, in the middle of the work\n"
    "    signal.pause() if hasattr(signal, 'pause') else None\n"
    "b.{target} = interrupted\n"
    "from worksheet.cli import main\n"
    "main(sys.argv[1:])\n"
)


def test_ctrl_c_exits_130_with_one_line(tmp_path):
    r = _run(INTERRUPT.format(target="build_document"), "build", "-o", str(tmp_path / "out"), timeout=120)
    assert r.returncode == 130, r.stderr
    assert [line for line in r.stderr.splitlines() if line.strip()] == ["error: interrupted"]
    assert not (tmp_path / "out").exists()


def test_ctrl_c_while_workers_build_variants_exits_130_with_one_line(tmp_path):
    """The worker-pool path: a worker (which ignores Ctrl-C itself) sends it to
    the main process while the pool runs."""
    code = (
        "import os, signal, sys\n"
        "from worksheet.build import variants as b\n"
        "chunk = b._chunk\n"
        "def interrupting(job, ks):\n"
        "    os.kill(os.getppid(), signal.SIGINT)\n"
        "    return chunk(job, ks)\n"
        "b._chunk = interrupting\n"
        "from worksheet.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    r = _run(code, "build", "--variants", "12", "-j", "2", "-o", str(tmp_path / "out"), timeout=120)
    assert r.returncode == 130, r.stderr
    assert [line for line in r.stderr.splitlines() if line.strip()] == ["error: interrupted"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("seed", [-1, 2**32, True])
def test_the_library_refuses_a_seed_numpy_cannot_take(seed):
    from worksheet.build import build_document, build_variants
    from worksheet.policy.errors import ParamError

    with pytest.raises(ParamError, match="seed must be a whole number from 0 to 4294967295"):
        build_document(["attention"], seed=seed)
    with pytest.raises(ParamError, match="seed must be a whole number"):
        build_variants(["attention"], 2, seed=seed)
