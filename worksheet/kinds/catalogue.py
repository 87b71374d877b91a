"""What each kind takes, for people: its parameters (defaults, the values hand
and calculator mode accept), what hand and calculator mode draw, and the
mistakes ``worksheet check`` names.  ``worksheet list KIND`` prints it and
``worksheet.kinds()`` returns it.

Nothing here is written twice: the defaults come from each kind's ``Params``,
a parameter's description from the comment beside its default (the kind
contract asks for one), the accepted values from asking ``Params`` itself (a
whole-number setting is tried from 0 to 64 and at a few larger values, in each
mode), the mode paragraphs from the kind module's docstring, and the mistakes
from :mod:`worksheet.kinds.mistakes`.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from dataclasses import dataclass, field

from ..policy.errors import WorksheetError

__all__ = ["Parameter", "KindInfo", "kind_info", "kind_infos", "describe"]

MODES = ("hand", "calculator")
_PROBES = (*range(0, 65), 100, 256, 1000, 4096)


@dataclass(frozen=True)
class Parameter:
    """One setting of a kind (``KIND:name=value``, or ``--name`` where the CLI has the option)."""

    name: str
    default: dict  # mode -> default value (None: drawn or derived)
    accepted: dict  # mode -> the whole numbers accepted, as text ("1–6"), or "" (not a whole number)
    about: str  # the comment beside its default

    def default_text(self) -> str:
        hand, calc = (_value(self.default[m]) for m in MODES)
        return hand if hand == calc else f"{hand} (calculator: {calc})"

    def accepted_text(self) -> str:
        hand, calc = (self.accepted[m] for m in MODES)
        if not hand and not calc:
            return ""
        return hand if hand == calc else f"by hand {hand or '-'}; calculator {calc or '-'}"


@dataclass(frozen=True)
class KindInfo:
    """A kind as ``worksheet list KIND`` shows it."""

    name: str
    title: str
    summary: str
    parameters: tuple[Parameter, ...]
    modes: dict = field(default_factory=dict)  # "hand" / "calculator" -> what that mode draws (the docstring)
    mistakes: tuple[tuple[str, str], ...] = ()  # (code, sentence) that check names
    inputs: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"<kind {self.name}: {', '.join(p.name for p in self.parameters)}>"


def kind_info(name: str) -> KindInfo:
    """Everything :mod:`worksheet.kinds.catalogue` knows of one kind (imports it)."""
    from . import mistakes
    from . import registry as kinds

    module = kinds.get(name)
    summary = kinds.KINDS[name][1]
    comments = _comments(module.Params)
    params = []
    for f in dataclasses.fields(module.Params):
        if f.name == "numbers":
            continue
        default = {m: _default(module.Params, f.name, m) for m in MODES}
        about = comments.get(f.name, "")
        passed_on = name == "find-the-mistake"
        if passed_on and f.name not in ("of", "mistake"):  # settings of the kind its solution is of
            accepted = {m: "" for m in MODES}
            about = f"{about} (passed on to the kind of 'of', which checks it: see 'worksheet list KIND')"
        else:
            whole = _is_int(f, module.Params)
            accepted = {m: (_accepted(module.Params, f.name, m) if whole else "") for m in MODES}
        params.append(Parameter(f.name, default, accepted, about))
    try:
        codes = mistakes.codes_for(name)
    except WorksheetError:  # pragma: no cover - every kind has at least the slip
        codes = []
    return KindInfo(
        name,
        _plain(module.TITLE),
        summary,
        tuple(params),
        _modes(module.__doc__ or ""),
        tuple((c, mistakes.CATALOGUE[c].sentence) for c in codes),
        tuple(module.INPUTS),
    )


def kind_infos() -> list[KindInfo]:
    """Every kind, in the order of ``worksheet list``."""
    from . import registry as kinds

    return [kind_info(n) for n in kinds.names()]


def describe(info: KindInfo) -> str:
    """The text of ``worksheet list KIND``."""
    lines = [f"{info.name}: {info.title}", f"  {info.summary}", ""]
    if info.inputs:
        lines += [f"Inputs (worksheet solve): {', '.join(info.inputs)}", ""]
    lines.append("Parameters (KIND:name=value, or --name-with-dashes where the option exists):")
    width = max((len(p.name) for p in info.parameters), default=4)
    for p in info.parameters:
        lines.append(f"  {p.name:<{width}}  default {p.default_text()}")
        if p.accepted_text():
            lines.append(f"  {'':<{width}}  accepts {p.accepted_text()}")
        if p.about:
            lines.append(f"  {'':<{width}}  {p.about}")
    for mode in MODES:
        if info.modes.get(mode):
            lines += ["", f"{mode.capitalize()} mode:"]
            for item in info.modes[mode].split("\n"):
                lines += _wrap(item, "  ", bullet=item.startswith("* "))
    if info.mistakes:
        lines += ["", "Mistakes 'worksheet check' names (find-the-mistake:mistake=CODE plants one):"]
        w = max(len(c) for c, _ in info.mistakes)
        lines += [f"  {c:<{w}}  {s}" for c, s in info.mistakes]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the parts


def _plain(title: str) -> str:
    title = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", title)
    return re.sub(r"\\([A-Za-z]+)", r"\1", title).replace("$", "")


def _value(v) -> str:
    if v is None:
        return "drawn or derived"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (tuple, list)):
        return ", ".join(map(str, v)) if v else "none"
    return str(v)


def _default(params_cls, name: str, mode: str):
    try:
        return getattr(params_cls.from_options({"numbers": mode}), name)
    except WorksheetError:  # pragma: no cover - every kind builds with its defaults
        return None


def _is_int(f: dataclasses.Field, params_cls) -> bool:
    from .param_types import WHOLE, declared

    return declared(params_cls)[f.name].type is WHOLE


def _accepted(params_cls, name: str, mode: str) -> str:
    ok = []
    for v in _PROBES:
        try:
            params_cls.from_options({"numbers": mode, name: v})
        except WorksheetError:
            continue
        except Exception:  # a value its validation cannot take at all
            continue
        ok.append(v)
    return _ranges(ok)


def _ranges(ok: list[int]) -> str:
    """``1–6``, ``4, 9, 16, 25, 36, 49, 64, 100, 256, 1000, 4096``, ``1–64 and more``."""
    if not ok:
        return ""
    small = [v for v in ok if v <= 64]
    big = [v for v in ok if v > 64]
    runs: list[list[int]] = []
    for v in small:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    if len(runs) > 8:  # scattered: say so rather than list them all
        text = f"some of {small[0]}–{small[-1]}"
    else:
        text = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)
    if big:
        text += (
            " and more"
            if len(big) == len([p for p in _PROBES if p > 64]) and small and small[-1] == 64
            else (", " if text else "") + ", ".join(map(str, big))
        )
    return text


_FIELD = re.compile(r"^\s+(\w+)\s*:[^=#]+=[^#]*#\s*(.+?)\s*$")


def _comments(params_cls) -> dict[str, str]:
    """The comment beside each field's default in the Params class's source."""
    try:
        source = inspect.getsource(params_cls)
    except (OSError, TypeError):  # pragma: no cover - no source (a frozen app)
        return {}
    out = {}
    for line in source.splitlines():
        m = _FIELD.match(line)
        if m:
            out.setdefault(m.group(1), m.group(2))
    return out


def _modes(doc: str) -> dict[str, str]:
    """The paragraphs of a kind's docstring that start with "Hand mode" / "Calculator mode"
    (with the list that follows a paragraph ending in a colon), as one line each."""
    paras = [p.strip() for p in re.split(r"\n\s*\n", doc)]
    out: dict[str, list[str]] = {}
    for i, p in enumerate(paras):
        for mode in MODES:
            if p.lower().startswith(f"{mode} mode"):
                text = [p]
                if p.rstrip().endswith(":") and i + 1 < len(paras):
                    text.append(paras[i + 1])
                out.setdefault(mode, []).extend(text)

    def flat(t: str) -> str:  # one line per list item
        items = re.split(r"\n\s*\* ", "\n" + t)
        return "\n".join(
            ("* " if k > 0 and t.lstrip().startswith("*") or k > 1 else "") + " ".join(i.split())
            for k, i in enumerate(items)
            if i.strip()
        )

    return {m: re.sub(r"``", "", "\n".join(flat(t) for t in texts)) for m, texts in out.items()}


def _wrap(text: str, indent: str, width: int = 88, bullet: bool = False) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + ("  " if bullet else ""))
