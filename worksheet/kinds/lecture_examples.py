"""Reference examples: the numbers from the lectures (worksheet list --examples).

Each example is an input table exactly as a user would write it in a file
(decimals as text, so ``"0.2"`` is 1/5), solved through the same path as
``worksheet solve KIND --input FILE``.  ``worksheet list --examples`` lists
them; ``worksheet solve --example NAME`` solves one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    kind: str
    summary: str
    table: dict


def _thinking_machines() -> dict:
    # 64-dimensional q and k with q1.k1 = 112 and q1.k2 = 96, as on the slide;
    # q2 (for "Machines") is ours: q2.k1 = 96 and q2.k2 = 88.
    q1 = [2] * 56 + [0] * 8
    k1 = [1] * 56 + [0] * 8
    k2 = [1] * 48 + [0] * 16
    q2 = [2] * 40 + [1] * 8 + [0] * 16
    return {"Q": [q1, q2], "K": [k1, k2], "V": [[1, 0, 2], [0, 1, -1]], "tokens": ["Thinking", "Machines"]}


_MASKING = [
    ["0.5", "0.2", "0.3", "0.1"],
    ["0.1", "-0.4", "0.3", "0.7"],
    ["-0.1", "0.7", "0.8", "0.7"],
    ["0.1", "-0.1", "0.4", "0.5"],
]


def _double(text: str) -> str:
    """Twice a one-decimal number, as text (exact: no float)."""
    sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, _, frac = digits.partition(".")
    tenths = 2 * (int(whole) * 10 + int(frac or 0))
    return f"{sign}{tenths // 10}.{tenths % 10}"


_LARGE_RED_DOG = [
    ["0.2", "-0.8", "-0.6", "0.9", "0.1"],
    ["-0.9", "0.3", "0.4", "0.6", "-0.1"],
    ["0.5", "0.6", "-0.8", "0.7", "0.7"],
    ["0.6", "0.0", "0.8", "0.9", "0.4"],
]


def _lstm_forget() -> dict:
    # x = [1, 0], h0 = 0: each gate's pre-activation is the first row of its W
    # (W_h and b are 0): f = [2, -2], i = [0, 1], g = [1, -1], o = [1, 0].
    zero = [[0, 0], [0, 0]]
    rows = {"f": [2, -2], "i": [0, 1], "g": [1, -1], "o": [1, 0]}
    table = {"x": [[1, 0]], "h0": [[0, 0]], "c0": [[1, -1]]}
    for g, row in rows.items():
        table.update({f"W_{g}": [row, [0, 0]], f"W_h{g}": zero, f"b_{g}": [[0, 0]]})
    return table


EXAMPLES: dict[str, Example] = {
    "thinking-machines": Example(
        "attention",
        "q1.k1 = 112, q1.k2 = 96 with d_k = 64: scaled 14 and 12, weights 0.8808 and 0.1192",
        _thinking_machines(),
    ),
    "scaling": Example(
        "softmax-scaling",
        "softmax of [112, 96] raw, / sqrt(64) and / 64: too peaked, right, too flat",
        {"scores": [[112, 96]], "d_k": 64},
    ),
    "masking-4x4": Example(
        "attention",
        "the lecture's 4 x 4 scores under a causal mask (Q = 2 S, K = I, d_k = 4, so S' = S)",
        {
            "Q": [[_double(x) for x in row] for row in _MASKING],
            "K": [[1 if i == j else 0 for j in range(4)] for i in range(4)],
            "V": [[1, 0], [0, 1], [1, 1], [-1, 1]],
            "causal": True,
        },
    ),
    "pe-d5": Example(
        "positional-encoding",
        "sinusoidal encoding with d_model = 5 at positions 0 and 1",
        {"d_model": 5, "positions": [0, 1]},
    ),
    "large-red-dog": Example(
        "positional-encoding",
        "embeddings of 'The Large Red Dog' (d_model = 5) plus their positional encoding",
        {"X": _LARGE_RED_DOG, "d_model": 5, "tokens": ["The", "Large", "Red", "Dog"]},
    ),
    "lstm-forget": Example(
        "lstm-cell",
        "one LSTM step from h0 = 0: the forget gate keeps unit 1 of c0 (sigma(2)) and drops unit 2 (sigma(-2))",
        _lstm_forget(),
    ),
}
