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

  - nothing that only LaTeX would stop at later: no empty formula (``$$``),
    no ``\\frac``, ``\\sqrt``, accent, font command, ``^`` or ``_`` without
    its argument, ``\\left`` and ``\\right`` in pairs, each followed by a
    delimiter, and no brace group that crosses such a pair.

  ``\\text{...}`` may hold only what maths may hold: every command
  anywhere in a formula, nested in braces or not, must be on the list, and a
  formula cannot contain ``$``, so a ``\\text`` can never run a command.
  Not on the list, on purpose: anything that reads or writes files or
  defines macros (``\\input``, ``\\include``, ``\\openin``, ``\\write``,
  ``\\def``, ``\\catcode``, ``\\csname`` ...), links (``\\href``,
  ``\\url``), ``\\style``/``\\color``, ``<`` and ``&`` (they mean markup in
  HTML and Markdown: write ``\\lt`` and ``\\le``), ``%`` (a TeX comment)
  and ``#``.

Bidirectional control characters (U+202A-U+202E, U+2066-U+2069) reorder
what a reader sees (a label ``abc\u202edcb`` shows as ``abcbcd``), so every
kind of user text checked here (labels, titles, course, date, instructions,
prompts, written questions and answers, ``--name``) refuses them, with a
message that says so; other control characters are refused too (they are not
printable).  The names in answer files (``student``, ``variant``) and the
names of answer files are not refused, so that no student's work goes
unmarked: every report and the class summary show their control characters,
bidi controls included, as escapes (``\u202e``).

