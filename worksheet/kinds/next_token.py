"""The decoder's last step: vocabulary logits, softmax, greedy next token.

    logits        z  = h W_vocab                  # h: (1, d), W_vocab: (d, |vocab|): the model's logits
    scaled_logits z' = z / T                      # only when T != 1 (T > 0)
    probabilities p  = softmax(z')                # (1, |vocab|), sums to exactly 1
    prediction    y  = argmax_j p_j               # greedy: the most probable token

Steps: ``logits``, ``scaled_logits`` (T != 1 only), ``probabilities``,
``prediction``.  A one-row problem, so entries carry one 1-based index
(``z_2``, ``p_4``: token 4 of the vocabulary).

The ``prediction`` step's exact entry is the chosen token's label (a string)
and its value the label's 0-based index in the vocabulary (docs/reference.md).  A tie
goes to the first token in the vocabulary order; the sheet says so.  The
choice is made on the exact logits (rational numbers: the inputs and T are
rational) and checked against the float computation here, because
``model.verify`` skips label entries.  Since the softmax is increasing and
T > 0, the temperature changes the probabilities but never the greedy choice;
the key says so.

The default vocabulary is "Je suis étudiant" plus "<eos>"; given |vocab|
columns and no labels, the labels are a lecture sentence of |vocab| - 1 words
plus "<eos>".  Labels must be distinct.

Hand mode draws h from {-1, 0, 1, 2} and W_vocab from {-1, 0, 1} (integer
h W_vocab) and retries (boundedly) until every logit lies in [-6, 6], they
span at most 4 (so the e^x table stays short) and the largest is unique, so
the greedy choice needs no tie rule.  With T != 1 the logits are integers
and the scaled logits the integers divided by T.  Calculator mode uses one-decimal entries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..steps import precise
from ..steps import scaled_dot_product as blocks
from ..policy.errors import InputError, ParamError, VerificationError
from ..solution.maths import as_prose
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.problem import Matrix, Problem, shape, to_array
from ..steps import line_trees as lines
from . import base
from . import shared_conventions as cv
from .shared_conventions import Convention

TITLE = "Next token: vocabulary logits, softmax and greedy choice"
VOCAB_CONVENTION = Convention(
    "vocab",
    r"The softmax runs over the vocabulary, so the probabilities sum to 1; tokens are numbered "
    r"from 1, as the columns.",
)
CONVENTIONS = (VOCAB_CONVENTION, cv.SOFTMAX_FORM, cv.EXACT)
INPUTS = ("h", "W_vocab")
EOS = "<eos>"
VOCAB = ("Je", "suis", "étudiant", EOS)  # the default vocabulary


LOGITS, SCALED, PROBS = m.sym("z"), m.sym("z", prime=1), m.sym("p")  # z, z', p
TEMPERATURE, CHOICE = m.sym("T"), m.hat(m.sym("y"))  # T, y-hat
W_VOCAB = m.sym("W", sub=m.sym("vocab"))
# the formulas every problem prints: made once, so each is printed once
LOGITS_FORMULA = line(LOGITS, "=", m.sym("h"), m.thin(), W_VOCAB)  # z = h W_vocab
PROBS_FORMULA = {
    False: line(PROBS, "=", m.call("softmax", LOGITS)),  # p = softmax(z)
    True: line(PROBS, "=", m.call("softmax", SCALED)),  # p = softmax(z'), with a temperature
}
CHOICE_FORMULA = line(CHOICE, "=", m.named("arg"), m.named("max", "j"), m.thin(), m.sym("p", sub="j"))


@dataclass(frozen=True)
class Params(base.Params):
    d_model: int = 3  # d, the width of the decoder output h
    vocab: tuple[str, ...] | None = None  # vocabulary labels in order; None: "Je suis étudiant <eos>"
    temperature: Fraction = Fraction(1)  # T > 0 divides the logits; 1 leaves them as they are

    def validate(self):
        base.positive("--d-model", self.d_model, 16)
        if self.vocab is not None:
            if not 1 <= len(self.vocab) <= 12:
                raise ParamError(f"vocab must have between 1 and 12 labels, not {len(self.vocab)}")
            dup = next((v for k, v in enumerate(self.vocab) if v in self.vocab[:k]), None)
            if dup is not None:
                raise ParamError(f"vocab has the label '{dup}' twice; labels must be distinct")
        if not self.temperature > 0:
            raise ParamError(f"temperature must be greater than 0, not {self.temperature}")

    @property
    def labels(self) -> tuple[str, ...]:
        return VOCAB if self.vocab is None else self.vocab


def default_vocab(size: int) -> tuple[str, ...]:
    """Labels for ``size`` columns: a lecture sentence of size - 1 words, then <eos>."""
    return VOCAB if size == len(VOCAB) else base.default_tokens(size - 1) + (EOS,) if size > 1 else (EOS,)


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    d, v, T = params.d_model, len(params.labels), params.temperature
    if params.numbers == "calculator":
        return {"h": base.decimal_matrix(rng, 1, d), "W_vocab": base.decimal_matrix(rng, d, v)}

    def make():
        return {
            "h": base.int_matrix(rng, 1, d, (-1, 0, 1, 2), (0.2, 0.25, 0.35, 0.2)),
            "W_vocab": base.int_matrix(rng, d, v, (-1, 0, 1), (0.3, 0.35, 0.35)),
        }

    def ok(m):
        z = to_array(m["h"]) @ to_array(m["W_vocab"]) / float(T)
        if v == 1:
            return bool(np.abs(z).max() <= 6)
        return blocks.pleasant_logits(z) and np.count_nonzero(z == z.max()) == 1

    return base.retry(
        "next-token", make, ok, f"d_model={d}, |vocab|={v}, temperature={T} with logits in [-6, 6] and one largest"
    )


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The independent float64 computation every exact step is checked against.

    ``prediction`` is the 0-based index of the first largest probability.

    ``given`` maps step names to values that replace the computed ones, and
    every later step is computed from them (``worksheet check`` marks a step
    "carried forward" when it follows from a student's own earlier answers).
    """
    g = given or {}
    temperature = params.temperature
    logits = base.given_or(g, "logits", lambda: inputs["h"] @ inputs["W_vocab"])
    out = {"logits": logits}
    z = logits
    if temperature != 1:
        z = out["scaled_logits"] = base.given_or(g, "scaled_logits", lambda: logits / precise.number(temperature))
    p = base.given_or(g, "probabilities", lambda: base.np_softmax_all(z))
    pred = base.given_or(g, "prediction", lambda: precise.array([[int(np.argmax(p[0]))]]))
    return {**out, "probabilities": p, "prediction": pred}


