"""Build: from a spec to files.  The library behind ``worksheet build`` and
``worksheet solve``; the CLI only parses options and calls these.

* :mod:`.spec` -- :class:`ProblemSpec` (``KIND:key=value``) and exam spec files;
* :mod:`.plan` -- :func:`resolve_build` (spec file versus command-line options);
* :mod:`.sheets` -- problems and sheets from a seed (:func:`build_document`),
  and a user's own numbers solved (:func:`solve_table`, :func:`solve_file`);
* :mod:`.output` -- file names, rendering into files, writing them, the PDF path;
* :mod:`.variants` -- variants, one per student, built on every core.

May import every layer below: policy, exact, solution, parse, steps, kinds,
check and render.  The names below are the package's face (``from
worksheet.build import build_document``).
"""

from .output import (
    Rendered,
    output_names,
    planned_files,
    render_document,
    render_documents,
    variant_id,
    variants_csv,
    write_document,
    write_documents,
    write_rendered,
)
from .sheets import (
    build_document,
    check_problems,
    check_seed,
    make_problem,
    problem_rng,
    solve_example,
    solve_file,
    solve_inputs,
    solve_table,
)
from .plan import BuildPlan, resolve_build
from .spec import DEFAULT_KINDS, ProblemSpec
from .variants import (
    VariantPlan,
    build_variants,
    count_of_key,
    default_jobs,
    find_variant,
    render_variant,
    render_variants,
    variant_seed,
)

__all__ = [
    "DEFAULT_KINDS",
    "BuildPlan",
    "ProblemSpec",
    "resolve_build",
    "check_seed",
    "check_problems",
    "problem_rng",
    "make_problem",
    "build_document",
    "variant_id",
    "solve_inputs",
    "solve_file",
    "solve_example",
    "solve_table",
    "Rendered",
    "output_names",
    "planned_files",
    "render_document",
    "render_documents",
    "variants_csv",
    "write_document",
    "write_documents",
    "write_rendered",
    "VariantPlan",
    "build_variants",
    "default_jobs",
    "render_variants",
    "variant_seed",
    "render_variant",
    "find_variant",
    "count_of_key",
]
