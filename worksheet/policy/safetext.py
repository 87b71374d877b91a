"""What user text may contain, checked before it reaches a renderer.

Every renderer escapes user text for its format (LaTeX, HTML, Markdown);
this module decides what text is accepted at all, so that nothing a user
writes can become a command:

* **Labels** (token and vocabulary labels): 1 to :data:`MAX_LABEL`
  printable characters (no control characters, no line breaks) and no
  ``$``.  Kinds print labels inside prose whose ``$...$`` is maths, so a
  ``$`` in a label could open maths; it is refused.
* **Lines** (title, course, date): printable, one line, at most
  :data:`MAX_LINE` characters, shown as plain text (a ``$`` is a dollar).
* **Paragraphs** (instructions): the same, line breaks allowed, at most
  :data:`MAX_PROSE` characters, plain text.
* **Prose** (a spec section's ``prompt``): a paragraph whose ``$...$``
  pieces are maths.  Maths may use only these characters and commands
  (anything else is an error naming the field):

  - letters, digits, spaces and ``+ - * / = ( ) [ ] , . : ; ! ? ' | > ^ _ { }``
    (braces balanced; no ``^^``, which TeX reads as a character code);
  - ``\\,  \\;  \\!  \\{  \\}  \\|`` and ``\\`` followed by a space;
  - the commands in :data:`MATH_COMMANDS`: fractions and roots, operators
    and relations, arrows, dots and spaces, accents, ``\\left``/``\\right``,
    function names (``\\exp \\log \\sin \\cos \\tanh \\max ...``), Greek
    letters, and ``\\mathrm \\mathbf \\mathit \\operatorname \\text``.

  ``\\text{...}`` may hold only what maths may hold: every command
  anywhere in a formula, nested in braces or not, must be on the list, and a
  formula cannot contain ``$``, so a ``\\text`` can never run a command.
  Not on the list, on purpose: anything that reads or writes files or
  defines macros (``\\input``, ``\\include``, ``\\openin``, ``\\write``,
  ``\\def``, ``\\catcode``, ``\\csname`` ...), links (``\\href``,
  ``\\url``), ``\\style``/``\\color``, ``<`` and ``&`` (they mean markup in
  HTML and Markdown: write ``\\lt`` and ``\\le``), ``%`` (a TeX comment)
  and ``#``.

The same maths check guards the renderers (see
``TemplateRenderer.prose_parts``): a formula in prose that fails it is
printed as plain text, never as maths.
"""

from __future__ import annotations

import re

from .errors import InputError

MAX_LABEL = 40
MAX_LINE = 200
MAX_PROSE = 4000

GREEK = frozenset("""alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu
    nu xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega
    Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega""".split())

MATH_COMMANDS = GREEK | frozenset("""
    frac dfrac tfrac sqrt cdot times div pm mp ast star circ odot otimes oplus
    sum prod le leq ge geq lt gt ne neq approx equiv sim propto ll gg
    infty partial nabla top intercal prime
    in notin subset subseteq cup cap forall exists
    to mapsto rightarrow leftarrow Rightarrow Leftarrow leftrightarrow
    ldots cdots vdots ddots dots quad qquad
    hat bar tilde vec dot overline underline
    left right big Big bigl bigr Bigl Bigr mid vert lvert rvert Vert lVert rVert langle rangle lfloor rfloor
    lceil rceil
    exp log ln sin cos tan tanh max min arg det lim sup inf
    mathrm mathbf mathit mathcal mathbb boldsymbol operatorname text textrm
""".split())

MATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                       " +-*/=()[],.:;!?'|>^_{}")
MATH_ESCAPES = frozenset(",;!{}| ")

_TOKEN = re.compile(r"\\([A-Za-z]+|.?)|(.)", re.S)


class TextError(InputError):
    """User text that may not be printed (a label, title or prompt); names the field."""