def check_inputs(inputs: dict[str, Matrix]) -> None:
    base.require_inputs(
        inputs, ("h", "W_vocab"), {"h": "the decoder output, one row", "W_vocab": "one column per vocabulary token"}
    )
    blocks.require_shape("h", inputs["h"], 1, None, "the decoder output for one position is one row")
    blocks.require_matmul("h", inputs["h"], "W_vocab", inputs["W_vocab"])


def _first_max(values) -> int:
    """Index of the largest value; a tie goes to the first."""
    best = 0
    for k, x in enumerate(values):
        if x > values[best]:
            best = k
    return best


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    check_inputs(inputs)
    h, W = inputs["h"], inputs["W_vocab"]
    d, size = shape(W)
    if params.vocab is not None and len(params.vocab) != size:
        raise InputError(f"{len(params.vocab)} labels for the {size} columns of W_vocab", field="vocab")
    vocab = params.vocab or default_vocab(size)
    T = params.temperature
    actual = base.solved_params(params, d_model=d, vocab=vocab)
    p = Problem(
        "next-token",
        TITLE,
        actual,
        seed=seed,
        intro=m.prose(
            as_prose(
                "The decoder's output at the last position is $h$; the final linear layer "
                r"$W_\mathrm{vocab}$ has one column per token of the vocabulary "
            ),
            ", ".join(vocab),  # the user's tokens: words
            *((" and the temperature is ", m.eq(TEMPERATURE, m.atom(T))) if T != 1 else ()),
            ". Compute the logits, their softmax and the greedy prediction "
            "(the most probable token; a tie goes to the first in the vocabulary).",
        ),
    )
    p.add_input("h", h)
    p.add_input("W_vocab", W, cols=vocab, latex_name=W_VOCAB)
    ref = reference({k: q.value for k, q in p.inputs.items()}, params)

    # 1) logits: one score per vocabulary token, h W_vocab (the model's logits)
    products = blocks.matmul(h, W)[0]
    j = min(1, size - 1)  # the representative logit: the second, unless its product is 0
    if products[j] == 0 and any(x != 0 for x in products):
        j = next(k for k, x in enumerate(products) if x != 0)
    col = [row[j] for row in W]
    calc = blocks.calculator(p)
    work = [
        line(
            m.entry(LOGITS, j),
            m.thick(),
            m.paren(lines.latex_text(vocab[j])),
            "=",
            m.sym("h"),
            "⋅",
            m.sym("W", sub=m.line(":", ",", j + 1)),
            "=",
            lines.dot_latex(h[0], col, calc),
            "=",
            lines.nx(products[j]) if calc else m.atom(products[j]),
            lines.terms_count(len(col)),
        )
    ]
    p.add_step(
        "logits",
        (products,),
        ref["logits"],
        title="Logits (one score per vocabulary token)",
        formula=LOGITS_FORMULA,
        work=work,
        cols=vocab,
        latex_name=LOGITS,
    )
    z, src = products, "z"
    # 2) temperature: divide the logits by T (T != 1 only)
    if T != 1:
        z, src = tuple(x / T for x in products), "z'"  # rational: h, W_vocab and T are
        p.add_step(
            "scaled_logits",
            (z,),
            ref["scaled_logits"],
            title="Logits divided by the temperature",
            formula=line(SCALED, "=", m.frac(LOGITS, TEMPERATURE), ",", m.quad(), TEMPERATURE, "=", m.atom(T)),
            work=[
                m.eq(
                    m.entry(SCALED, j),
                    m.frac(m.entry(LOGITS, j), TEMPERATURE),
                    m.frac(m.atom(products[j]), m.atom(T)),
                    m.atom(z[j]),
                )
            ],
            cols=vocab,
            latex_name=SCALED,
            note=("A temperature above 1 flattens the distribution, below 1 sharpens it."),
        )
    # 3) softmax over the vocabulary
    P = blocks.softmax_step(
        p,
        "probabilities",
        (z,),
        ref["probabilities"],
        sym="p",
        src_sym=src,
        title="Probabilities (softmax over the vocabulary)",
        formula=PROBS_FORMULA[T != 1],
        cols=vocab,
        latex_name=PROBS,
        vector=True,
    )
    # 4) greedy choice on the exact logits (the softmax keeps their order)
    best = _first_max(z)
    ref_best = int(ref["prediction"][0, 0])
    probs = ref["probabilities"][0]
    if ref_best != best and not math.isclose(probs[ref_best], probs[best], rel_tol=1e-12):
        raise VerificationError(f"next-token.prediction: exact choice {best} != float choice {ref_best}")
    ties = [k for k, x in enumerate(z) if x == z[best]]
    chain = p.steps[-1].chain  # by hand: the probability as the table of decimals shows it
    top = lines.approx_number(P[0][best] if chain is None else chain[0][best])
    label = lines.latex_text(vocab[best])
    work = [
        line(m.named("max", "j"), m.sym("p", sub="j"), "=", m.entry(PROBS, best), "≈", top, m.quad(), m.paren(label)),
        line(CHOICE, "=", label, m.quad(), m.paren(m.text(f"token {best + 1} of {size}"))),
    ]
    if len(ties) > 1:
        tied = m.join([lines.latex_text(vocab[k]) for k in ties], ",")
        work.insert(1, line(m.text("tie between "), tied, ":", m.text("the first in the vocabulary wins")))
    note = (
        "Greedy decoding takes the most probable token; a tie goes to the first in the vocabulary. "
        "The softmax keeps the order of the logits, so the choice is also the largest logit"
        + (": dividing by $T > 0$ changes the probabilities but never the greedy choice." if T != 1 else ".")
        + (" Predicting <eos> ends the sentence." if vocab[best] == EOS else "")
    )
    # (the JSON value of this step is the 0-based index; that is for tools, not for a printed key)
    p.add_step(
        "prediction",
        ((vocab[best],),),
        np.array([[float(best)]]),
        title="Prediction (greedy: the most probable token)",
        formula=CHOICE_FORMULA,
        work=work,
        note=note,
        cols=("next token",),
        latex_name=CHOICE,
    )
    return p
