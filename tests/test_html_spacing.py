"""HTML maths spaced as TeX spaces it (issue 18 §3): no gap between a named
operator and its parenthesis ("softmax (z)"), none before a relation that
opens a formula ("exponent  ≤ 0"), none after a square root ("√4  = 2"),
and the prime of S'_{c,1} stacked over its subscript, not beside it.

The MathML is checked as text, and, in headless Chromium, as drawn: a page
with the sheets' own style measures the boxes."""

from __future__ import annotations

import json
import re

import pytest

from worksheet.build import build_document, render_document
from worksheet.render.formulas import THIN, mathml

from test_html import run_chromium

PRIME = "\u2032"


def test_a_named_operator_has_no_space_before_its_parenthesis_nor_after_a_relation():
    out = mathml(r"A = \operatorname{softmax}(z)")
    assert "<mo>softmax</mo>" not in out
    assert '<mo>=</mo><mo lspace="0" rspace="0">softmax</mo><mo stretchy="false">(</mo>' in out
    fenced = mathml(r"\operatorname{softmax}\left(\frac{s}{2}\right)")
    assert '<mo lspace="0" rspace="0">softmax</mo><mrow><mo stretchy="true"' in fenced


def test_a_scripted_operator_keeps_a_thin_space_before_its_argument():
    out = mathml(r"m_1 = \max_j s_{1j}")
    assert f'<msub><mo lspace="0" rspace="{THIN}">max</mo><mi>j</mi></msub><msub><mi>s</mi>' in out
    # between two ordinary symbols: thin on both sides, as TeX's \mathop
    assert f'<mo lspace="{THIN}" rspace="{THIN}">max</mo>' in mathml(r"2 \max_k x")


def test_a_relation_that_opens_a_formula_has_no_space_before_it():
    assert mathml(r"\le 0") == '<math><mo lspace="0">\u2264</mo><mn>0</mn></math>'
    assert mathml(r"= 2").startswith('<math><mo lspace="0">=</mo>')
    # inside a formula a relation keeps its spaces
    assert "<mi>a</mi><mo>\u2264</mo><mn>0</mn>" in mathml(r"a \le 0")


def test_a_prime_over_a_subscript_is_stacked_with_it_on_the_base():
    out = mathml(r"S'_{c,1} = 2")
    assert out.startswith('<math><msubsup><mi>S</mi><mrow><mi>c</mi><mo rspace="0">,</mo><mn>1</mn></mrow><mpadded')
    assert PRIME in out and "<msub><mrow><mi>S</mi>" not in out
    # a prime without a subscript stays beside its base, at the base line
    assert mathml("S' = 2").startswith(f'<math><mrow><mi>S</mi><mo lspace="0" rspace="0">{PRIME}</mo></mrow>')


_MEASURE = """
<script>
function box(e) { const b = e.getBoundingClientRect(); return [b.left, b.right]; }
const m = [...document.querySelectorAll('p.t math')];
const em = parseFloat(getComputedStyle(m[0]).fontSize);
const sq = m[0].querySelector('msqrt > *'), eq0 = m[0].querySelector('mo');
const ref = m[1].querySelector('mi'), eq1 = m[1].querySelector('mo');
const op = m[2].querySelector('mo'), paren = m[2].querySelectorAll('mo')[1];
const rel = m[3].querySelector('mo');
const sub = m[4].querySelector('msubsup > mrow'), prime = m[4].querySelector('mpadded');
const out = {
  sqrt_gap: (box(eq0)[0] - box(sq)[1]) / em, plain_gap: (box(eq1)[0] - box(ref)[1]) / em,
  paren_gap: (box(paren)[0] - box(op)[1]) / em,
  rel_lead: (box(rel)[0] - box(m[3])[0]) / em,
  sub_left: box(sub)[0], prime_right: box(prime)[1], base_right: box(m[4].querySelector('mi'))[1],
};
document.getElementById('out').textContent = JSON.stringify(out);
</script>"""


def test_chromium_draws_no_gap_after_a_root_before_a_parenthesis_or_a_leading_relation(tmp_path):
    """Measured in the browser with the sheets' own style: the space after
    the 4 of √4 before "=" is no wider than after a letter; "softmax" touches its
    "("; "≤" opens its formula; the subscript of S'_{c,1} starts under the
    prime, not after it."""
    page = render_document(build_document(["attention"], seed=1), ["html"])["worksheet-key.html"]
    style = re.search(r"<style>.*?</style>", page, re.S)[0]
    formulas = [r"\sqrt{4} = 2", "S = 2", r"\operatorname{softmax}(z)", r"\le 0", r"S'_{c,1}"]
    body = "".join(f'<p class="t">x {mathml(f)} y</p>' for f in formulas)
    test = tmp_path / "spacing.html"
    test.write_text(
        f'<!DOCTYPE html><html><head><meta charset="utf-8">{style}</head><body>{body}'
        f'<pre id="out"></pre>{_MEASURE}</body></html>',
        encoding="utf-8",
    )
    proc = run_chromium(test, "--dump-dom")
    found = re.search(r'<pre id="out">(.*?)</pre>', proc.stdout)
    assert found and found[1], proc.stderr[-2000:]
    got = json.loads(found[1])
    assert got["sqrt_gap"] <= got["plain_gap"] + 0.05, got
    assert abs(got["paren_gap"]) < 0.05, got
    assert abs(got["rel_lead"]) < 0.05, got
    assert got["sub_left"] < got["prime_right"] and got["sub_left"] <= got["base_right"] + 1, got


