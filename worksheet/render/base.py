"""The shared base of the template renderers.

Kinds return data; here it becomes format-neutral tables of LaTeX/decimal
cells, and each format's renderer says how a table, a grid, a formula or a
piece of text is written.  Layout lives only in ``templates/<format>/``.
"""

from __future__ import annotations

from fractions import Fraction

import re
from pathlib import Path
from typing import Sequence

import jinja2

from ..solution import number_format as fmt
from ..solution.document import Document, standard_tables
from ..policy.errors import WorksheetError
from ..exact import NegInf
from ..solution.maths import Code, Prose, Text, as_prose
from ..solution.problem import Quantity, Step
from ..policy.safetext import plain_title
from .artefacts import Format


def default_templates() -> Path:
    """``templates/`` of a source checkout, or the copy inside the wheel."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "templates", here.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the templates/ folder is missing from this installation")


_TABLES: dict[tuple[str, int], tuple[object, Table]] = {}
_TABLES_MAX = 50_000


def _shared(what: str, obj, make) -> Table:
    """``make(obj)``, remembered for the object itself (its id, kept alive by
    the entry, so an id is never reused while cached).  Tables are read-only."""
    key = (what, id(obj))
    hit = _TABLES.get(key)
    if hit is not None and hit[0] is obj:
        return hit[1]
    if len(_TABLES) >= _TABLES_MAX:
        _TABLES.clear()
    table = make(obj)
    _TABLES[key] = (obj, table)
    return table


def forget_tables() -> None:
    """Drop the shared tables: for a caller that has rendered its documents
    in every format and will not render them again (variants, one by one)."""
    _TABLES.clear()


MAX_COLS = 10  # a matrix or grid wider than this is printed in column blocks
BLOCK = 8  # columns per block


def col_blocks(m: int) -> list[tuple[int, int]]:
    """Column ranges [a, b) a matrix of ``m`` columns is printed in: all of
    them up to MAX_COLS, else blocks of BLOCK (a 2 x 64 matrix: 8 blocks of
    8, each headed by its column numbers) so that entries stay legible and
    answer cells wide enough to write in."""
    if m <= MAX_COLS:
        return [(0, m)]
    return [(a, min(a + BLOCK, m)) for a in range(0, m, BLOCK)]


class TemplateError(WorksheetError):
    """A template (e.g. a lecturer's copy given with --templates) that cannot be used."""


class Table:
    """Rows of cells with optional row/column labels (all strings)."""

    def __init__(self, cells, rows=None, cols=None):
        self.cells = cells
        self.rows = rows
        self.cols = cols
        self.n = len(cells)
        self.m = len(cells[0]) if cells else 0


class TemplateRenderer(Format):
    """Base of md/tex/html: subclasses set ``name``, ``ext`` and the writers."""

    name = ""
    ext = ""
    env_options: dict = {}

    def __init__(self, templates: Path | None = None):
        root = Path(templates) if templates else default_templates()
        folder = root / self.name
        if not folder.is_dir():
            raise TemplateError(
                f"templates folder {root} has no {self.name}/ subfolder "
                f"(copy the whole templates/ folder: cp -r templates mytemplates)"
            )
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(folder)),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            **self.env_options,
        )
        self._prose: dict[str, tuple] = {}  # prose's text -> (its parts, as printed)
        self._grids: dict[tuple, str] = {}
        self._chains: dict[bool, tuple] = {}
        self._found_blocks: dict[tuple[str, bool], bool] = {}  # (block, key) -> does the chain have it
        self.env.filters.update(
            given=self.given,
            exact=self.exact,
            decimal=self.decimal,
            grid=self.grid,
            math=self.math,
            display=self.display,
            text=self.text,
            prose=self.prose,
            plain_title=plain_title,
            standard_tables=standard_tables,
            tables_page=self.tables_page,
        )
        self._pages: dict[tuple, tuple] = {}  # the standard tables (by identity) -> their page

    # -- tables from the model (shared) -------------------------------------
    # The same tables serve every format (md, tex and html of one key print
    # the same cells), so each is made once: see _shared.
    @staticmethod
    def given_table(q: Quantity) -> Table:
        def cell(x):
            if q.given_places is None or isinstance(x, (str, NegInf)):
                return fmt.given(x)
            return fmt.decimal(x, q.given_places)

        return _shared("given", q, lambda q: Table([[cell(x) for x in row] for row in q.exact], q.rows, q.cols))

    @staticmethod
    def exact_table(s: Step) -> Table:
        def cell(x):  # carried decimals: the same places, trailing zeros kept; a calculator sheet's 14.4, not 72/5
            if s.rounded and not isinstance(x, (str, NegInf)):
                return fmt.decimal(x, s.places)
            return fmt.given(x) if s.decimals and type(x) is Fraction else fmt.exact_latex(x)

        return _shared("exact", s, lambda s: Table([[cell(x) for x in row] for row in s.exact], s.rows, s.cols))

    @staticmethod
    def decimal_table(s: Step) -> Table:
        def make(s):
            if s.chain is not None:  # hand mode: what the rounding chain gives (worksheet.policy.pencil)
                return Table([[fmt.decimal(x, s.places) for x in row] for row in s.chain], s.rows, s.cols)
            # rounded from the exact values, never from the numpy cross-check (s.value)
            cells = [[fmt.decimal(x, s.places) for x in row] for row in s.exact]
            return Table(cells, s.rows, s.cols)

        return _shared("decimal", s, make)

    # -- filters: what the templates call (and plain_title, below) ---------
    # Each is made once per renderer and object: the sheet and the key of a
    # document print the same given matrices, and answer grids of one shape
    # and labels are the same text.
    def given(self, q: Quantity) -> str:
        return _shared(self.name + ".given", q, lambda q: self.matrix(q.symbol, self.given_table(q)))

    def exact(self, s: Step) -> str:
        return self.matrix(s.symbol, self.exact_table(s))

    def decimal(self, s: Step) -> str:
        return self.table(self.decimal_table(s), math=False)

    def grid(self, s: Step) -> str:
        key = (s.shape, s.rows, s.cols)
        out = self._grids.get(key)
        if out is None:
            n, m = s.shape
            out = self.empty_grid(Table([[""] * m for _ in range(n)], s.rows, s.cols))
            if len(self._grids) < 4096:
                self._grids[key] = out
        return out

    # -- format specific ----------------------------------------------------
    def matrix(self, symbol: str, t: Table) -> str:
        raise NotImplementedError

    def table(self, t: Table, math: bool) -> str:
        raise NotImplementedError

    def empty_grid(self, t: Table) -> str:
        raise NotImplementedError

    def math(self, latex: str) -> str:
        raise NotImplementedError

    def display(self, latex: str) -> str:
        raise NotImplementedError

    def text(self, s: str) -> str:
        raise NotImplementedError

    def code(self, word: str) -> str:
        """A word of code in prose (see :func:`worksheet.solution.problem.code`)."""
        return self.text(word)

    def prose(self, s, after: str = "") -> str:
        """Prose (:class:`~worksheet.solution.maths.nodes.Prose`): each part by its
        writer, words by :meth:`text`, a word of code by :meth:`code`, a formula
        by :meth:`math` (its tree); ``after``: words after it (a template's
        ``aid.name | prose(": on the tables page.")``).  A string (a template's
        own text) is read first (:func:`~worksheet.solution.maths.as_prose`)."""
        p = s if type(s) is Prose else as_prose(s)
        if after:
            p = Prose((*p.parts, Text(str(after))))
        hit = self._prose.get(p)  # the same conventions and notes recur on every sheet
        if hit is not None and (hit[0] is p.parts or hit[0] == p.parts):
            return hit[1]
        text, code, math = self.text, self.code, self.math
        out = "".join(
            text(x.text) if type(x) is Text else (code(x.text) if x.text else "") if type(x) is Code else math(x)
            for x in p.parts
        )
        if len(self._prose) < 4096:
            self._prose[p] = (p.parts, out)
        return out

    def tables_page(self, tables: Sequence, **names) -> str:
        """The tables page (``tables.<ext>.j2`` with ``tables`` and ``names``), rendered
        once for the same standard tables: they are the same objects on every sheet
        (:func:`worksheet.steps.standard_tables.grid_aid` keeps them), and the square
        roots' hundred rows cost a block's sheet more than its worked lines do."""
        key = (tuple(map(id, tables)), tuple(sorted(names.items())))
        try:
            hit = self._pages.get(key)
        except TypeError:  # a template passed a value that cannot be a key: rendered each time
            hit, key = None, None
        if hit is not None and all(a is b for a, b in zip(hit[0], tables)):
            return hit[1]
        page = self._load(f"tables.{self.ext}.j2").render(tables=list(tables), **names)
        if self.env.autoescape:
            page = jinja2.utils.markupsafe.Markup(page)  # rendered by the template: already escaped
        if key is not None:
            if len(self._pages) >= 64:
                self._pages.clear()
            self._pages[key] = (tuple(tables), page)
        return page

    # -- documents ----------------------------------------------------------
    def template(self, key: bool) -> jinja2.Template:
        return self._load(f"{'key' if key else 'sheet'}.{self.ext}.j2")

    def _load(self, name: str) -> jinja2.Template:
        try:
            return self.env.get_template(name)
        except jinja2.TemplateNotFound as exc:
            raise TemplateError(f"template {exc.name} is missing from {self.env.loader.searchpath[0]}") from None
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(f"{exc.filename or exc.name}, line {exc.lineno}: {exc.message}") from None
        except UnicodeDecodeError as exc:
            raise TemplateError(
                f"{Path(self.env.loader.searchpath[0]) / name}: not UTF-8 text (byte {exc.start + 1})"
            ) from None
        except RecursionError:
            raise TemplateError(f"{Path(self.env.loader.searchpath[0]) / name}: nested too deeply to compile") from None

    def render(self, doc: Document, *, key: bool) -> str:
        """One document (a sheet or its key) as one file."""
        return self.render_many([doc], key=key)

    def render_many(self, docs: Sequence[Document], *, key: bool) -> str:
        """Several documents (the variants of an exam) in one file, in order;
        each starts on a new page.  The same text as rendering the template
        with ``docs`` (tested): ``head`` + each document's ``doc`` block + ``foot``."""
        docs = list(docs)
        outlines = [d.outline() for d in docs] if self.has_frame(key) else []
        return (
            self.head(outlines, key=key)
            + "".join(self.body(d, i, len(docs), key=key) for i, d in enumerate(docs))
            + self.foot(outlines, key=key)
        )

    def has_frame(self, key: bool) -> bool:
        """Does the sheet or key template have a ``head`` or ``foot`` block?"""
        return self._has_block("head", key) or self._has_block("foot", key)

    def _has_block(self, block: str, key: bool) -> bool:
        """Does the sheet or key template, or one it extends, have this block?  (Kept
        with the templates' chain: asked three times for every document rendered.)"""
        found = self._found_blocks.get((block, key))
        if found is None:
            tmpl, parents = self._chain(key)
            found = self._found_blocks[(block, key)] = any(block in t.blocks for t in (tmpl, *parents))
        return found

    # The parts of a file, so that the documents of a big exam can be
    # rendered in parallel (worksheet.build) and joined.
    def head(self, outlines: Sequence[Document], *, key: bool) -> str:
        """What comes before the first document (``outlines``: see Document.outline)."""
        return self._block("head", key, docs=list(outlines))

    def body(self, doc: Document, index: int, count: int, *, key: bool) -> str:
        """Document ``index`` (0-based) of ``count`` in one file."""
        return self._block("doc", key, doc=doc, loop=DocLoop(index, count))

    def foot(self, outlines: Sequence[Document], *, key: bool) -> str:
        return self._block("foot", key, docs=list(outlines))

    def _block(self, block: str, key: bool, **names) -> str:
        """One block of the sheet or key template ('' if it has none; every
        template has a ``doc`` block, see _chain)."""
        if not self._has_block(block, key):
            return ""
        tmpl, parents = self._chain(key)
        ctx = tmpl.new_context({**names, "key": key})
        for parent in parents:  # what {% extends %} does when the template renders
            for name, func in parent.blocks.items():
                ctx.blocks.setdefault(name, []).append(func)
        try:
            return "".join(ctx.blocks[block][0](ctx))
        except WorksheetError:
            raise
        except Exception as exc:  # noqa: BLE001 - the template's own code failed: see template_failure
            failure = self.template_failure(exc, block)
            if failure is None:
                raise
            raise failure from None

    def template_failure(self, exc: Exception, block: str) -> TemplateError | None:
        """The one-line error for an exception raised while a template ran
        (``{{ 1/0 }}``, an include that is missing, outside the templates
        folder or not UTF-8, a macro that calls itself without end, an
        undefined name), naming the template file and line; None when the
        exception came from worksheet's own code (a bug, not the template's).

        Jinja rewrites the traceback so that template code shows as frames
        of the template file at its line (``Environment.handle_exception``).
        """
        try:
            self.env.handle_exception()
        except BaseException as rewritten:  # noqa: BLE001 - handle_exception always raises
            frames = _frames(rewritten.__traceback__)
        else:  # pragma: no cover - handle_exception always raises
            frames = []
        package = str(Path(__file__).resolve().parent.parent)
        last = max((k for k, (file, _) in enumerate(frames) if file.endswith(".j2")), default=None)
        if not isinstance(exc, (jinja2.TemplateError, RecursionError, UnicodeDecodeError)) and (
            last is None or any(f.startswith(package) for f, _ in frames[last + 1 :])
        ):
            return None
        if isinstance(exc, RecursionError):
            reason = "templates call or include each other without end"
        elif isinstance(exc, UnicodeDecodeError):
            reason = f"a template it includes is not UTF-8 text (byte {exc.start + 1})"
        elif isinstance(exc, jinja2.TemplateNotFound):
            outside = str(exc.name).startswith("/") or ".." in str(exc.name).split("/")
            reason = f"template {exc.name!r} is not in {self.env.loader.searchpath[0]}" + (
                " (templates may include only templates of that folder)" if outside else ""
            )
        elif isinstance(exc, jinja2.TemplateError):
            reason = exc.message or type(exc).__name__
        else:
            reason = f"{type(exc).__name__}: {exc}"
        where = (
            f"{frames[last][0]}, line {frames[last][1]}" if last is not None else f"{self.name} template, block {block}"
        )
        return TemplateError(f"{where}: {reason}".replace("\n", " "))

    def _chain(self, key: bool) -> tuple[jinja2.Template, list[jinja2.Template]]:
        """The sheet or key template and the templates it extends, nearest first."""
        chain = self._chains.get(key)
        if chain is None:
            tmpl = self.template(key)
            parents, name = [], tmpl.name
            while (name := _extends(self.env, name)) is not None:
                if len(parents) > 8:
                    raise TemplateError(f"{tmpl.name}: templates extend each other in a loop")
                parents.append(self._load(name))
            if not any("doc" in t.blocks for t in (tmpl, *parents)):
                raise TemplateError(
                    f"{tmpl.name} has no block 'doc' (copy the templates/ folder "
                    f"of this version of worksheet and restyle that)"
                )
            _check_outside_blocks(self.env, (parents or [tmpl])[-1].name)
            chain = self._chains[key] = (tmpl, parents)
        return chain


