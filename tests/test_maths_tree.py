"""The maths tree (worksheet.solution.maths): every formula and worked line
that the kinds write reads into a tree; the three printers (LaTeX, MathML,
plain text) print every node; LaTeX printed from a tree reads back to the
same tree; user text is a text leaf that no printer turns into structure;
reading is bounded in time and memory."""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from worksheet.solution.maths import (
    MathsError,
    Row,
    Text,
    read_latex,
    substitute,
    to_latex_text,
    to_mathml_inner,
    to_text,
    walk,
)
from worksheet.solution.maths import nodes
from worksheet.solution.maths.latex import LatexPrinter
from worksheet.solution.maths.mathml import MathMLPrinter
from worksheet.solution.maths.reading import MAX_CHARS, MAX_DEPTH
from worksheet.solution.maths.plain import TextPrinter

from test_mathml import MATHML_TAGS, every_formula


@functools.cache
def formulas() -> list[str]:
    """Every formula the kinds write (built when a test first asks, not at collection in every worker)."""
    return sorted(every_formula())


def mathml_tags(inner: str) -> set[str]:
    """The tags of the MathML, which must parse as XML."""
    return {e.tag for e in ET.fromstring(f"<math>{inner}</math>").iter()}


def test_every_printer_prints_every_node():
    kinds = [
        c for c in vars(nodes).values() if isinstance(c, type) and issubclass(c, nodes.Node) and c is not nodes.Node
    ]
    assert len(kinds) >= 18
    for printer in (LatexPrinter, MathMLPrinter, TextPrinter):
        missing = [k.__name__ for k in kinds if not hasattr(printer, "_print_" + k.__name__)]
        assert not missing, (printer.__name__, missing)


def test_every_formula_the_kinds_write_reads_into_a_tree():
    assert len(formulas()) > 1000
    for latex in formulas():
        read_latex(latex)  # raises MathsError if not


def test_latex_printed_from_a_tree_reads_back_to_the_same_tree():
    for latex in formulas():
        tree = read_latex(latex)
        assert read_latex(to_latex_text(tree)) == tree, latex


def test_every_formula_is_well_formed_mathml_of_mathml_tags_only():
    for latex in formulas():
        assert mathml_tags(to_mathml_inner(read_latex(latex))) <= MATHML_TAGS, latex


def test_plain_text_has_no_dollar_and_no_backslash():
    for latex in formulas():
        text = to_text(read_latex(latex))
        assert "\\\\" not in text and "$" not in text and text.strip() == text, latex
        assert not re.search(r"[{}]", text) or "\\\\{" in latex, (latex, text)


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"\alpha_{12} = \frac{e^{0}}{e^{0} + e^{-1}} \approx 0.7311", "α₁₂ = e⁰/(e⁰ + e⁻¹) ≈ 0.7311"),
        (r"S = Q K^\top", "S = Q Kᵀ"),
        (r"S' = \frac{S}{\sqrt{d_k}}", "S′ = S/√dₖ"),
        (r"A = \operatorname{softmax}(S')", "A = softmax(S′)"),
        (r"m_{1} = \max_j s_{1j} = 3", "m₁ = maxⱼ s₁ⱼ = 3"),
        (r"h_{1,2} = o_{1,2} \tanh(c_{1,2}) \to 0.63", "h_(1,2) = o_(1,2) tanh(c_(1,2)) → 0.63"),
        (r"k_{11} = 1 \cdot (-1) + 2 \cdot 0 = -1", "k₁₁ = 1 ⋅ (−1) + 2 ⋅ 0 = −1"),
        (r"z = \begin{bmatrix} 40 & 56 \end{bmatrix}", "z = [40, 56]"),
        (r"\hat{y} = \operatorname{arg}\max_j \, p_j", "ŷ = arg maxⱼ pⱼ"),
    ],
)
def test_plain_text_reads_like_maths(latex, text):
    assert to_text(read_latex(latex)) == text


def test_renaming_a_symbol_is_substitution_on_its_nodes():
    tree = read_latex(r"s_{12} = q_1 \cdot k_2 \quad \text{(s is a score)}")
    s, t = nodes.Ident("s"), nodes.Ident("t")
    renamed = substitute(tree, lambda n: t if n == s else None)
    assert to_latex_text(renamed) == r"t_{12} = q_{1} \cdot k_{2} \quad \text{(s is a score)}"  # words keep their s
    assert s not in list(walk(renamed)) and t in list(walk(renamed))


