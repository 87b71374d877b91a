"""The JSON writer (worksheet.render.json.dumps) is json.dumps(indent=1,
ensure_ascii=False), byte for byte, only faster."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from worksheet.render.json import Raw, dumps, variant_text, variants_text

leaves = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False, allow_infinity=False)
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_dumps_is_json_dumps_with_indent_1(obj):
    assert dumps(obj) == json.dumps(obj, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(leaves, max_size=5), max_size=5))
def test_matrices_and_empty_rows(matrix):
    obj = {"exact": matrix, "value": [matrix, []]}
    assert dumps(obj) == json.dumps(obj, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def test_variants_encoded_apart_then_joined_are_the_whole():
    from worksheet.build import build_variants
    import hashlib

    from worksheet.render.json import fingerprint, problem

    docs = build_variants(["attention", "layer-norm"], 2, seed=3)
    variants = [
        {"id": d.variant, "seed": d.seed, "fingerprint": fingerprint(ps), "problems": ps}
        for d in docs
        for ps in [[problem(p) for p in d.problems]]
    ]
    whole = {
        "title": docs[0].title,
        "numbers": docs[0].numbers,
        "fingerprint": hashlib.sha256(" ".join(v["fingerprint"] for v in variants).encode()).hexdigest()[:12],
        "variants": variants,
    }
    joined = variants_text(docs[0], [variant_text(d) for d in docs])
    assert joined == json.dumps(whole, indent=1, ensure_ascii=False) + "\n"
    assert isinstance(variant_text(docs[0]), Raw)
