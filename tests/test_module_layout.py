"""The exact layer and the step builders are split one job per module; the
names the kinds use stay where they look for them."""

import ast
from pathlib import Path

import numpy as np

import worksheet
from worksheet import exact
from worksheet.steps import scaled_dot_product as blocks
from worksheet.steps.float_check import given_value

KINDS = Path(worksheet.__file__).parent / "kinds"


def test_every_blocks_name_a_kind_uses_is_exported_by_blocks():
    used = set()
    for path in KINDS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "blocks":
                used.add(node.attr)
    assert used, "the kinds reach the blocks as blocks.<name>"
    assert used <= set(blocks.__all__)
    assert all(hasattr(blocks, name) for name in blocks.__all__)


def test_constructors_and_their_memo_tables_exist_once():
    from worksheet.exact import tree

    for name in ("add", "mul", "power", "exp"):
        assert getattr(exact, name) is getattr(tree, name)
    assert exact.add.table is tree.add.table
    assert exact.add(1, exact.exp(-1)) is tree.add(1, exact.exp(-1))  # one table, one shared result


def test_an_expression_reaches_its_constructors_float_and_text_through_the_modules_above():
    from worksheet.exact import nodes, numeric, printing, tree

    ops = nodes.OPERATIONS
    assert (ops.add, ops.mul, ops.power, ops.to_float, ops.to_str) == (
        tree.add,
        tree.mul,
        tree.power,
        numeric.to_float,
        printing.to_str,
    )
    x = exact.exp(-1)
    assert str(1 - x) == "1 - exp(-1)" and float(x / 2) == float(x) / 2


def test_unknown_name_of_exact_is_an_attribute_error():
    try:
        exact.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:  # pragma: no cover
        raise AssertionError("exact.no_such_name should not exist")


def test_given_value_takes_the_given_step_and_computes_only_otherwise():
    calls = []

    def compute():
        calls.append(1)
        return np.zeros(2)

    given = {"scores": np.ones(2)}
    assert given_value(given, "scores", compute) is given["scores"]
    assert calls == []
    assert (given_value(given, "weights", compute) == 0).all()
    assert calls == [1]


def test_np_attention_carries_a_given_step_forward():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(2, 3)) for _ in range(3))
    scores = np.array([[0.0, 1.0], [2.0, 0.0]])
    out = blocks.np_attention(Q, K, V, given={"scores": scores})
    assert out["scores"] is scores
    np.testing.assert_allclose(out["scaled"], scores / np.sqrt(3))
    np.testing.assert_allclose(out["weights"].sum(axis=1), 1.0)
