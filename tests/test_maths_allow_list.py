"""Issue 17 §2: the maths allow-list refuses, at input and naming the field,
what LaTeX would only stop at later: ``$$``, ``\\left`` without ``\\right``,
a ``\\frac`` (or ``\\sqrt``, ``^``, ...) missing an argument, unbalanced braces."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from common import one_line_error
from worksheet.policy import safetext
from worksheet.policy.safetext import TextError, check_prose, check_title, math_problem

REFUSED = {
    "$$": "empty formula",
    "a $$ b": "empty formula",
    "$ $": "empty formula",
    r"$\frac{a}$": r"\\frac is missing an argument",
    r"$\frac a$": r"\\frac is missing an argument",
    r"$\frac{a}}{b}$": "} without its {",
    r"$\frac{a}^2$": r"\\frac is missing an argument",
    r"$\sqrt$": r"\\sqrt is missing an argument",
    r"$\sqrt[3$": r"\\sqrt\[ has no closing \]",
    r"$\hat{}$": None,  # an empty group is an argument: TeX accepts it
    r"$x^$": r"\^ is missing an argument",
    r"$x_}$": "} without its {",
    r"$\left( x$": r"\\left has no \\right",
    r"$x \right)$": r"\\right has no \\left",
    r"$\left x \right)$": "delimiter",
    r"$\left( x \right$": "delimiter",
    r"${\left( x } \right)$": r"closes a \{ opened before \\left",
    r"$\left( {x \right) }$": r"\\right has no \\left",
    "${x$": "{ without its }",
    "$x}$": "} without its {",
}
ACCEPTED = [
    r"\frac{a}{b}",
    r"\frac12",
    r"\frac{\sqrt{d_k}}{2}",
    r"\sqrt[3]{x}",
    r"\left( \frac{a}{b} \right)",
    r"\left. x \right|",
    r"\left\{ x \right\}",
    r"\left\langle q, k \right\rangle",
    r"e^{x_i}_j",
    r"\hat{}",
    r"\text{softmax}(x)_i",
    r"\left( \left[ x \right] \right)",
    r"x^{2}",
]


@pytest.mark.parametrize("text", list(REFUSED))
def test_a_prompt_with_maths_latex_would_stop_at_is_refused_naming_the_field(text):
    why = REFUSED[text]
    if why is None:
        assert check_prose(text, field="prompt") == text
        return
    with pytest.raises(TextError, match=why) as info:
        check_prose(f"Compute {text} now.", field="sections[1].prompt", file="exam.toml")
    message = str(info.value)
    assert message.startswith("exam.toml, sections[1].prompt:") and "\n" not in message


@pytest.mark.parametrize("formula", ACCEPTED)
def test_well_formed_maths_is_accepted(formula):
    assert math_problem(formula) is None
    assert check_title(f"On ${formula}$", field="title")


def test_a_spec_prompt_with_dollar_dollar_is_one_line_with_file_field_and_line(runner, cli, tmp_path):
    spec = tmp_path / "exam.toml"
    spec.write_text('title = "Quiz"\n[[sections]]\nkind = "attention"\nprompt = "Show $$x$$."\n', encoding="utf-8")
    r = runner.invoke(cli, ["build", "--spec", str(spec), "-o", str(tmp_path / "o")])
    line = one_line_error(r)
    assert str(spec) in line and "sections[1].prompt" in line and "line 4" in line and "empty formula" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("title", [r"Why $\frac{1}{$", r"$\left( x$", "$$"])
def test_a_title_option_with_broken_maths_is_refused(runner, cli, tmp_path, title):
    r = runner.invoke(cli, ["build", "--title", title, "-o", str(tmp_path / "o")])
    assert "--title" in one_line_error(r)


@given(
    st.lists(
        st.sampled_from(["\\frac", "\\left(", "\\right)", "\\sqrt", "{", "}", "^", "_", "x", " ", "[", "]", "1"]),
        max_size=12,
    ).map("".join)
)
@example(r"\frac{x}")
@example(r"\left(\right)")
@example(r"{\left(}\right)")
@example(r"\sqrt[x")
def test_accepted_maths_has_arguments_pairs_and_nested_groups(latex):
    """Whatever is accepted has balanced braces, every \\left paired with a
    later \\right at the same brace depth, and no command at the very end
    that needs an argument."""
    if math_problem(latex) is not None:
        return
    assert latex.count("{") == latex.count("}")
    depth, lefts = 0, []
    for tok in re.findall(r"\\left|\\right|[{}]", latex):
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
            assert not lefts or lefts[-1] <= depth
        elif tok == "\\left":
            lefts.append(depth)
        else:
            assert lefts and lefts.pop() == depth
    assert not lefts
    assert not re.search(r"(\\frac|\\sqrt|\^|_)\s*$", latex)


def test_accepted_tricky_maths_compiles_with_latex():
    from test_pdf import require_latex

    require_latex()
    from worksheet.render.pdf import compile_tex

    body = "\n\n".join(f"${f}$" for f in ACCEPTED)
    compile_tex(
        "\\documentclass{article}\\usepackage{amsmath,amssymb}\\begin{document}\n" + body + "\n\\end{document}\n",
        "maths.tex",
    )  # raises on any LaTeX error


def test_the_allow_list_names_its_argument_commands():
    assert set(safetext.ARGUMENTS) <= safetext.MATH_COMMANDS
