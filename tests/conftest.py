import os

import pytest
from hypothesis import settings

settings.register_profile("default", deadline=None, max_examples=40)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def runner():
    from click.testing import CliRunner

    return CliRunner()


@pytest.fixture
def cli():
    from worksheet.cli import main

    return main