_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def is_number(cell: str) -> bool:
    """Is a decimal-table cell a number (printed as maths)?  Anything else,
    such as a token label, is text and escaped, even when it starts with a digit."""
    return _NUMBER.fullmatch(cell) is not None


class DocLoop:
    """``loop`` inside the ``doc`` block: this document's place among the documents."""

    __slots__ = ("index0", "length")

    def __init__(self, index0: int, length: int):
        self.index0, self.length = index0, length

    index = property(lambda self: self.index0 + 1)
    first = property(lambda self: self.index0 == 0)
    last = property(lambda self: self.index0 == self.length - 1)
    revindex = property(lambda self: self.length - self.index0)
    revindex0 = property(lambda self: self.length - self.index0 - 1)


def _frames(tb) -> list[tuple[str, int]]:
    """(file name, line) of each frame of a traceback, outermost first."""
    out = []
    while tb is not None:
        out.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return out


def _check_outside_blocks(env: jinja2.Environment, name: str) -> None:
    """The outermost template may print nothing outside its blocks: files
    are joined from the ``head``, ``doc`` and ``foot`` blocks, so such text
    would be lost.  Loops around blocks, ``set``, macros and imports are fine."""
    from jinja2 import nodes

    def stray(body):
        for node in body:
            if isinstance(node, nodes.For):
                yield from stray(node.body)
                yield from stray(node.else_)
            elif isinstance(node, nodes.Output):
                yield from (n for n in node.nodes if not (isinstance(n, nodes.TemplateData) and not n.data.strip()))
            elif not isinstance(
                node,
                (
                    nodes.Block,
                    nodes.Extends,
                    nodes.Assign,
                    nodes.AssignBlock,
                    nodes.Macro,
                    nodes.Import,
                    nodes.FromImport,
                ),
            ):
                yield node

    node = next(stray(env.parse(env.loader.get_source(env, name)[0]).body), None)
    if node is not None:
        raise TemplateError(
            f"{name}, line {node.lineno}: output outside the head, doc and foot blocks "
            f"would be lost; move it into one of them"
        )


def _extends(env: jinja2.Environment, name: str) -> str | None:
    """The template ``name`` extends, if it does (with a constant name)."""
    from jinja2 import nodes

    source = env.loader.get_source(env, name)[0]
    node = env.parse(source).find(nodes.Extends)
    if node is None:
        return None
    if not isinstance(node.template, nodes.Const):
        raise TemplateError(f"{name}: extends a template by a computed name; name it in quotes")
    return node.template.value
