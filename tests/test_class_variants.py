"""As many variants as a class needs (issue 19 §3): every kind in hand mode
supplies at least 200 different variants at its default size; the shipped
midterm builds 40 and 200; a spec that asks for more than a kind can supply is
told which section, which kind and how many, with a hand-mode change first;
``--variant v17`` (or the seed printed on its sheet) rebuilds exactly that
variant's files.

The counts draw with each kind's generator only (no solving, no rendering),
exactly as the variant builder draws: variant k's problem from the seed
``variant_seed(seed, k, attempt)``, drawn again (the next attempt) while it
repeats an earlier variant's numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from common import one_line_error
from worksheet import kinds
from worksheet.build import problem_rng
from worksheet.exact import key as exact_key
from worksheet.build.spec import load_spec
from worksheet.build.variants import MAX_VARIANT_TRIES, variant_seed

ROOT = Path(__file__).resolve().parent.parent
MIDTERM = ROOT / "examples" / "midterm.toml"


def _key(inputs: dict) -> tuple:
    return tuple((n, tuple(tuple(exact_key(x) for x in row) for row in m)) for n, m in sorted(inputs.items()))


def distinct_variants(kind: str, options: dict, count: int, *, seed: int = 1, index: int = 0) -> int:
    """How many of ``count`` variants the builder's draws give different numbers to (stops at the
    first variant that finds no new numbers in MAX_VARIANT_TRIES attempts)."""
    module = kinds.get(kind)
    params = module.Params.from_options({"numbers": "hand", **options})
    seen: set = set()
    for k in range(1, count + 1):
        for attempt in range(MAX_VARIANT_TRIES):
            inputs = module.generate(problem_rng(variant_seed(seed, k, attempt), index), params)
            key = _key(inputs)
            if key not in seen:
                seen.add(key)
                break
        else:
            return len(seen)
    return len(seen)


@pytest.mark.parametrize("kind", kinds.names())
def test_every_kind_supplies_200_different_hand_mode_variants_at_its_default_size(kind):
    assert distinct_variants(kind, {}, 200) == 200


def test_the_midterms_sections_supply_200_different_variants():
    spec = load_spec(MIDTERM)
    for i, section in enumerate(spec.sections):
        assert distinct_variants(section.kind, dict(section.params), 200, seed=spec.seed, index=i) == 200, section.kind


def test_the_shipped_midterm_builds_40_variants(tmp_path, runner, cli):
    r = runner.invoke(
        cli, ["build", "--spec", str(MIDTERM), "--variants", "40", "--format", "json", "-o", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "midterm.json").read_text(encoding="utf-8"))
    assert [v["id"] for v in data["variants"]] == [f"v{k:02d}" for k in range(1, 41)]


def test_asking_for_more_variants_than_a_kind_supplies_names_section_kind_and_count(tmp_path, runner, cli):
    spec = tmp_path / "few.toml"
    spec.write_text(
        '[[sections]]\nkind = "attention"\n\n[[sections]]\nkind = "self-attention-basic"\nseq_len = 1\nd_model = 2\n',
        encoding="utf-8",
    )
    r = runner.invoke(
        cli, ["build", "--spec", str(spec), "--variants", "40", "--format", "json", "-o", str(tmp_path / "out")]
    )
    line = one_line_error(r)
    m = re.search(r"sections\[2\] \(self-attention-basic\) can supply only (\d+) different variants", line)
    assert m and 0 < int(m.group(1)) < 40 and "not 40" in line, line
    hand, calculator = line.index("keep hand mode with a larger size"), line.index("calculator")
    assert hand < calculator  # a change that keeps hand mode comes first
    assert not (tmp_path / "out").exists()


def test_one_variant_is_rebuilt_byte_for_byte_from_its_id_or_its_seed(tmp_path, runner, cli):
    fmts = "md,tex,json,moodle"
    args = ["build", "--spec", str(MIDTERM), "--variants", "12", "--format", fmts]
    assert runner.invoke(cli, [*args, "--split", "-o", str(tmp_path / "all")]).exit_code == 0
    r = runner.invoke(cli, [*args, "--variant", "v07", "-o", str(tmp_path / "one")])
    assert r.exit_code == 0, r.output
    one = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert one == sorted(
        [
            "midterm-v07.md",
            "midterm-v07-key.md",
            "midterm-v07.tex",
            "midterm-v07-key.tex",
            "midterm-v07.json",
            "midterm-v07-moodle.xml",
        ]
    )
    for name in one:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "all" / name).read_bytes(), name
    # the seed printed on variant 9's sheet rebuilds variant 9
    sheet = (tmp_path / "all" / "midterm-v09.md").read_text(encoding="utf-8")
    printed = re.search(r"\*\*Seed:\*\* (\d+)", sheet).group(1)
    r = runner.invoke(cli, [*args[:-2], "--format", "md", "--variant", printed, "-o", str(tmp_path / "nine")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "nine" / "midterm-v09.md").read_bytes() == sheet.encode("utf-8")


def test_a_redrawn_variant_is_rebuilt_as_the_build_redrew_it(tmp_path, runner, cli):
    """self-attention-basic at 2 x 2 repeats itself often: variants drawn again must come back the same."""
    args = ["build", "self-attention-basic:seq-len=2,d-model=2", "--variants", "60", "--format", "json"]
    assert runner.invoke(cli, [*args, "--split", "-o", str(tmp_path / "all")]).exit_code == 0
    from worksheet.build.variants import variant_seed as vs

    seeds = {
        json.loads((tmp_path / "all" / f"worksheet-v{k:02d}.json").read_text())["variants"][0]["seed"]: k
        for k in range(1, 61)
    }
    redrawn = [k for s, k in seeds.items() if s != vs(1, k)]
    assert redrawn  # the case this test is about
    k = redrawn[-1]
    r = runner.invoke(cli, [*args, "--variant", f"v{k:02d}", "-o", str(tmp_path / "one")])
    assert r.exit_code == 0, r.output
    name = f"worksheet-v{k:02d}.json"
    assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "all" / name).read_bytes()


@pytest.mark.parametrize(
    "args, message",
    [
        (["attention", "--variant", "v01"], "--variant needs --variants N"),
        (["attention", "--variants", "5", "--variant", "v06"], "there are 5 variants (v01 … v05)"),
        (["attention", "--variants", "5", "--variant", "x7"], "give a variant id"),
        (["attention", "--variants", "5", "--variant", "123456"], "none of the 5 variants"),
        (["attention", "--variants", "5", "--variant", "v01", "--format", "md", "-o", "-"], "give a folder"),
    ],
)
def test_bad_variant_choices_are_one_line_errors(tmp_path, runner, cli, args, message, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_line_error(runner.invoke(cli, ["build", *args]))
    assert message in line, line
    assert not (tmp_path / "output").exists()