def math_problem(latex: str) -> str | None:
    """Why the formula ``latex`` may not be printed, or None when it may."""
    depth = 0
    previous = ""
    for m in _TOKEN.finditer(latex):
        command, char = m.group(1), m.group(2)
        if command is not None:
            if command == "":
                return "a formula may not end with \\"
            if len(command) == 1 and not command.isalpha():
                if command not in MATH_ESCAPES:
                    return f"\\{command} is not allowed in a formula"
            elif command not in MATH_COMMANDS:
                return f"\\{command} is not allowed in a formula (allowed: see 'worksheet.policy.safetext')"
            previous = ""
            continue
        if char not in MATH_CHARS:
            return f"{char!r} is not allowed in a formula"
        if char == "^" and previous == "^":
            return "^^ is not allowed in a formula"
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return "a formula has a } without its {"
        previous = char
    if depth:
        return "a formula has a { without its }"
    return None


def _printable(s: str, *, newlines: bool) -> str | None:
    for k, c in enumerate(s):
        if c == "\n" and newlines:
            continue
        if c == "\t":
            continue
        if not c.isprintable():
            return f"has a control character ({c!r}) at character {k + 1}"
    return None


def _show(s: str) -> str:
    """``s`` quoted for a message: as it is, or as a Python literal when it has control characters."""
    return f"'{s}'" if s.isprintable() else repr(s)


def check_label(label, *, field: str, file: str | None = None) -> str:
    """A token or vocabulary label: 1 to MAX_LABEL printable characters, no ``$``."""
    where = dict(field=field, file=file)
    if not isinstance(label, str):
        raise TextError(f"a label must be text, not {label!r}"[:120], **where)
    shown = _show(label[:MAX_LABEL])
    if not label:
        raise TextError("a label may not be empty", **where)
    if len(label) > MAX_LABEL:
        raise TextError(f"label {shown}... is longer than {MAX_LABEL} characters", **where)
    if not label.isprintable() or "\t" in label:
        raise TextError(f"label {shown} has a control character or a line break", **where)
    if "$" in label:
        raise TextError(f"label {shown} may not contain $ (labels are plain text, not maths)", **where)
    return label


def check_labels(labels, *, field: str, file: str | None = None) -> tuple[str, ...]:
    """Every label of a list (see :func:`check_label`)."""
    return tuple(check_label(x, field=field, file=file) for x in labels)


def check_line(s: str, *, field: str, file: str | None = None) -> str:
    """A title, course or date: plain text, one line, at most MAX_LINE characters."""
    where = dict(field=field, file=file)
    if len(s) > MAX_LINE:
        raise TextError(f"is longer than {MAX_LINE} characters", **where)
    problem = _printable(s, newlines=False)
    if problem:
        raise TextError(problem if "\n" not in s else "must be one line", **where)
    return s


def check_paragraph(s: str, *, field: str, file: str | None = None) -> str:
    """Instructions: plain text, line breaks allowed, at most MAX_PROSE characters."""
    where = dict(field=field, file=file)
    if len(s) > MAX_PROSE:
        raise TextError(f"is longer than {MAX_PROSE} characters", **where)
    problem = _printable(s, newlines=True)
    if problem:
        raise TextError(problem, **where)
    return s


def check_prose(s: str, *, field: str, file: str | None = None) -> str:
    """A prompt or instructions: a paragraph whose ``$...$`` pieces are formulas on the list."""
    check_paragraph(s, field=field, file=file)
    return _check_formulas(s, field=field, file=file)


def check_title(s: str, *, field: str, file: str | None = None) -> str:
    """A title: one line (see :func:`check_line`) whose ``$...$`` pieces are formulas on the list."""
    check_line(s, field=field, file=file)
    return _check_formulas(s, field=field, file=file)


def _check_formulas(s: str, *, field: str, file: str | None) -> str:
    parts = s.split("$")
    if len(parts) % 2 == 0:
        raise TextError("has a $ without its closing $ (write formulas as $...$)", field=field, file=file)
    for k, formula in enumerate(parts[1::2]):
        problem = math_problem(formula)
        if problem:
            raise TextError(f"formula {k + 1} (${formula[:60]}$): {problem}", field=field, file=file)
    return s
