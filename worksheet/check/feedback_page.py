"""A student's feedback page: one self-contained HTML file (no script, no
link, no image; its style inline) with the marks of each step, the steps
carried forward from the student's own answers, and the hint of each named
mistake, typeset (MathML, from :class:`worksheet.render.html.HtmlRenderer`).

Every piece of text from a file (names, answers as given, step titles,
messages) is escaped; only a mistake's own typeset sentence goes through the
HTML renderer's prose, which escapes its words and typesets only formulas
that pass the maths allow-list.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from ..kinds import mistakes
from ..policy.errors import printable
from ..solution.points import points_text
from .report import SYMBOLS, Report, StepResult

VERDICT = {
    "correct": "right",
    "carried-forward": "right for your own earlier answers (error carried forward)",
    "incorrect": "wrong",
    "missing": "not answered",
    "by-person": "marked by your lecturer",
}
STYLE = """
body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;line-height:1.45;color:#222}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}
th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
.correct{color:#176c2c}.carried-forward{color:#1c5fa8}.incorrect{color:#a8201a}.missing,.by-person{color:#666}
.hint{background:#fff7e0;border-left:4px solid #e0a800;padding:.5rem .75rem;margin:.5rem 0}
"""


def prose_renderer():
    """The HTML renderer whose prose typesets a mistake's hint (one for a class's pages)."""
    from ..render.html import HtmlRenderer

    return HtmlRenderer()


def feedback_page(report: Report, student: str, grade: str | None, max_grade: str | None, renderer=None) -> str:
    """The page of one marked attempt (``renderer``: :func:`prose_renderer`, made once for many pages)."""
    renderer = renderer or prose_renderer()
    who = escape(printable(student or ""))  # control and bidi characters as escapes: they cannot reorder it
    total = f"{points_text(report.marks)} / {points_text(report.out_of)}"
    head = Markup(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">\n'
        "<title>Feedback: %s</title>\n<style>%s</style>\n</head>\n<body>\n"
    ) % (who, Markup(STYLE))
    out = [head, Markup("<h1>Feedback for %s</h1>\n") % who]
    grade_text = f"; grade {grade}" + (f" of {max_grade}" if max_grade else " %") if grade is not None else ""
    out.append(Markup("<p>%s: <strong>%s</strong> %s%s.</p>\n") % ("Marks", total, _unit(report), grade_text))
    if report.variant:
        out.append(Markup("<p>Variant %s.</p>\n") % report.variant)
    for p in report.problems:
        out.append(Markup("<h2>Problem %s: %s</h2>\n") % (p.number, Markup(renderer.prose(_typeset_title(p)))))
        if not p.carried_forward:
            out.append(Markup("<p><em>This kind is marked against the key only (no error carried forward).</em></p>\n"))
        out.append(Markup("<table>\n<tr><th></th><th>Step</th><th>Verdict</th><th>Marks</th></tr>\n"))
        titles = {s.name: s.title or s.name for s in p.steps}
        for s in p.steps:
            out.append(_step_row(s, renderer, titles))
        out.append(Markup("</table>\n"))
        carried = [s for s in p.steps if s.status == "carried-forward"]
        if carried:
            names = Markup(", ").join(Markup(renderer.prose(s.title or s.name)) for s in carried)
            out.append(
                Markup("<p>Carried forward: %s %s right for the values you worked out earlier, so %s full marks.</p>\n")
                % (names, "is" if len(carried) == 1 else "are", "it gets" if len(carried) == 1 else "they get")
            )
        out += [_hint(code, renderer) for code in dict.fromkeys(s.mistake for s in p.steps if s.mistake)]
    if report.unread:
        out.append(Markup("<p>Not read:</p>\n<ul>\n"))
        out += [Markup("<li>%s</li>\n") % u for u in report.unread]
        out.append(Markup("</ul>\n"))
    out.append(Markup("</body>\n</html>\n"))
    return str(Markup("").join(out))


def _typeset_title(p) -> str:
    """The problem's title with its maths typeset: the kind's own (prose with $...$) when the
    key's plain title is that one ("Why scale by sqrt(d_k)" is "Why scale by $\\sqrt{d_k}$")."""
    from .key import _kind_title

    if p.title and p.title == _kind_title(p.kind, None):
        from .. import kinds

        try:
            return kinds.get(p.kind).TITLE
        except Exception:  # a kind this version does not know
            pass
    return p.title or p.kind


def _unit(report: Report) -> str:
    return "points" if report.pointed else "marks"


def _step_row(s: StepResult, renderer, titles: dict[str, str]) -> Markup:
    verdict = VERDICT.get(s.status, s.status)  # a verdict added later (unreadable) is shown by its name
    detail = "" if s.status in ("correct", "missing", "by-person") else s.message
    mistake = s.mistake if s.status == "incorrect" and s.mistake in mistakes.CATALOGUE else ""
    if mistake:  # said in words by the hint below; the code stays in data-mistake for scripts
        verdict = "wrong: a known mistake (see below)"
        detail = detail.removeprefix(mistakes.CATALOGUE[mistake].sentence).strip()
    elif s.status == "carried-forward" and s.carried_from:  # the steps by their titles, not their ids
        detail = Markup("carried forward: follows from your own %s") % Markup(", ").join(
            Markup(renderer.prose(titles.get(n, n))) for n in s.carried_from
        )
    return Markup('<tr class="%s"%s><td>%s</td><td>%s</td><td>%s%s</td><td>%s</td></tr>\n') % (
        s.status,
        Markup(' data-mistake="%s"') % mistake if mistake else "",
        SYMBOLS.get(s.status, ""),
        Markup(renderer.prose(s.title or s.name)),
        verdict,
        Markup("<br><small>%s</small>") % detail if detail else "",
        "" if s.status == "by-person" else f"{points_text(s.marks)}/{points_text(s.out_of)}",
    )


def _hint(code: str, renderer) -> Markup:
    """The named mistake told to the student who made it (second person, maths typeset)."""
    m = mistakes.CATALOGUE.get(code)
    if m is None:
        return Markup("")
    return Markup('<div class="hint" data-mistake="%s">%s</div>\n') % (code, Markup(renderer.prose(m.hint)))
