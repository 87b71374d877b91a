"""A non-editable install of the wheel (templates inside) builds a worksheet."""

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(os.environ.get("WORKSHEET_SKIP_INSTALL_TEST") == "1", reason="asked to skip")
def test_wheel_install_builds_a_worksheet(tmp_path):
    src = tmp_path / "src"
    junk = shutil.ignore_patterns(".git", "output", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache")

    def ignore(folder, names):  # build/ and dist/ of a packaging run, not the package worksheet.build
        return junk(folder, names) | ({"build", "dist"} & set(names) if Path(folder) == ROOT else set())

    shutil.copytree(ROOT, src, ignore=ignore)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # numpy, sympy, jinja2 and click come from the environment running the tests
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    outer = [p for p in sys.path if p.endswith("site-packages")]
    Path(site, "outer-env.pth").write_text("\n".join(outer) + "\n")
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # the distribution is ours alone (the index's "worksheet" is another project); command and import stay worksheet
    r = subprocess.run(
        [
            str(py),
            "-c",
            "import importlib.metadata as m; d = m.distribution('attention-worksheet'); "
            "print(d.metadata['Name'], [e.name for e in d.entry_points if e.group == 'console_scripts'])",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and r.stdout.split() == ["attention-worksheet", "['worksheet']"], r.stderr
    out = tmp_path / "run"
    out.mkdir()
    r = subprocess.run(
        [str(env_dir / "bin" / "worksheet"), "build", "--format", "md,tex"], cwd=out, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert (out / "output" / "worksheet-key.md").read_text().startswith("# Scaled dot-product attention")
    r = subprocess.run(
        [str(py), "-c", "import worksheet.render.base as b; print(b.default_templates())"],
        cwd=out,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "site-packages" in r.stdout
    # the examples ship inside the package: 'worksheet examples' copies them out
    r = subprocess.run(
        [str(env_dir / "bin" / "worksheet"), "examples", "course"], cwd=out, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert (out / "course" / "midterm.toml").is_file() and (out / "course" / "answers.toml").is_file()
