"""What lstm-cell and gru-cell share and test the same way: every format
builds at one to three time steps, and the golden files at one and two steps."""

import pytest

from kinds_util import check_golden
from recurrent_util import every_format_builds

KINDS = ["lstm-cell", "gru-cell"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_format_builds_at_one_to_three_steps(runner, cli, tmp_path, kind):
    every_format_builds(runner, cli, kind, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_golden_files(kind):
    check_golden(kind, [kind])


@pytest.mark.parametrize("kind", KINDS)
def test_golden_files_two_steps(kind):
    check_golden(f"{kind}/steps-2", [f"{kind}:steps=2"])
