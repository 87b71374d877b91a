"""The conventions several kinds state, each a :class:`Convention`: its key,
its text (format-neutral: inline LaTeX between ``$``, so every format prints
the same words) and what a calculator sheet says instead.

A kind states its conventions in ``CONVENTIONS``, a tuple of these records
in the order its sheet states them; a convention only one kind states lives
in that kind's module.  :func:`worksheet.kinds.conventions` picks those a
sheet states and gives the Document their texts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..solution.maths import Prose, as_prose

__all__ = ["Convention"]


@dataclass(frozen=True)
class Convention:
    """One convention a sheet may state."""

    key: str  # what the registry orders by (``rows``, ``exact``, ...)
    text: Prose  # prose: words with inline formulas (a string given, inline LaTeX between $, is read once)
    calculator: Prose | None = None  # a calculator sheet's words (no tables to read "by hand"); None: the same

    def __post_init__(self):
        object.__setattr__(self, "text", as_prose(self.text))
        if self.calculator is not None:
            object.__setattr__(self, "calculator", as_prose(self.calculator))

    def text_for(self, numbers: str) -> Prose:
        """The text a sheet of ``numbers`` (hand, calculator, own) states."""
        return self.calculator if numbers == "calculator" and self.calculator else self.text


ROWS = Convention("rows", r"Tokens are rows (row-vector convention): $Q = X W^Q$, $K = X W^K$, $V = X W^V$.")
TOKEN_ROWS = Convention("token_rows", r"Tokens are rows (row-vector convention): row $i$ of $X$ is token $i$.")
SCORES = Convention(
    "scores",
    r"Scores $S = Q K^\top$: row $i$ is query $i$, column $j$ is key $j$; "
    r"scaled scores are $S' = S / \sqrt{d_k}$.",
)
SOFTMAX = Convention("softmax", r"The softmax runs along each row (over the keys), so every row of weights sums to 1.")
SOFTMAX_FORM = Convention(
    "softmax_form",
    r"Softmax by hand: subtract the row maximum $m_i$, "
    r"$\alpha_{ij} = e^{s_{ij} - m_i} / \sum_k e^{s_{ik} - m_i}$ (every exponent $\le 0$).",
    calculator=r"Softmax: $\alpha_{ij} = e^{s_{ij} - m_i} / \sum_k e^{s_{ik} - m_i}$ with $m_i$ the row "
    r"maximum (subtracting it changes nothing and keeps every exponent $\le 0$).",
)
OUTPUT = Convention("output", r"Output $Z = A V$: row $i$ is query $i$'s weighted sum of the values.")
CAUSAL = Convention(
    "causal",
    r"Causal mask: entries with $j > i$ become $-\infty$ before the softmax, so their weights are exactly 0.",
)
HEADS = Convention(
    "heads",
    r"Head $h$ uses the $h$-th block of $d_k$ columns of $W^Q$, $W^K$, $W^V$; "
    r"$\mathrm{concat} = [\mathrm{head}_1 \cdots \mathrm{head}_H]$, output $= \mathrm{concat}\, W^O$.",
)
CROSS = Convention(
    "cross", r"Cross-attention: the queries come from the decoder, the keys and values from the encoder output."
)
PE = Convention(
    "pe",
    r"$\mathrm{PE}_{\mathrm{pos},2i} = \sin(\mathrm{pos} / \mathrm{base}^{2i/d_\mathrm{model}})$, "
    r"$\mathrm{PE}_{\mathrm{pos},2i+1} = \cos(\cdot)$ of the same angle: positions and columns "
    r"count from 0, angles are in radians.",
)
LAYER_NORM = Convention(
    "layer_norm",
    r"Layer norm works on each token (row) across its $d$ features, with the population "
    r"variance (divide by $d$): $y = \gamma (x - \mu) / \sqrt{\sigma^2 + \varepsilon} + \beta$.",
)
FFN = Convention(
    "ffn",
    r"Feed-forward: $\mathrm{ReLU}(X W_1 + b_1) W_2 + b_2$, each token (row) on its own; "
    r"a bias row is added to every row.",
)
RECURRENT = Convention(
    "recurrent",
    r"Recurrent cells: rows are time steps; a gate is $\sigma(a) = 1 / (1 + e^{-a})$ of its "
    r"pre-activation, and $\odot$ multiplies entry by entry.",
)
EXACT = Convention("exact", r"Exact answers are given where they are short; decimals are rounded to 4 places.")
