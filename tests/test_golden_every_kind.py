"""Every output file of one problem per kind, at a fixed seed, against its golden
copy (tests/golden/every-kind/): the student sheet and the key in md, tex and
html, the JSON key and the Moodle bank.  Text is compared exactly; the floats of
the JSON and the Moodle answers within rel 1e-12 (golden_util), although they
are byte-identical on every machine too (tests/test_same_bytes.py).

Regenerate after an intended change with WORKSHEET_UPDATE_GOLDEN=1 and read the
diff before committing it (in a commit of its own, starting ``goldens:``).
"""

from pathlib import Path

import pytest

import golden_util
from worksheet import kinds
from worksheet.build import build_document, render_document

GOLDEN = Path(__file__).parent / "golden" / "every-kind"
FORMATS = ["md", "tex", "html", "json", "moodle"]
SEED = 1


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    """All files of one document with one default problem of every kind."""
    doc = build_document(kinds.names(), seed=SEED)
    return render_document(doc, FORMATS, name="every-kind")


def test_every_format_and_role_is_there(files):
    assert sorted(files) == sorted(
        [
            "every-kind.md",
            "every-kind-key.md",
            "every-kind.tex",
            "every-kind-key.tex",
            "every-kind.html",
            "every-kind-key.html",
            "every-kind.json",
            "every-kind-moodle.xml",
        ]
    )
    assert [p["kind"] for p in __import__("json").loads(files["every-kind.json"])["problems"]] == kinds.names()


@pytest.mark.parametrize(
    "name",
    [
        "every-kind.md",
        "every-kind-key.md",
        "every-kind.tex",
        "every-kind-key.tex",
        "every-kind.html",
        "every-kind-key.html",
        "every-kind.json",
        "every-kind-moodle.xml",
    ],
)
def test_file_equals_its_golden_copy(files, name):
    golden_util.check(GOLDEN / name, files[name])