The same maths check guards the renderers (see
``worksheet.solution.maths.reading.read_prose``): a formula in prose that fails it is
printed as plain text, never as maths.
"""

from __future__ import annotations

import re

from .errors import InputError

MAX_LABEL = 40
MAX_LINE = 200
MAX_PROSE = 4000

GREEK = frozenset(
    """alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu
    nu xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega
    Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega""".split()
)

MATH_COMMANDS = GREEK | frozenset(
    """
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
""".split()
)

MATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 +-*/=()[],.:;!?'|>^_{}")
MATH_ESCAPES = frozenset(",;!{}| ")

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

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
    return _structure_problem([(m.group(1), m.group(2)) for m in _TOKEN.finditer(latex)])


# commands that take arguments: how many (\sqrt also takes an optional [n] first)
ARGUMENTS = {
    "frac": 2,
    "dfrac": 2,
    "tfrac": 2,
    "sqrt": 1,
    "hat": 1,
    "bar": 1,
    "tilde": 1,
    "vec": 1,
    "dot": 1,
    "overline": 1,
    "underline": 1,
    "mathrm": 1,
    "mathbf": 1,
    "mathit": 1,
    "mathcal": 1,
    "mathbb": 1,
    "boldsymbol": 1,
    "operatorname": 1,
    "text": 1,
    "textrm": 1,
}
# what may follow \left or \right (a delimiter; "." is the empty one)
DELIMITER_CHARS = frozenset("()[]|./")
DELIMITER_COMMANDS = frozenset(
    "{ } | langle rangle lfloor rfloor lceil rceil vert Vert lvert rvert lVert rVert".split()
)


# long: one rule per structure a title or prompt may not hold, each with its own message
def _structure_problem(tokens: list[tuple[str | None, str | None]]) -> str | None:  # noqa: C901
    """What LaTeX would stop at in a formula whose characters and commands are
    allowed: an empty formula, a command or ``^``/``_`` without its argument,
    ``\\left`` without its ``\\right`` (or the other way), or a brace group
    that crosses a ``\\left ... \\right`` pair."""
    if all(char is not None and char.isspace() for _, char in tokens):
        return "an empty formula ($$ is not allowed: put maths between one $ and the next)"
    stack: list[str] = []  # "{" and "left"

    def argument(k: int, what: str) -> tuple[int, str | None]:
        """The index after the argument starting at ``k`` (spaces skipped), or why there is none."""
        while k < len(tokens) and tokens[k][1] == " ":
            k += 1
        if k == len(tokens) or tokens[k][1] in ("}", "^", "_"):
            return k, f"{what} is missing an argument"
        if tokens[k][1] != "{":
            return k + 1, None
        depth = 0
        for j in range(k, len(tokens)):
            depth += {"{": 1, "}": -1}.get(tokens[j][1], 0)
            if depth == 0:
                return j + 1, None
        return len(tokens), f"{what} is missing an argument"  # pragma: no cover - braces balance

    for k, (command, char) in enumerate(tokens):
        if char == "{":
            stack.append("{")
        elif char == "}":
            if stack.pop() != "{":
                return "a } closes a { opened before \\left (close it after \\right)"
        elif char in ("^", "_"):
            _, problem = argument(k + 1, char)
            if problem:
                return problem
        elif command in ARGUMENTS:
            j = k + 1
            if command == "sqrt" and j < len(tokens) and tokens[j][1] == "[":
                while j < len(tokens) and tokens[j][1] != "]":
                    j += 1
                if j == len(tokens):
                    return "\\sqrt[ has no closing ]"
                j += 1
            for _ in range(ARGUMENTS[command]):
                j, problem = argument(j, f"\\{command}")
                if problem:
                    return problem
        elif command in ("left", "right"):
            nxt = next(((c, ch) for c, ch in tokens[k + 1 :] if ch != " "), (None, None))
            if not (nxt[1] in DELIMITER_CHARS or nxt[0] in DELIMITER_COMMANDS):
                return f"\\{command} must be followed by a delimiter such as ( [ | . or \\{{"
            if command == "left":
                stack.append("left")
            elif not stack or stack.pop() != "left":
                return "a \\right has no \\left before it"
    if "left" in stack:
        return "a \\left has no \\right after it"
    return None


def bidi_problem(s: str) -> str | None:
    """Why ``s`` may not be shown (a bidirectional control character), or None."""
    for k, c in enumerate(s):
        if c in BIDI_CONTROLS:
            return f"has a bidirectional control character (U+{ord(c):04X}) at character {k + 1}"
    return None


def _printable(s: str, *, newlines: bool) -> str | None:
    bidi = bidi_problem(s)
    if bidi:
        return bidi
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
    if bidi_problem(label):
        raise TextError(f"label {shown} {bidi_problem(label)} (it would reorder the text)", **where)
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


# ---------------------------------------------------------------- file names
MAX_FILE_NAME = 100  # characters of a base name (NAME-v2000-key.html must stay far below 255 bytes)
WINDOWS_UNSAFE = frozenset('<>:"/\\|?*')
WINDOWS_RESERVED = frozenset(
    [
        "CON",
        "PRN",
        "AUX",
        "NUL",
        *(f"COM{k}" for k in "123456789\u00b9\u00b2\u00b3"),
        *(f"LPT{k}" for k in "123456789\u00b9\u00b2\u00b3"),
    ]
)


def file_name_problem(name) -> str | None:
    """Why ``name`` cannot be the base name of output files, or None.

    A base name is a plain file name that is safe on Linux, macOS and
    Windows: no path separator (``/`` ``\\``), not ``.``, ``..`` or any name
    starting with ``.``, no ``..``, no NUL or other control character (bidi
    controls included), none of ``< > : " | ? *``, no space or dot at either
    end, not a name Windows reserves (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with
    any extension), at most :data:`MAX_FILE_NAME` characters.  So every file
    a build writes stays inside its output folder."""
    if not isinstance(name, str):
        return f"must be text, not {type(name).__name__}"
    if not name:
        return "may not be empty"
    if len(name) > MAX_FILE_NAME:
        return f"is longer than {MAX_FILE_NAME} characters"
    if "/" in name or "\\" in name:
        return "must be a plain file name, without a folder (no / or \\)"
    if name.startswith(".") or ".." in name:
        return "may not start with . or contain .. (it would be hidden or leave the output folder)"
    bidi = bidi_problem(name)
    if bidi:
        return bidi
    for k, c in enumerate(name):
        if not c.isprintable() or c == "\t":
            return f"has a control character ({c!r}) at character {k + 1}"
        if c in WINDOWS_UNSAFE:
            return f"has {c!r} at character {k + 1}, which Windows does not allow in file names"
    if name[-1] in ". " or name[0] == " ":
        return "may not start with a space or end with a space or a dot (Windows drops them)"
    if name.split(".")[0].rstrip(" ").upper() in WINDOWS_RESERVED:
        return "is a name Windows reserves for a device (CON, PRN, AUX, NUL, COM1-9, LPT1-9)"
    return None


def check_file_name(name, *, field: str = "--name", file: str | None = None) -> str:
    """``name`` if it can be the base name of output files (see :func:`file_name_problem`)."""
    problem = file_name_problem(name)
    if problem:
        raise TextError(
            f"{_show(name) if isinstance(name, str) else type(name).__name__} {problem}", field=field, file=file
        )
    return name


def plain_title(s: str) -> str:
    """A title as plain text, where no markup can be written (an HTML page's
    ``<title>``): its ``$...$`` maths without TeX (``$\\sqrt{d_k}$`` is
    ``√d_k``); text outside maths as it is."""

    def bare(m: re.Match) -> str:
        roots = re.sub(r"\\sqrt\{([^{}]*)\}", "√\\1", m[1])
        return re.sub(r"\\([A-Za-z]+)", r"\1", roots).translate(_BRACES)

    return re.sub(r"\$([^$]*)\$", bare, s).replace("$", "")


_BRACES = str.maketrans("", "", "{}")
