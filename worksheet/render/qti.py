"""QTI 2.1: an IMS content package (zip) that OpenOLAT/ONYX, Inspera, TAO,
Blackboard and other platforms import.

``--format qti`` writes ``NAME-qti.zip`` (role ``package``) holding:

* ``imsmanifest.xml``: the IMS Content Packaging 1.1 manifest, one resource
  for the test and one per item;
* ``test.xml``: an ``assessmentTest`` with one ``testPart`` and, inside a
  section for the whole sheet, one section per problem (``Problem k``).  With
  ``--variants N`` that section lists problem k of every variant and selects
  one of them (``<selection select="1"/>``), as the Moodle bank's category per
  problem lets a quiz draw a random question: each student gets one variant
  of each problem.  (One section per variant, of which one is selected, would
  keep a student's problems in one variant, but needs a selection of
  sections, which fewer importers support; no item depends on another, so
  the export selects per problem.)  ``SCORE`` is the sum of the items' scores;
* ``items/item-v01-p1.xml`` ...: one ``assessmentItem`` per problem and
  variant (:mod:`worksheet.render.assessment`).

The zip is the same bytes for the same seed on every machine: entries stored
(not compressed: zlib's output may differ between builds of it), in a fixed
order, each dated 1980-01-01 00:00 with the same permissions.

What QTI cannot carry: error carried forward.  A QTI item compares each
answer with fixed values; it cannot recompute a later step from a student's
own wrong earlier answer.  ``worksheet check`` does (see docs/qti.md).
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Sequence

from .artefacts import Artefact, Format
from .assessment import QTI, QTI_XSD, XSI, document, el, item

CP = "http://www.imsglobal.org/xsd/imscp_v1p1"
CP_XSD = "http://www.imsglobal.org/xsd/imscp_v1p1.xsd"
DATE = (1980, 1, 1, 0, 0, 0)  # every entry's date: the zip's earliest, so no clock enters the file


def _ident(variant: str | None) -> str:
    """``item-v01-`` (or ``item-`` without variants): letters and digits of the id only."""
    return f"item-{re.sub(r'[^A-Za-z0-9]', '', variant)}-" if variant else "item-"


class QtiPackage(Format):
    """The QTI 2.1 package of a sheet or an exam's variants (see the module's docstring)."""

    name = "qti"
    ext = "zip"
    binary = True
    student_rank = 5

    def __init__(self, templates=None):
        pass  # no templates: the items are written from the model (worksheet.render.assessment)

    def artefacts(self) -> tuple[Artefact, ...]:
        return (Artefact("package", "-qti.zip"),)

    def part(self, doc, index, count, role, *, variants=True, bank="worksheet") -> tuple:
        """``((k, item identifier, its XML), ...)`` for the document's problems."""
        prefix = _ident(doc.variant)
        out = []
        for k, p in enumerate(doc.problems, 1):
            ident = f"{prefix}p{k}"
            title = f"{bank}{' ' + doc.variant if doc.variant else ''} P{k}: {p.title}"
            out.append((k, ident, item(doc, p, k, ident, title)))
        return tuple(out)

    def join(self, outlines, parts, role, *, variants=True) -> bytes:
        entries = [(ident, xml) for part in parts for _, ident, xml in part]
        files = {
            "imsmanifest.xml": manifest([ident for ident, _ in entries]),
            "test.xml": assessment_test(outlines[0].title if outlines else "", parts),
        }
        files.update((f"items/{ident}.xml", xml) for ident, xml in entries)
        return package(files)


def assessment_test(title: str, parts: Sequence[tuple]) -> str:
    """The test: a section per problem k selecting one of its variants' items."""
    attrs = {"xmlns": QTI, "xmlns:xsi": XSI, "xsi:schemaLocation": f"{QTI} {QTI_XSD}"}
    root = el(None, "assessmentTest", **attrs, identifier="test", title=title or "worksheet")
    o = el(root, "outcomeDeclaration", identifier="SCORE", cardinality="single", baseType="float")
    el(el(o, "defaultValue"), "value", "0")
    tp = el(root, "testPart", identifier="part", navigationMode="nonlinear", submissionMode="individual")
    sheet = el(tp, "assessmentSection", identifier="sheet", title=title or "worksheet", visible="true")
    problems: dict[int, list[str]] = {}
    for part in parts:
        for k, ident, _ in part:
            problems.setdefault(k, []).append(ident)
    for k, idents in problems.items():
        section = el(sheet, "assessmentSection", identifier=f"problem-{k}", title=f"Problem {k}", visible="false")
        if len(idents) > 1:
            el(section, "selection", select="1")
        for ident in idents:
            el(section, "assessmentItemRef", identifier=ident, href=f"items/{ident}.xml")
    total = el(el(el(root, "outcomeProcessing"), "setOutcomeValue", identifier="SCORE"), "sum")
    el(total, "testVariables", variableIdentifier="SCORE")
    return document(root)


def manifest(items: Sequence[str]) -> str:
    """The content package's manifest: the test's resource, then each item's."""
    attrs = {"xmlns": CP, "xmlns:xsi": XSI, "xsi:schemaLocation": f"{CP} {CP_XSD}"}
    root = el(None, "manifest", **attrs, identifier="manifest")
    meta = el(root, "metadata")
    el(meta, "schema", "QTIv2.1 Package")
    el(meta, "schemaversion", "1.0.0")
    el(root, "organizations")
    resources = el(root, "resources")
    test = el(resources, "resource", identifier="test", type="imsqti_test_xmlv2p1", href="test.xml")
    el(test, "file", href="test.xml")
    for ident in items:
        el(test, "dependency", identifierref=ident)
    for ident in items:
        r = el(resources, "resource", identifier=ident, type="imsqti_item_xmlv2p1", href=f"items/{ident}.xml")
        el(r, "file", href=f"items/{ident}.xml")
    return document(root)


def package(files: dict[str, str]) -> bytes:
    """A zip of ``files`` (in order), the same bytes on every machine."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, DATE)
            info.create_system = 3  # Unix, whatever the machine (ZipInfo says 0 on Windows)
            info.external_attr = 0o100644 << 16
            z.writestr(info, text.encode("utf-8"))
    return out.getvalue()