def _plain_rename(n, rule, atom=True):
    """A renaming rule applied top down with no memo, no skipping and every node rebuilt:
    the plain reading of block_symbols' docstring, to hold the fast one to."""
    import dataclasses

    if atom or type(n) is not nodes.Ident:
        new = rule(n)
        if new is not None:
            return new
    kind = type(n)
    if kind is Row:
        items = []
        for c in n.items:
            new = _plain_rename(c, rule)
            items.extend(new.items if type(new) is Row and type(c) is not Row else (new,))
        return Row(tuple(items))
    if kind is nodes.Script:
        return nodes.Script(
            _plain_rename(n.base, rule, False),
            None if n.sub is None else _plain_rename(n.sub, rule),
            None if n.sup is None else _plain_rename(n.sup, rule, False),
        )
    if kind is nodes.Frac:
        return nodes.Frac(_plain_rename(n.num, rule), _plain_rename(n.den, rule))
    if kind is nodes.Table:
        return nodes.Table(tuple(tuple(_plain_rename(c, rule) for c in r) for r in n.rows), n.kind)
    if kind in (nodes.Sqrt, nodes.Fence):
        return dataclasses.replace(n, body=_plain_rename(n.body, rule))
    return n


@pytest.mark.parametrize("block", ["encoder-block", "decoder-block"])
def test_a_blocks_renaming_is_each_rule_in_turn_and_keeps_what_it_leaves(block, monkeypatch):
    """A block renames a part's lines with one Renaming (a memo shared by the lines, and
    rules skipped for lines without their symbols): the same trees as each rule applied
    in turn, from scratch; and a line no rule touches is the very node it was."""
    import numpy as np

    from worksheet.kinds import block_symbols, chain, registry

    copied = []  # (the part's lines, the block's rules for them), as chain.copy is given them
    original = chain.copy

    def spy(p, sub, *args, symbols=(), **kwargs):
        lines = [x for s in sub.steps for x in (s.formula, *s.work, s.symbol) if isinstance(x, nodes.Node)]
        copied.append((lines, symbols))
        return original(p, sub, *args, symbols=symbols, **kwargs)

    monkeypatch.setattr(chain, "copy", spy)
    module = registry.get(block)
    module.solve(dict(module.generate(np.random.default_rng(5), module.Params())), module.Params())
    checked = kept = 0
    for lines, rules in copied:
        renaming = block_symbols.Renaming(rules)
        for line in lines:
            slow = line
            for rule in rules:
                slow = _plain_rename(slow, rule)
            fast = renaming(line)
            assert fast == slow
            if slow == line:
                assert fast is line
                kept += 1
            checked += 1
    assert len(copied) >= 4 and checked > 100 and 0 < kept < checked


# ---------------------------------------------------------------- user text is a leaf

LABEL = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)


@given(LABEL)
@example("<mtr>")
@example("\\text{x}")
@example("}{\\frac")
@example("a_b^c & 50%")
def test_a_text_leaf_is_its_own_characters_in_every_printer(s):
    tree = Row((nodes.Ident("x"), nodes.Rel("="), Text(s)))
    assert read_latex(to_latex_text(tree)) == tree  # LaTeX escapes it, and reading gives the characters back
    inner = to_mathml_inner(tree)
    mtexts = [e for e in ET.fromstring(f"<math>{inner}</math>").iter() if e.tag == "mtext"]
    assert (
        len(mtexts) == 1
        and (mtexts[0].text or "").replace("\u00a0", " ") == s.replace("\u00a0", " ")
        and len(mtexts[0]) == 0
    )
    assert to_text(tree).endswith(s.strip())


# ---------------------------------------------------------------- bounded and strict


def test_reading_is_bounded():
    with pytest.raises(MathsError, match="nested"):
        read_latex("{" * (MAX_DEPTH + 5) + "x" + "}" * (MAX_DEPTH + 5))
    with pytest.raises(MathsError, match="characters"):
        read_latex("x" * (MAX_CHARS + 1))


@pytest.mark.parametrize(
    "latex",
    [
        r"\href{javascript:x}{y}",
        r"\input{/etc/passwd}",
        r"\frac{1}",
        r"\left( x",
        "x_{1",
        "a & b",
        r"\begin{tabular} x \end{tabular}",
        "x^1^2",
        "@",
    ],
)
def test_what_we_do_not_print_is_refused_with_its_place(latex):
    with pytest.raises(MathsError, match="character"):
        read_latex(latex)


