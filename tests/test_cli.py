"""CliRunner tests of every command and every bad-input path (exit 2, one line)."""

import json
import os
import stat
import subprocess
import sys

import pytest
from common import one_line_error

KEYS = ["worksheet.md", "worksheet-key.md", "worksheet.tex", "worksheet-key.tex", "worksheet.json"]


def test_version(runner, cli):
    r = runner.invoke(cli, ["--version"])
    assert r.exit_code == 0 and "worksheet" in r.output


def test_list_names_every_kind(runner, cli):
    r = runner.invoke(cli, ["list"])
    names = [line.split()[0] for line in r.output.splitlines()]
    from worksheet import kinds

    assert names[:3] == ["attention", "self-attention-basic", "softmax-scaling"]
    assert names == kinds.names()


def test_list_examples(runner, cli):
    r = runner.invoke(cli, ["list", "--examples"])
    assert "thinking-machines" in r.output and "masking-4x4" in r.output


def test_help_and_list_do_not_import_sympy_numpy_or_jinja():
    code = ("import sys; from worksheet.cli import main\n"
            "for args in (['--help'], ['list']):\n"
            "    try: main(args)\n"
            "    except SystemExit: pass\n"
            "print([m for m in ('sympy', 'numpy', 'jinja2') if m in sys.modules])")
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
        subprocess.run([sys.executable, "-m", "worksheet.cli", "build", "attention", "attention:causal=true",
                        "--seed", "7", "-o", str(d)], check=True, env=env, capture_output=True)
        outs.append({f: (d / f).read_bytes() for f in KEYS})
    assert outs[0] == outs[1]


def test_seed_changes_the_numbers(runner, cli, tmp_path):
    for s in ("1", "2"):
        runner.invoke(cli, ["build", "--seed", s, "--format", "json", "-o", str(tmp_path / s)])
    a, b = ((tmp_path / s / "worksheet.json").read_text() for s in ("1", "2"))
    assert a != b


def test_build_several_problems_in_order(runner, cli, tmp_path):
    r = runner.invoke(cli, ["build", "attention", "attention:seq-len=2,causal=true", "--format", "json",
                            "-o", str(tmp_path)])
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


@pytest.mark.parametrize("args, message", [
    (["build", "atention"], "did you mean 'attention'"),
    (["build", "--format", "md,docx"], "unknown format 'docx'"),
    (["build", "--d-k", "3"], "perfect square"),
    (["build", "--seq-len", "0"], "--seq-len"),
    (["build", "attention:bogus=1"], "no setting 'bogus'"),
    (["build", "--bogus"], "No such option"),
    (["solve", "attention"], "needs KIND --input FILE"),
    (["solve", "--example", "thinking"], "did you mean 'thinking-machines'"),
])
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
    f.write_text('X = [[1, 0], [0, 1]]\nW_Q = [[1, 0], [0, 1]]\nW_K = [[1, 1], [0, 1]]\n'
                 'W_V = [[2, 0], [0, 2]]\ncausal = true\ntokens = ["didn\'t", "cross"]\n')
    r = runner.invoke(cli, ["solve", "attention", "-i", str(f)])
    assert r.exit_code == 0, r.output
    assert "Causal mask" in r.output and "didn't" in r.output


def test_solve_to_file_refuses_to_overwrite(runner, cli, tmp_path):
    f = tmp_path / "in.json"
    f.write_text('{"Q": [[1]], "K": [[1]], "V": [[1]]}')
    out = tmp_path / "sol.md"
    assert runner.invoke(cli, ["solve", "attention", "-i", str(f), "-o", str(out)]).exit_code == 0
    assert "already exists" in one_line_error(runner.invoke(cli, ["solve", "attention", "-i", str(f), "-o", str(out)]))


@pytest.mark.parametrize("content, message", [
    ('{"Q": [[1, "x"]], "K": [[1, 1]], "V": [[1]]}', "Q, row 1, column 2: not a number"),
    ('{"Q": [[1, "nan"]], "K": [[1, 1]], "V": [[1]]}', "Q, row 1, column 2"),
    ('{"Q": [[1, Infinity]], "K": [[1, 1]], "V": [[1]]}', "Infinity is not a finite number"),
    ('{"Q": [[1, 2], [3]], "K": [[1, 1]], "V": [[1]]}', "Q, row 2: ragged rows"),
    ('{"Q": [[1, 2]], "K": [[1, 1, 1]], "V": [[1]]}', "Q is 1 x 2 and K is 1 x 3"),
    ('{"X": [[1, 2]], "W_Q": [[1], [1]], "W_K": [[1], [1], [1]], "W_V": [[1], [1]]}', "X is 1 x 2 and W_K is 3 x 1"),
    ('{"Q": [[1]], "K": [[1]]}', "missing matrix 'V'"),
    ('{"Q": [[1]], "K": [[1]], "V": [[1]], "Qq": 1}', "unknown field; did you mean 'Q'"),
    ('{"Q": [[1]], "K": [[1]], "V": [[1]], "causal": "yes"}', "causal: must be true or false"),
    ('{"Q": [[1]], "K": [[1]], "V": [[1]], "tokens": ["a", "b"]}', "2 labels for 1 rows"),
    ('{"Q": [[1]], "K": [[1]], "V": [[1]], "d_k": 4}', "d_k = 4 but the keys have 1 columns"),
    ('{"Q": [[1]], "K": [[1]] "V": [[1]]}', "invalid JSON at line 1"),
    ("[1, 2]", "one table of named matrices"),
    ('{"Q": [["__import__(\'os\').system(\'touch PWNED\')"]], "K": [[1]], "V": [[1]]}', "Q, row 1, column 1"),
])
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
    assert w["name"] == "weights" and w["exact"][0] == ["1/(1 + exp(-2))", "1/(1 + exp(2))"]


def test_written_files_get_the_usual_permissions(runner, cli, tmp_path):
    old = os.umask(0o022)
    try:
        runner.invoke(cli, ["build", "--format", "md", "-o", str(tmp_path)])
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "worksheet.md").stat().st_mode) == 0o644
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
