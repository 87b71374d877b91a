import os

import pytest
from hypothesis import settings

# "default" (CI and the README's command): the same examples on every run, so a
# submission passes or fails by its code, not by the draw; "explore": fresh random
# examples, more of them (HYPOTHESIS_PROFILE=explore python -m pytest), to look for
# new cases, each kept as an @example once found.
settings.register_profile("default", deadline=None, max_examples=40, derandomize=True)
settings.register_profile("explore", deadline=None, max_examples=300)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def runner():
    from click.testing import CliRunner

    return CliRunner()


@pytest.fixture
def cli():
    from worksheet.cli import main

    return main