@pytest.mark.parametrize("kind", ["attention", "softmax-scaling", "next-token"])
def test_no_page_keeps_a_named_operator_with_the_default_operator_spaces(kind):
    files = render_document(build_document([kind], seed=1), ["html"])
    for text in files.values():
        assert re.search(r"<mo>[A-Za-z]{2,}</mo>", text) is None


def test_parentheses_around_a_flat_sum_are_of_the_text_size():
    """A stretchy fence draws Latin Modern Math's size variant, with wide side
    bearings ("( 0.25 + 1 )"); TeX sets text-size parentheses there."""
    flat = mathml(r"\frac{1}{4} \left( 0.25 + (-1) \right) = 2")
    assert 'stretchy="true"' not in flat
    assert '<mrow><mo stretchy="false">(</mo><mn>0.25</mn><mo>+</mo>' in flat
    tall = mathml(r"\left( \frac{1}{2} + 1 \right)")
    assert tall.count('stretchy="true"') == 2
    # a named operator before flattened parentheses still touches them
    assert '<mo lspace="0" rspace="0">softmax</mo><mrow><mo stretchy="false">(' in mathml(
        r"\operatorname{softmax}\left( a + b \right)"
    )


def test_a_matrix_symbol_with_a_fraction_is_set_display_size_as_in_the_latex_key():
    key = render_document(build_document(["softmax-scaling"], seed=1), ["html"])["worksheet-key.html"]
    assert '<span class="sym"><math><mrow displaystyle="true"><mo lspace="0" rspace="0">softmax</mo>' in key
    # a symbol without a fraction is left as it is
    assert '<span class="sym"><math><mi>s</mi><mo>=</mo></math></span>' in key


def test_a_formula_keeps_the_punctuation_after_it_on_its_line():
    from worksheet.render.html import HtmlRenderer

    out = HtmlRenderer().prose(r"Row convention: $f_t = x$, and likewise $i_t$. A <b>$y$</b>")
    assert '<span class="nowrap"><math><msub><mi>f</mi><mi>t</mi></msub><mo>=</mo><mi>x</mi></math>,</span>' in out
    assert '<span class="nowrap"><math><msub><mi>i</mi><mi>t</mi></msub></math>.</span>' in out
    assert "&lt;b&gt;<math><mi>y</mi></math>&lt;/b&gt;" in out  # user text stays text


def test_an_ellipsis_is_a_symbol_not_an_operator_with_thick_spaces():
    assert "<mo>,</mo><mi>\u2026</mi><mo>,</mo>" in mathml(r"h_1, \dots, h_{3}")
    assert "<mi>\u22ef</mi>" in mathml(r"\left[\, \mathrm{head}_1 \;\cdots\; \mathrm{head}_{2} \,\right]")


def test_a_comma_between_indices_has_no_space_after_it():
    assert '<msub><mi>z</mi><mrow><mn>1</mn><mo rspace="0">,</mo><mn>2</mn></mrow></msub>' in mathml("z_{1,2} = 1")
    assert '<mrow><mn>1</mn><mo rspace="0">,</mo><mn>1</mn></mrow><mi>z</mi></msubsup>' in mathml("a^{z}_{1,1}")
    assert '<mi>pos</mi><mo rspace="0">,</mo><mi>i</mi></mrow></msub>' in mathml(r"\theta_{\mathrm{pos},i}")
    # a comma between arguments or items keeps its space
    assert mathml("f(a, b) = h_1, h_2").count("<mo>,</mo>") == 2


def test_an_index_of_an_indexed_symbol_hangs_lower_and_apart_as_in_tex():
    """{b_1}_{3} (entry 3 of b_1) must not read as b_{13} (row 1, column 3)."""
    out = mathml(r"{b_1}_{3} + {W_1}_{:,3}")
    lowered = '<mpadded voffset="-0.2em"><mrow><mspace width="0.1em"/>'
    assert f"<msub><msub><mi>b</mi><mn>1</mn></msub>{lowered}<mn>3</mn></mrow></mpadded></msub>" in out
    assert f'</msub>{lowered}<mrow><mi>:</mi><mo rspace="0">,</mo><mn>3</mn></mrow>' in out
    assert "mpadded" not in mathml("b_{13} + b_{1,3}")


def test_capital_greek_is_upright_as_tex_sets_it():
    assert mathml(r"\Theta = \Sigma + \theta") == (
        '<math><mi mathvariant="normal">\u0398</mi><mo>=</mo><mi mathvariant="normal">\u03a3</mi>'
        "<mo>+</mo><mi>\u03b8</mi></math>"
    )
