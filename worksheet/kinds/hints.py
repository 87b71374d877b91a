r"""What a student is told about each named mistake (:mod:`worksheet.kinds.mistakes`).

A :class:`~worksheet.kinds.mistakes.Mistake`'s ``sentence`` and ``maths`` say
what went wrong in the third person, for a report or a key.  Its ``hint``
(:data:`HINTS`) speaks to the student who made it, in the second person, with
the maths as prose with inline ``$...$`` (the same maths allow-list as every
prose text): "You divided by $\sqrt{d_\mathrm{model}}$ instead of
$\sqrt{d_k}$."  A Moodle answer's feedback and the practice page show it;
:func:`parens_maths` writes its maths as ``\( ... \)`` for MathJax.
"""

from __future__ import annotations

__all__ = ["HINTS", "hint", "parens_maths"]

HINTS: dict[str, str] = {
    "no-scaling": r"You did not divide the scores by $\sqrt{d_k}$: divide each score by $\sqrt{d_k}$.",
    "scaled-by-d_k": r"You divided the scores by $d_k$; divide them by $\sqrt{d_k}$ instead.",
    "scaled-by-sqrt-d_model": r"You divided by $\sqrt{d_\mathrm{model}}$ instead of $\sqrt{d_k}$, "
    r"the width of the keys.",
    "scores-transposed": r"You computed $K Q^\top$ instead of $Q K^\top$: row $i$ is query $i$, column $j$ is key $j$.",
    "softmax-over-columns": "You took the softmax down each column; take it along each row (over the keys), "
    "so that each row sums to 1.",
    "mask-wrong-triangle": r"You masked the wrong triangle: the entries with $j > i$ (later tokens) become $-\infty$.",
    "mask-zero-instead-of-inf": r"You set the masked scores to 0 instead of $-\infty$, "
    r"so the masked positions still get weight.",
    "mask-after-softmax": r"You zeroed the weights above the diagonal after the softmax without renormalising; "
    r"mask the scores with $-\infty$ before the softmax, so that each row sums to 1.",
    "cross-sources-swapped": "You swapped the sources: in encoder-decoder attention the queries come from the "
    "decoder, the keys and values from the encoder output.",
    "weights-times-X": r"You multiplied the weights by the inputs $X$; multiply them by the values $V$.",
    "sample-variance": r"You divided the variance by $d - 1$ (sample variance); divide by $d$ "
    r"(population variance).",
    "normalized-across-tokens": "You took the mean and variance down each column (across tokens); "
    "take them along each row, across one token's features.",
    "missing-residual": r"You left out the residual: layer norm is applied to $x + \mathrm{Sublayer}(x)$.",
    "pe-sin-cos-swapped": r"You swapped $\sin$ and $\cos$: even columns ($2i$) take the sine, "
    r"odd columns ($2i+1$) the cosine.",
    "pe-index-not-halved": r"You used the column index in the exponent; columns $2i$ and $2i+1$ share the angle "
    r"$\mathrm{pos} / \mathrm{base}^{2i/d_\mathrm{model}}$.",
    "concat-wrong-axis": "You stacked the heads along the wrong axis: put them side by side, one row per token.",
    "missing-W_O": r"You did not multiply the concatenated heads by $W^O$.",
    "relu-after-second-layer": "You applied the ReLU after the second linear layer; apply it after the first.",
    "tanh-for-sigmoid": r"You swapped $\sigma$ and $\tanh$ on a gate: the gates ($f, i, o$; $z, r$) use the "
    r"logistic $\sigma$, the candidate ($g$; $n$) uses $\tanh$.",
    "c-without-forget": r"You left the forget term out of the cell state: "
    r"$c_t = f_t \odot c_{t-1} + i_t \odot g_t$.",
    "h-from-c-without-tanh": r"You computed $o_t \odot c_t$; the cell state goes through $\tanh$ first: "
    r"$h_t = o_t \odot \tanh(c_t)$.",
    "gru-cho-update": r"You swapped $z_t$ and $1 - z_t$ in the update: this GRU (PyTorch's) has "
    r"$h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}$.",
    "reset-outside": r"You applied the reset gate to $h_{t-1}$ before the product with $W_{hn}$; "
    r"this GRU (PyTorch's) uses $r_t \odot (h_{t-1} W_{hn} + b_{hn})$.",
    "truncated": "You cut the decimal off; round it instead (the digits are right, the last one should be rounded).",
    "arithmetic-slip": "You made a slip: exactly one entry is wrong; check its arithmetic again.",
}


def hint(code: str, otherwise: str = "") -> str:
    """The student's hint for a mistake code (prose with ``$...$``); ``otherwise``
    for a code without one (:attr:`Mistake.hint` gives the catalogue's sentence)."""
    return HINTS.get(code, otherwise)


def parens_maths(text: str) -> str:
    r"""Prose with ``$...$`` maths as prose with ``\( ... \)`` maths (MathJax's
    inline delimiters); an unpaired last ``$`` stays as it is."""
    parts = str(text).split("$")
    if len(parts) % 2 == 0:  # an odd number of $: the last opens nothing
        parts[-2:] = [parts[-2] + "$" + parts[-1]]
    return "".join(rf"\({p}\)" if k % 2 else p for k, p in enumerate(parts))
