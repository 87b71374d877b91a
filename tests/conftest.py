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


# ---------------------------------------------------------------- the two lanes
# `python -m pytest -m "not slow"` is the fast lane (a few minutes on 2 cores, with
# pytest-xdist's `-n auto`); `python -m pytest` runs everything, as CI does.
# Slow is what compiles LaTeX, drives Chromium or a Jupyter kernel, installs a
# wheel, runs the README's tour, or sweeps the student simulator over every kind;
# a test elsewhere marks itself with @pytest.mark.slow.
SLOW_MODULES = {
    "test_pencil",  # the student simulator over every kind and many seeds
    "test_page_layout",  # compiles every kind and reads the pages
    "test_pages",
    "test_pdf",
    "test_pdf_reproducible",
    "test_compact",
    "test_latex",
    "test_practice_browser",  # Chromium
    "test_html",
    "test_html_spacing",
    "test_notebook_display",  # a Jupyter kernel
    "test_same_bytes",  # every kind built twice in subprocesses
    "test_install",  # a wheel into a fresh venv
    "test_readme",  # the whole tour
}
SLOW_TESTS = {  # single tests of a few seconds each in otherwise quick modules
    "test_every_seed_gives_a_printable_worked_solution",
    "test_benchmark_script_runs",
    "test_examples_build_as_pdf",
    "test_any_label_adds_no_field_and_no_maths_and_is_shown",
    "test_render_variants_on_two_processes_gives_the_files_of_one",
    "test_cli_jobs_do_not_change_a_byte",
    "test_midterm_with_30_variants_is_one_file_of_cloze_questions_one_category_per_problem",
}

# sweeps over every kind in quick modules whose block cases take seconds each (a block is
# drawn by solving it): the encoder's and decoder's cases are slow, the other kinds' stay in
# the fast lane (and the blocks' own modules, test_kind_encoder_block and
# test_kind_decoder_block, stay there too)
BLOCK_SWEEPS = {
    "test_every_kind_supplies_200_different_hand_mode_variants_at_its_default_size",
    "test_no_two_variants_share_the_same_given_matrices",
    "test_no_step_is_trivial_in_every_seed",
    "test_no_worked_entry_is_trivial",
    "test_carried_steps_show_what_the_chain_gives",
}
BLOCKS = {"encoder-block", "decoder-block"}


def _slow(item) -> bool:
    module = item.module.__name__.rpartition(".")[2] if item.module else ""
    if module in SLOW_MODULES or item.originalname in SLOW_TESTS:
        return True
    params = item.callspec.params if hasattr(item, "callspec") else {}
    return item.originalname in BLOCK_SWEEPS and params.get("kind") in BLOCKS


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _slow(item):
            item.add_marker(pytest.mark.slow)
