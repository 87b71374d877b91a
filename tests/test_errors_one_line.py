"""Issue 17 §3: one error type, one line, for every entry point.

* a broken lecturer template (``--templates DIR``) in any format, Moodle
  included: one line naming the template, its line and what went wrong,
  exit 2, nothing written;
* whole numbers of more digits than Python converts to or from text: our
  message, naming the field and the limit;
* Ctrl-C during a parallel build stops every worker, writes nothing, exits 130.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common import one_line_error
from worksheet.policy.integer_text import digit_limit, digits, shown

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
# format -> (template file, the line after which a failing expression is put)
PLACES = {
    "md": ("md/document.md.j2", "{% block doc scoped %}"),
    "tex": ("tex/document.tex.j2", "((* block doc scoped *))"),
    "pdf": ("tex/document.tex.j2", "((* block doc scoped *))"),
    "html": ("html/document.html.j2", "{% block doc scoped %}"),
    "moodle": ("moodle/question.html.j2", None),
    "moodle-feedback": ("moodle/feedback.html.j2", None),
}
FAILURES = {
    "division": ("{{ 1/0 }}", "((( 1/0 )))", "ZeroDivisionError"),
    "undefined": ("{{ no_such_name }}", "((( no_such_name )))", "'no_such_name' is undefined"),
    "syntax": ("{% if %}", "((* if *))", "Expected an expression"),
    "bad call": ("{{ range(1, 2, 3, 4) }}", "((( range(1, 2, 3, 4) )))", "TypeError"),
}


def broken_templates(tmp_path: Path, fmt: str, failure: str) -> tuple[Path, Path, int]:
    """A copy of templates/ with ``failure`` put into the template of ``fmt``:
    the copy, the broken file and the line the failure is on."""
    mine = tmp_path / "mine"
    shutil.copytree(TEMPLATES, mine)
    name, after = PLACES[fmt]
    path = mine / name
    lines = path.read_text(encoding="utf-8").splitlines()
    jinja, tex, _ = FAILURES[failure]
    code = tex if name.startswith("tex/") else jinja
    at = lines.index(after) + 1 if after else len(lines)
    lines.insert(at, code)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return mine, path, at + 1


@pytest.mark.parametrize("failure", list(FAILURES))
@pytest.mark.parametrize("fmt", list(PLACES))
def test_a_broken_template_in_any_format_is_one_line_naming_template_and_line(runner, cli, tmp_path, fmt, failure):
    mine, path, line_no = broken_templates(tmp_path, fmt, failure)
    out = tmp_path / "out"
    r = runner.invoke(cli, ["build", "--format", fmt.split("-")[0], "--templates", str(mine), "-o", str(out)])
    line = one_line_error(r)
    assert path.name in line, line
    assert f"line {line_no}" in line, line
    assert FAILURES[failure][2] in line, line
    assert not out.exists() or not any(out.iterdir())


def test_a_broken_moodle_template_with_variants_on_two_processes_is_one_line(runner, cli, tmp_path):
    mine, path, line_no = broken_templates(tmp_path, "moodle-feedback", "division")
    r = runner.invoke(
        cli,
        [
            "build",
            "softmax-scaling",
            "--variants",
            "30",
            "--jobs",
            "2",
            "--format",
            "moodle",
            "--templates",
            str(mine),
            "-o",
            str(tmp_path / "out"),
        ],
    )
    line = one_line_error(r)
    assert path.name in line and f"line {line_no}" in line and not (tmp_path / "out").exists()


# ---------------------------------------------------------------- numbers too long to print
BIG = "9" * (digit_limit() + 700) if digit_limit() else None
needs_limit = pytest.mark.skipif(BIG is None, reason="this Python converts integers of any length")


def limit_message(line: str, field: str) -> None:
    assert field in line, line
    assert f"a whole number of {len(BIG)} digits, more than the limit of {digit_limit()} digits" in line, line
    assert "sys.set_int_max_str_digits" not in line and len(line) < 300


@needs_limit
@pytest.mark.parametrize(
    "suffix, body, field",
    [
        (".json", '{"X": [[1, BIG], [0, 1]]}', "X"),
        (".toml", "X = [[1, BIG], [0, 1]]\n", "X"),
        (".json", '{"X": [[1, 0], [0, 1]], "causal": BIG}', "causal"),
        (".toml", 'X = [[1, 0], [0, 1]]\ntokens = ["a", "b"]\nd_k = BIG\n', "d_k"),
    ],
)
def test_a_too_long_number_in_an_input_file_names_the_field_and_the_limit(runner, cli, tmp_path, suffix, body, field):
    path = tmp_path / f"in{suffix}"
    path.write_text(body.replace("BIG", BIG), encoding="utf-8")
    r = runner.invoke(cli, ["solve", "self-attention-basic", "-i", str(path)])
    line = one_line_error(r)
    limit_message(line, field)
    assert str(path) in line


@needs_limit
def test_a_too_long_number_in_a_spec_names_the_key_and_line(runner, cli, tmp_path):
    spec = tmp_path / "exam.toml"
    spec.write_text(f'title = "Quiz"\nseed = {BIG}\n[[sections]]\nkind = "attention"\n', encoding="utf-8")
    r = runner.invoke(cli, ["build", "--spec", str(spec), "-o", str(tmp_path / "o")])
    line = one_line_error(r)
    limit_message(line, "seed")
    assert "line 2" in line


@needs_limit
def test_a_too_long_number_in_an_answer_file_and_a_key_names_the_field(runner, cli, tmp_path):
    out = tmp_path / "key"
    assert runner.invoke(cli, ["build", "softmax-scaling", "--format", "json", "-o", str(out)]).exit_code == 0
    answers = tmp_path / "a.toml"
    answers.write_text(f"softmax_raw = [[{BIG}, 0]]\n", encoding="utf-8")
    limit_message(
        one_line_error(runner.invoke(cli, ["check", str(out / "worksheet.json"), str(answers)])), "softmax_raw"
    )
    key = tmp_path / "bad.json"
    key.write_text('{"problems": [{"kind": "softmax-scaling", "seed": ' + BIG + "}]}", encoding="utf-8")
    limit_message(one_line_error(runner.invoke(cli, ["check", str(key), str(answers)])), "seed")


@needs_limit
@pytest.mark.parametrize("option", ["--seq-len", "--seed", "--variants", "--d-k"])
def test_a_too_long_number_given_as_an_option_names_the_option(runner, cli, tmp_path, option):
    r = runner.invoke(cli, ["build", option, BIG, "-o", str(tmp_path / "o")])
    limit_message(one_line_error(r), option)


@needs_limit
def test_a_too_long_number_in_a_problem_setting_is_shown_short(runner, cli, tmp_path):
    r = runner.invoke(cli, ["build", f"attention:seq-len={BIG}", "-o", str(tmp_path / "o")])
    line = one_line_error(r)
    assert "seq_len" in line and len(line) < 200


def test_digits_and_shown_never_convert_a_long_integer():
    n = 10**20000
    assert digits(n) == 20001 and digits(-n + 1) == 20000 and digits(0) == 1 and digits(9) == 1
    assert shown(n) == "a whole number of 20001 digits"
    assert shown([n]) == "a list holding a number too long to print"
    loop: list = []
    loop.append(loop)
    assert len(shown(loop)) <= 60


# ---------------------------------------------------------------- Ctrl-C during a parallel build
def _ctrl_c_live() -> None:
    """In the child: Ctrl-C as in a terminal.  A process started in the
    background by a non-interactive shell (``pytest ... &``) ignores SIGINT,
    and its children inherit that; a user's foreground command does not."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(") ")[-1][:1] not in ("Z", "X")
    except OSError:
        return False


