"""Both .tex files compile with pdflatex (fails, not skips, under
WORKSHEET_REQUIRE_LATEX=1), including non-ASCII token labels."""

import pytest

from latex_util import compile_tex, overfull_points
from worksheet.build import build_document, write_document


@pytest.mark.parametrize("options", [{}, {"causal": True, "seq_len": 5}, {"numbers": "calculator", "d_k": 3}])
def test_sheet_and_key_compile(tmp_path, options):
    doc = build_document(["attention"], seed=3, options=options)
    write_document(doc, ["tex"], tmp_path)
    for name in ("worksheet.tex", "worksheet-key.tex"):
        log = compile_tex(tmp_path / name)
        assert (tmp_path / name).with_suffix(".pdf").stat().st_size > 1000
        assert all(w <= 10 for w in overfull_points(log)), overfull_points(log)


def test_labels_with_accents_and_apostrophes_compile(tmp_path):
    from worksheet.build import solve_table
    from worksheet.solution.document import Document
    from worksheet.render import get

    p = solve_table(
        "attention",
        {
            "Q": [[1, 0], [0, 1], [1, 1]],
            "K": [[1, 0], [0, 1], [1, 1]],
            "V": [[1], [2], [3]],
            "tokens": ["étudiant", "didn't", "a_b & 50%"],
        },
    )
    f = tmp_path / "labels.tex"
    f.write_text(get("tex").render(Document("Épreuve", [p]), key=True), encoding="utf-8")
    compile_tex(f)