TOKENS = [
    "a",
    "x",
    "1",
    "12",
    "-2",
    "0.25",
    "(",
    ")",
    "(-1)",
    r"\frac{1}{2}",
    r"\frac{a}{1 + b}",
    "e^{-1}",
    r"e^{-\frac{1}{2}}",
    "x_{1}",
    r"\alpha_{1k}",
    r"\sqrt{3}",
    r"\sqrt{1 + 0}",
    "+",
    "-",
    "=",
    r"\cdot",
    r"\approx",
    r"\left(",
    r"\right)",
    "^2",
    "_{i}",
    "'",
    r"\sum_k",
    r"\max_j",
    r"\,",
    r"\quad",
    " ",
    " ",
    r"\begin{bmatrix} 1 & -2 \\ 0.5 & x \end{bmatrix}",
    r"\text{tok}",
    ",",
    r"\sin\left(1\right)",
    "s'_{13}",
    "W^Q_{:,2}",
    r"\hat{x}_{12}",
    r"\mathrm{PE}_{1,2}",
    r"\{",
    r"\}",
    r"\infty",
    "k^{(1)}_{12}",
    "{b_1}_{2}",
]


@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=12))
@example(["(", "(-1)", ")", "^2"])
@example([r"\frac{1}{2}", r"\left(", "a", "+", "1", r"\right)"])
def test_any_formula_of_these_pieces_reads_and_prints_in_every_format(tokens):
    """A formula made of the shapes the kinds write, in any order: it is
    refused with a MathsError, or it prints as well-formed MathML, as LaTeX
    that reads back to it, and as text with no backslash."""
    latex = "".join(tokens) if len(tokens) % 2 else " ".join(tokens)
    try:
        tree = read_latex(latex)
    except MathsError:
        return
    assert mathml_tags(to_mathml_inner(tree)) <= MATHML_TAGS
    assert read_latex(to_latex_text(tree)) == tree
    assert "\\" not in to_text(tree)


def test_a_formulas_width_counts_a_fraction_once_not_its_two_parts():
    """The HTML's print size (display long/longer) comes from the width on the tree: a
    stacked fraction is as wide as its wider part, not as long as its LaTeX."""
    from worksheet.solution.maths.printer import width

    stacked = read_latex(r"\frac{e^{-1.1181}}{1 + e^{-1.1181} + e^{-3.6959}}")
    inline = read_latex(r"e^{-1.1181} / (1 + e^{-1.1181} + e^{-3.6959})")
    assert width(stacked) < 0.75 * width(inline)
    assert width(read_latex("x + y")) < width(read_latex("x + y + z + w"))


# ---------------------------------------------------------------- shared nodes


def test_plain_symbols_and_powers_are_shared_nodes_and_irrational_values_are_not():
    """A symbol's entries, a power, a summation sign and a named operator with plain parts
    are one node wherever they are made, so each is printed once (its LaTeX and MathML
    kept on it); a power of an irrational exact value is made afresh, since two equal
    exact values may print differently."""
    from fractions import Fraction

    from worksheet.exact import exp, sqrt
    from worksheet.solution.maths import build as m
    from worksheet.solution.maths.latex import to_latex_text
    from worksheet.solution.maths.mathml import to_mathml_inner

    assert m.entry("s", 0, 1) is m.entry("s", 0, 1) and m.entry("s", 0, 1) is not m.entry("s", 1, 0)
    assert m.power("e", nodes.Value(Fraction(-1, 4))) is m.power("e", nodes.Value(Fraction(-1, 4)))
    assert m.total("k") is m.total("k") and m.named("max", "j") is m.named("max", "j")
    for x in (exp(Fraction(1, 2)), sqrt(2)):
        assert m.power("e", nodes.Value(x)) is not m.power("e", nodes.Value(x))
    shared = m.power("e", m.line(m.entry("s", 0, 1), "-", m.sym("m")))
    first = to_latex_text(shared), to_mathml_inner(shared)
    assert shared.latex == first[0] and shared.mathml is not None
    assert (to_latex_text(shared), to_mathml_inner(shared)) == first


def test_a_row_begun_by_a_head_prints_as_its_atoms_do():
    """A line whose first part is a row keeps it as its head (printed once, its LaTeX
    reused by every line it begins): on every line of every kind, the head is a prefix
    of the line's atoms and the line prints as the same atoms without a head do."""
    from worksheet import kinds as registry
    from worksheet.build import build_document
    from worksheet.solution.maths.build import line, sym
    from worksheet.solution.maths.latex import to_latex_text

    head = line(sym("a", sub=(1, 1), sup="z"), "=", sym("b"), "+")
    for x in ("-", "2"):  # a sign after the head's operator: spaced as without the head
        row = line(head, x, "1")
        assert row.head is head and to_latex_text(row) == to_latex_text(Row(row.items))
    seen = 0
    for kind in registry.names():
        for p in build_document([kind], seed=3).problems:
            for s in p.steps:
                for r in (s.formula, *s.work):
                    if isinstance(r, Row) and r.head is not None:
                        seen += 1
                        assert r.items[: len(r.head.items)] == r.head.items
                        assert to_latex_text(r) == to_latex_text(Row(r.items))
    assert seen > 20  # (the recurrent cells' worked lines among them)