# Each worker, on taking its first chunk of variants, says so (a file named
# after its process id) and waits for the test's "go": so the test signals
# while both workers are certainly busy, whatever the machine's speed or load.
GATED = """
import os, sys, time
from worksheet.build import variants as v
chunk = v._chunk
def gated(job, ks):
    open(os.path.join({ready!r}, str(os.getpid())), "w").close()
    while not os.path.exists({go!r}):
        time.sleep(0.01)
    return chunk(job, ks)
v._chunk = gated
from worksheet.cli import main
main(sys.argv[1:])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process states from /proc")
def test_ctrl_c_during_a_parallel_build_stops_every_worker_writes_nothing_and_exits_130(tmp_path):
    out, ready, go = tmp_path / "out", tmp_path / "ready", tmp_path / "go"
    ready.mkdir()
    code = GATED.format(ready=str(ready), go=str(go))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "build",
            "attention",
            "--variants",
            "2000",
            "--jobs",
            "2",
            "--format",
            "md,json",
            "-o",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_ctrl_c_live,
    )
    try:
        for _ in range(15000):  # poll until both workers are inside a chunk (counted waits, no clock)
            if proc.poll() is not None or len(list(ready.iterdir())) >= 2:
                break
            time.sleep(0.02)
        workers = [int(p.name) for p in ready.iterdir()]
        assert len(workers) == 2 and proc.poll() is None, "the parallel build started no workers"
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
        go.touch()
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert [line for line in err.decode().splitlines() if line.strip()] == ["error: interrupted"]
    for _ in range(6000):  # counted waits, no clock
        if not any(_alive(w) for w in workers):
            break
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)
    assert not out.exists() or list(out.iterdir()) == []  # no file, not even a temporary one
