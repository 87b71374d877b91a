"""Multi-head attention (Vaswani et al. 2017, section 3.2.2), row vectors.

Head h = 1..H uses the h-th block of d_k columns of W^Q, W^K and W^V
(columns (h-1) d_k + 1 .. h d_k; the values likewise with d_v = width(W^V) / H):

    Q_h = X W^Q_h,  K_h = X W^K_h,  V_h = X W^V_h      # (n, d_k), (n, d_k), (n, d_v)
    scores_h = Q_h K_h^T                                 # (n, n): row i = query i
    scaled_h = scores_h / sqrt(d_k)
    masked_h = scaled_h with -oo where j > i             # only with causal = true
    weights_h = softmax(scaled_h or masked_h) by rows
    head_h = weights_h V_h                               # (n, d_v)
    concat = [head_1 ... head_H]                         # (n, H d_v), side by side
    output = concat W^O                                  # (n, d_model)

Steps: per head h (1-based) ``Q_h``, ``K_h``, ``V_h``, ``scores_h``,
``scaled_h``, ``masked_h`` (causal only: the brief lists no mask step for this
kind; we add it, as the attention kind does, rather than hide the mask inside
``scaled_h``), ``weights_h``, ``head_h``; then ``concat``, ``output``.

Exact form of ``output``: ``concat W^O = sum_h head_h W^O_h`` (``W^O_h`` the
h-th block of d_v rows), and ``head_h W^O_h = softmax(S_h) (V_h W^O_h)``, so
each entry is written as a sum of H single ratios of exponential sums instead
of a sum of H d_v separate fractions.

Widths (parameters ``d_model`` and ``d_k``):

* ``d_k`` given: ``d_model`` defaults to H d_k, as the brief asks;
* only ``d_model`` given: ``d_k = d_model // H`` (the paper's choice); in hand
  mode the largest perfect square not above it, so sqrt(d_k) is an integer;
* neither: hand mode d_k = 4 per head (sqrt(d_k) = 2, so the scaled scores
  really differ from the scores) with d_model = 4 (W^Q is then 4 x H d_k,
  wider than X), calculator mode d_k = 2, d_model = 2 H.

The default is two tokens ("Thinking Machines"), so that the student sheet
of two heads with d_k = 4 fits 3 pages at full-size answer boxes (issue 9's
target); ``--seq-len 3`` gives three.

Hand mode draws X from {-1, 0, 1, 2} and W^Q, W^K, W^V, W^O from {-1, 0, 1},
so every Q_h, K_h, V_h and every per-head score is an integer and the scaled
scores have the integer sqrt(d_k) as denominator.  Draws are retried
(boundedly, then a GenerationError) until in every head the scaled scores lie
in [-6, 6], each row spans at most 4 and every head has a row that is not
constant (so the e^x table on the sheet stays short and no head's softmax is
trivially uniform),
every V_h is at least half non-zero, X has distinct non-zero rows and W^O
no zero row or column.
Calculator mode uses one-decimal entries in [-1, 1].

``solve`` also takes ``carry`` (a :class:`worksheet.steps.scaled_dot_product.Carry`): the encoder
block passes one so that long exact values are carried rounded.
"""

from __future__ import annotations

import dataclasses

import math
from dataclasses import dataclass

import numpy as np

from . import mistakes
from ..steps import precise
from ..steps import scaled_dot_product as blocks
from ..steps.entry_choice import rework_scaled, rework_weighted, teaching_entry, varied_row
from ..policy.errors import ShapeError
from ..solution.maths import Node
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.maths.nodes import Fence, Ident, Middle, Value
from ..solution.problem import Matrix, Problem, shape, to_array
from ..steps import line_trees as lines
from ..steps.softmax_steps import softmax_matmul_sum
from . import base
from . import shared_conventions as cv
from . import screen

TITLE = "Multi-head attention"
CONVENTIONS = (cv.ROWS, cv.SCORES, cv.SOFTMAX, cv.SOFTMAX_FORM, cv.OUTPUT, cv.CAUSAL, cv.HEADS, cv.EXACT)
INPUTS = ("X", "W_Q", "W_K", "W_V", "W_O")


@dataclass(frozen=True)
class Params(base.Params):
    conventions_if = {"causal": "causal"}  # the mask is stated only for a causal problem
    carries = True  # solve takes carry= (see base.Params.carries)
    heads: int = 2  # H, the number of heads
    seq_len: int = 2  # n, the number of tokens (rows of X); 2 keeps the default sheet to 3 pages
    d_model: int | None = None  # width of X and of the output; None: H * d_k
    d_k: int | None = None  # width of each head's queries, keys and values; None: see key_width
    causal: bool = False  # mask j > i in every head (decoder self-attention)
    tokens: tuple[str, ...] | None = None  # row labels; default: a lecture sentence of seq_len words

    def validate(self):
        base.positive("--heads", self.heads, 8)
        base.positive("--seq-len", self.seq_len, 12)
        if self.d_model is not None:
            base.positive("--d-model", self.d_model, 32)
        if self.d_k is not None:
            base.positive("--d-k", self.d_k, 64)
        base.require_square_d_k(self, self.key_width)

    @property
    def key_width(self) -> int:
        """d_k: given; else at least 4 in hand mode (a square: sqrt(d_k) an integer), 2 in calculator mode.

        With ``d_model`` given the paper's d_model // H is used when it is
        larger (hand mode: the largest square not above it).
        """
        if self.d_k is not None:
            return self.d_k
        least = 4 if self.numbers == "hand" else 2
        if self.d_model is not None:
            d_k = self.d_model // self.heads
            return max(least, math.isqrt(d_k) ** 2 if self.numbers == "hand" else d_k)
        return least

    @property
    def model_width(self) -> int:
        """d_model: given; else H d_k (the brief), but 4 in hand mode when d_k is not given either
        (a small X: W^Q is then d_model x H d_k, wider than X)."""
        if self.d_model is not None:
            return self.d_model
        if self.d_k is None and self.numbers == "hand":
            return 4
        return self.heads * self.key_width


def _shifted(S: np.ndarray) -> np.ndarray:
    """Scores less their row maximum: two heads with equal shifted scores have
    equal weights (the softmax ignores a row's shift)."""
    return S - S.max(axis=1, keepdims=True)


# long: the kind's hand-mode draw: one retry rule per guarantee the README lists
def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    n, d, d_k, H = params.seq_len, params.model_width, params.key_width, params.heads
    if params.numbers == "calculator":
        return {
            "X": base.decimal_matrix(rng, n, d),
            "W_Q": base.decimal_matrix(rng, d, H * d_k),
            "W_K": base.decimal_matrix(rng, d, H * d_k),
            "W_V": base.decimal_matrix(rng, d, H * d_k),
            "W_O": base.decimal_matrix(rng, H * d_k, d),
        }
    # sparser draws for wide matrices, so that dot products stay small
    z = min(0.75, max(0.45, 1 - 3 / d))
    weights = ((-1, 0, 1), ((1 - z) * 0.45, z, (1 - z) * 0.55))
    zx = max(0.3, 1 - 3 / d)
    x_values = ((-1, 0, 1, 2), ((1 - zx) * 0.3, zx, (1 - zx) * 0.5, (1 - zx) * 0.2))

    def make():
        return {
            "X": base.int_matrix(rng, n, d, *x_values),
            **{w: base.int_matrix(rng, d, H * d_k, *weights) for w in ("W_Q", "W_K", "W_V")},
            "W_O": base.int_matrix(rng, H * d_k, d, *weights),
        }

    def ok(m):  # decided on the high-precision values (screen.py): the same draw on any CPU
        return screen.screened("multi-head-attention", reference, params, m, lambda ref: test(m, ref))

    def test(m, ref):
        spans = []
        for h in range(1, H + 1):
            if np.abs(ref[f"scaled_{h}"]).max() > 6:
                return False
            S = ref[f"masked_{h}" if params.causal else f"scaled_{h}"]
            live = np.where(np.isinf(S), np.nan, S)
            spans.append(np.nanmax(live, axis=1) - np.nanmin(live, axis=1))
        # every head has a row whose weights are not all equal (else it teaches nothing)
        varied = n == 1 or all(s.max() > 0 for s in spans)
        spans = np.concatenate(spans)
        # heads that differ visibly (when there is room: at least 4 entries per matrix)
        if n * d_k >= 4 and not (
            _distinct([ref[f"{letter}_{h}"] for h in range(1, H + 1) for letter in "QKV"] + [to_array(m["X"])])
            and (n == 1 or _distinct([_shifted(ref[f"scaled_{h}"]) for h in range(1, H + 1)]))
        ):
            return False
        X, W_O, out = to_array(m["X"]), to_array(m["W_O"]), ref["output"]
        return (
            spans.max() <= 4
            and varied
            and all(np.count_nonzero(ref[f"V_{h}"]) >= max(1, ref[f"V_{h}"].size // 2) for h in range(1, H + 1))
            and np.abs(X).sum(axis=1).min() > 0
            and (len({tuple(r) for r in X}) == len(X) or d == 1)
            and np.abs(W_O).sum(axis=0).min() > 0
            and np.abs(W_O).sum(axis=1).min() > 0
            and np.abs(out).sum(axis=0).min() > 1e-9
        )

    return base.retry(
        "multi-head-attention",
        make,
        ok,
        f"heads={H}, seq_len={n}, d_model={d}, d_k={d_k} with scaled scores in [-6, 6]",
    )


def _distinct(mats: list[np.ndarray]) -> bool:
    """No two of the matrices are equal (heads that differ visibly: Q_2 is not V_1, K_2 not K_1)."""
    return all(a.shape != b.shape or not np.array_equal(a, b) for k, a in enumerate(mats) for b in mats[k + 1 :])


def head_columns(W: np.ndarray | Matrix, h: int, width: int):
    """Columns of head h (1-based) of a projection: the h-th block of ``width``."""
    if isinstance(W, np.ndarray):
        return W[:, (h - 1) * width : h * width]
    return blocks.columns(W, (h - 1) * width, h * width)


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The independent float64 computation every exact step is checked against
    (:func:`np_steps` with ``params.heads`` and ``params.causal``).

    ``given`` maps step names to values that replace the computed ones, and
    every later step is computed from them (``worksheet check`` marks a step
    "carried forward" when it follows from a student's own earlier answers).
    """
    return np_steps(inputs, params.heads, params.causal, given=given)


def np_steps(
    inputs: dict[str, np.ndarray], heads: int, causal: bool, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The float64 steps of H heads (the block kinds call it too: with an
    input ``H_enc`` the keys and values come from it, the decoder's cross-attention)."""
    g = given or {}
    X = inputs["X"]
    src = inputs["H_enc"] if inputs.get("H_enc") is not None else X  # keys and values: memory or X
    d_k, d_v = inputs["W_Q"].shape[1] // heads, inputs["W_V"].shape[1] // heads
    out = {}

    def put(name, compute):
        out[name] = base.given_or(g, name, compute)
        return out[name]

    for h in range(1, heads + 1):
        Q = put(f"Q_{h}", lambda: X @ head_columns(inputs["W_Q"], h, d_k))
        K = put(f"K_{h}", lambda: src @ head_columns(inputs["W_K"], h, d_k))
        V = put(f"V_{h}", lambda: src @ head_columns(inputs["W_V"], h, d_v))
        put(f"scores_{h}", lambda: Q @ K.T)
        logits = put(f"scaled_{h}", lambda: out[f"scores_{h}"] / precise.sqrt(d_k))
        if causal:
            logits = put(f"masked_{h}", lambda: blocks.np_causal(logits))
        put(f"weights_{h}", lambda: blocks.np_softmax(logits))
        put(f"head_{h}", lambda: out[f"weights_{h}"] @ V)
    put("concat", lambda: np.hstack([out[f"head_{h}"] for h in range(1, heads + 1)]))
    put("output", lambda: out["concat"] @ inputs["W_O"])
    return out


def _dims(name: str, m: Matrix) -> str:
    return f"{name} is {shape(m)[0]} x {shape(m)[1]}"


def check_inputs(inputs: dict[str, Matrix], heads: int) -> tuple[int, int]:
    """Validate names and shapes; return (d_k, d_v)."""
    base.require_inputs(inputs, INPUTS, "give X, W_Q, W_K, W_V and W_O")
    src = "H_enc" if inputs.get("H_enc") is not None else "X"
    for w in ("W_Q", "W_K", "W_V"):
        a = "X" if w == "W_Q" else src
        blocks.require_matmul(a, inputs[a], w, inputs[w])
    wq, wk, wv, wo = (shape(inputs[k]) for k in ("W_Q", "W_K", "W_V", "W_O"))
    if wq[1] != wk[1]:
        raise ShapeError(
            f"{_dims('W_Q', inputs['W_Q'])} and {_dims('W_K', inputs['W_K'])}: "
            "queries and keys need the same width H d_k"
        )
    for name, cols in (("W_Q", wq[1]), ("W_V", wv[1])):
        if cols % heads:
            raise ShapeError(
                f"{_dims(name, inputs[name])}: its {cols} columns do not split into "
                f"heads = {heads} blocks of equal width"
            )
    if wo[0] != wv[1]:
        raise ShapeError(
            f"{_dims('W_V', inputs['W_V'])}, so concat has {wv[1]} columns, but "
            f"{_dims('W_O', inputs['W_O'])}: concat W_O needs W_O to have {wv[1]} rows"
        )
    return wq[1] // heads, wv[1] // heads


EXP_GRID = 4  # the standard e^{-x} table of a block's carried scores: x = 0.00 ... 4.00 (more if a file needs)


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(  # noqa: C901, PLR0915
    inputs: dict[str, Matrix],
    params: Params,
    *,
    seed: int | None = None,
    carry: blocks.Carry | None = None,
    memory_tokens: tuple[str, ...] | None = None,
    exp_table: bool | None = None,
) -> Problem:
    """The worked solution; with an input ``H_enc`` (the decoder block's cross-attention)
    the keys and values come from it (``memory_tokens`` label its rows), the queries from X.
    ``exp_table`` forces the e^x table on (the decoder's cross-attention by hand) or off;
    None: only while the scores are not carried rounded."""
    H = params.heads
    d_k, d_v = check_inputs(inputs, H)
    if params.d_k is not None and params.d_k != d_k:
        raise ShapeError(
            f"d_k = {params.d_k} but W_Q has {shape(inputs['W_Q'])[1]} columns for {H} heads, so d_k = {d_k}"
        )
    X, W_O = inputs["X"], inputs["W_O"]
    memory = inputs.get("H_enc")
    n, d = shape(X)
    tokens = base.row_labels(params.tokens, n)
    src_tokens = tokens if memory is None else base.row_labels(memory_tokens, shape(memory)[0])
    actual = base.solved_params(params, seq_len=n, d_model=d, d_k=d_k, tokens=tokens)
    p = Problem(
        "multi-head-attention",
        TITLE,
        actual,
        seed=seed,
        intro=(
            f"Compute {'causal (masked) ' if params.causal else ''}multi-head attention with "
            f"$H = {H}$ heads of width $d_k = {d_k}$ for the tokens {', '.join(tokens)}. "
            f"Head $h$ uses columns $(h-1) d_k + 1$ to $h d_k$ of $W^Q$, $W^K$ and $W^V$; "
            + (
                r"multiply the head's output by $W^O$."
                if H == 1
                else r"concatenate the heads side by side, $[\mathrm{head}_1 \cdots \mathrm{head}_H]$, "
                r"and multiply by $W^O$."
            )
        ),
    )
    for name in INPUTS:
        p.add_input(name, inputs[name], rows=tokens if name == "X" else None)
        if name == "X" and memory is not None:
            p.add_input("H_enc", memory, rows=src_tokens)
    ref = reference({k: q.value for k, q in p.inputs.items()}, params)
    floats = {k: q.value for k, q in p.inputs.items()}  # the carried inputs, as the steps read them

    def carried(name: str, **earlier):  # reference's value, from the carried values once carry rounds
        return base.carried_step(carry, reference, floats, params, name, ref, **earlier)

    def after(mat: Matrix) -> Matrix:
        return carry.after(p) if carry is not None else mat

    # the heads are independent branches of a carried chain: each starts from the
    # rounding state of X, not from the previous head's rounded weights
    start = carry.rounding if carry is not None else False
    branches = []
    heads, logits = [], []
    for h in range(1, H + 1):
        if carry is not None:
            carry.rounding = start
        cols = f"{(h - 1) * d_k + 1}" + (f"\\ldots{h * d_k}" if d_k > 1 else "")
        where = (
            rf"$W^Q_{h}$, $W^K_{h}$, $W^V_{h}$ are columns ${cols}$ of $W^Q$, $W^K$, $W^V$."
            if h == 1 or d_k > 1
            else ""
        )
        proj, flags = {}, []
        for letter, W, width in (("Q", "W_Q", d_k), ("K", "W_K", d_k), ("V", "W_V", d_v)):
            Wh = head_columns(inputs[W], h, width)
            M, m_sym, m_name, labels = (
                (X, "x", "X", tokens) if letter == "Q" or memory is None else (memory, "h", "H", src_tokens)
            )
            if carry is not None:  # keys and values from the memory (given, exact) start unrounded
                carry.rounding = start if M is X else False
            blocks.product_step(
                p,
                f"{letter}_{h}",
                M,
                Wh,
                carried(f"{letter}_{h}"),
                title=f"Head {h}: {dict(Q='queries', K='keys', V='values')[letter]}",
                formula=line(m.sym(letter, sub=h), "=", m.sym(m_name), _weights(letter, h)),
                sym=_head_sym(letter.lower(), h),
                a_sym=m.sym(m_sym),
                # product_step writes the column after it (b_sym_{:,j}): the head's weights in braces
                b_sym=f"{{{_weights(letter, h)}}}",
                rows=labels,
                note=where if letter == "Q" else "",
                entry_at=teaching_entry(M, Wh),
            )
            proj[letter] = after(p.steps[-1].exact)
            flags.append(carry is not None and carry.rounding)
        if carry is not None:
            carry.rounding = any(flags)
        Q, K, V = proj["Q"], proj["K"], proj["V"]
        blocks.product_step(
            p,
            f"scores_{h}",
            Q,
            K,
            carried(f"scores_{h}", **{f"Q_{h}": Q, f"K_{h}": K}),
            transpose_b=True,
            entry_at=teaching_entry(Q, blocks.transpose(K)),
            title=f"Head {h}: scores",
            formula=line(m.sym("S", sub=h), "=", m.sym("Q", sub=h), m.sym("K", sub=h, sup=TOP)),
            sym=_head_sym("s", h),
            a_sym=_head_sym("q", h),
            b_sym=_head_sym("k", h),
            rows=tokens,
            cols=src_tokens,
            latex_name=m.sym("S", sub=h),
        )
        S = after(p.steps[-1].exact)
        d_k_sym = m.sym("d", sub="k")
        blocks.scale_step(
            p,
            f"scaled_{h}",
            S,
            d_k,
            carried(f"scaled_{h}", **{f"scores_{h}": S}),
            title=f"Head {h}: scaled scores",
            formula=m.eq(
                m.sym("S", sub=h, prime=1),
                m.frac(m.sym("S", sub=h), m.sqrt(d_k_sym)),
                m.frac(m.sym("S", sub=h), m.sqrt(d_k)),
            ),
            sym=_head_sym("s", h, prime=True),
            src_sym=_head_sym("s", h),
            rows=tokens,
            cols=src_tokens,
            latex_name=m.sym("S", sub=h, prime=1),
            note=(
                rf"Divide by $\sqrt{{d_k}} = \sqrt{{{d_k}}}$, the width of one head's keys, "
                r"not by $\sqrt{d_\mathrm{model}}$."
            )
            if h == 1
            else "",
        )
        rework_scaled(p, S, d_k, _head_sym("s", h, prime=True), _head_sym("s", h))
        S = after(p.steps[-1].exact)
        src, mat = _head_sym("s", h, prime=True), m.sym("S", sub=h, prime=1)
        if params.causal:
            blocks.mask_step(
                p,
                f"masked_{h}",
                S,
                carried(f"masked_{h}", **{f"scaled_{h}": S}),
                sym=_head_sym("m", h),
                src_sym=str(src),  # mask_step capitalises the symbol's first character: LaTeX
                rows=tokens,
                cols=tokens,
            )
            blocks.relabel_last(
                p,
                title=f"Head {h}: causal mask",
                latex_name=m.sym("M", sub=h),
                formula=line(
                    m.sym("M", sub=h),
                    "=",
                    mat,
                    m.text(" with "),
                    "-",
                    Ident("∞"),
                    m.text(" where "),
                    m.sym("j"),
                    ">",
                    m.sym("i"),
                ),
            )
            S = after(p.steps[-1].exact)
            src, mat = _head_sym("m", h), m.sym("M", sub=h)
        rounding = carry is not None and carry.rounding
        logits_name = f"masked_{h}" if params.causal else f"scaled_{h}"
        blocks.softmax_step(
            p,
            f"weights_{h}",
            S,
            carried(f"weights_{h}", **{logits_name: S}),
            sym=_head_sym("alpha", h),
            src_sym=src,
            title=f"Head {h}: attention weights (softmax along each row)",
            formula=line(m.sym("A", sub=h), "=", m.call("softmax", mat)),
            rows=tokens,
            cols=src_tokens,
            latex_name=m.sym("A", sub=h),
            aid=not rounding if exp_table is None else exp_table,
            work_row=varied_row(S),
            # carried (4-place) scores by hand: read e^{-x} on the standard grid of every 0.01
            exp_grid=EXP_GRID if rounding and exp_table and carry.places == 4 else None,
        )
        W = after(p.steps[-1].exact)
        exact_logits = not (carry is not None and carry.rounding)
        blocks.weighted_sum_step(
            p,
            f"head_{h}",
            W,
            V,
            carried(f"head_{h}", **{f"weights_{h}": W, f"V_{h}": V}),
            sym=_head_sym("z", h),
            w_sym=_head_sym("alpha", h),
            v_sym=_head_sym("v", h),
            logits=S if exact_logits else None,
            title=f"Head {h}: output",
            formula=line(_head(h), "=", m.sym("A", sub=h), m.sym("V", sub=h)),
            rows=tokens,
            latex_name=_head(h),
        )
        rework_weighted(p, W, V, _head_sym("z", h), _head_sym("alpha", h), _head_sym("v", h))
        heads.append(after(p.steps[-1].exact))
        branches.append(carry is not None and carry.rounding)
        logits.append(S if exact_logits else None)

    if carry is not None:
        carry.rounding = any(branches)
    places = 4 if carry is not None and carry.rounding else None  # carried: decimals as the tables print them

    # concat: the heads side by side
    C = blocks.hstack(*heads)
    head_chains = [blocks.chain_of(p, hd) for hd in heads]  # hand mode: as the rounding chain gave them
    shown_heads = heads if any(c is None for c in head_chains) else head_chains
    if shown_heads is head_chains:  # the chain's 4-place values print with 4 places: -0.5380, not -0.538
        places = 4
    one = H == 1  # one head: nothing to concatenate, C is the head's output
    p.add_step(
        "concat",
        C,
        carried("concat", **{f"head_{h}": hd for h, hd in enumerate(heads, start=1)}),
        title="The head's output (one head: nothing to concatenate)" if one else "Concatenate the heads",
        formula=line(m.sym("C"), "=", _head(1) if one else _bracket(_head(1), m.thick(), DOTS, m.thick(), _head(H))),
        work=[_concat_work(heads, shown_heads, places)],
        rows=tokens,
        latex_name=m.sym("C"),
        note=(
            f"With one head, $C$ is $\\mathrm{{head}}_1$ itself (${n} \\times {d_v}$)."
            if one
            else f"Side by side along the columns: $C$ is ${n} \\times {H * d_v}$ (heads times $d_v$, "
            f"the width $d_v = {d_v}$ of one head's values), not stacked under each other."
        ),
    )
    if all(c is not None for c in head_chains):  # hand mode: the heads as the chain gave them
        p.steps[-1] = dataclasses.replace(p.steps[-1], chain=blocks.hstack(*head_chains))
    C = after(p.steps[-1].exact)
    Cc = p.steps[-1].chain

    # output = concat W^O, exactly: sum over heads of softmax(S_h) (V_h W^O_h)
    if all(s is not None for s in logits) and not (carry is not None and carry.rounding):
        O = softmax_matmul_sum(
            [
                (S_h, blocks.matmul(proj_v, W_O[(h - 1) * d_v : h * d_v]))
                for h, (S_h, proj_v) in enumerate(zip(logits, _values(p, H)), start=1)
            ]
        )
    else:
        O = blocks.matmul(C, W_O)
    i, j = teaching_entry(C, W_O, O)
    o_ij = lines.entry("o", i, j)
    Oc = None if Cc is None else blocks.chain_product(Cc, W_O)
    work = [
        lines.dot_work(
            line(o_ij, "=", m.sym("c", sub=i + 1), "⋅", m.sym("W", sub=f":,{j + 1}", sup="O")),
            C[i] if Cc is None else Cc[i],
            [r[j] for r in W_O],
            O[i][j] if Oc is None else Oc[i][j],
            limit=0,
            places=places,
        )
    ]
    if not blocks.is_rational(O[i][j]) and not blocks.calculator(p):  # a calculator key stays in decimals
        work.append(line(o_ij, "=", Value(O[i][j])))
    p.add_step(
        "output",
        O,
        carried("output", concat=C),
        title="Output projection (concat times $W^O$)",
        formula=line(m.sym("O"), "=", m.sym("C"), m.sym("W", sup="O")),
        work=work,
        rows=tokens,
        latex_name=m.sym("O"),
        note=r"Do not forget $W^O$: it mixes the heads back into $d_\mathrm{model}$ columns.",
    )
    if Oc is not None:
        p.steps[-1] = dataclasses.replace(p.steps[-1], chain=Oc)
    after(O)
    return p


# -- the symbols and pieces of the formulas
TOP = m.sym("⊤")  # the transpose
DOTS = Ident("⋯")


def _head_sym(letter: str, h: int, prime: bool = False) -> Node:
    """Head ``h``'s entry letter: ``q^{(h)}``, ``\\alpha^{(h)}``; ``prime``: ``{s'}^{(h)}``."""
    return m.sym(letter, sup=f"({h})", prime=int(prime))


def _weights(letter: str, h: int) -> Node:
    """Head ``h``'s block of a projection: ``W^Q_h``."""
    return m.sym("W", sub=h, sup=letter)


def _head(h: int) -> Node:
    """``\\mathrm{head}_h``."""
    return m.sym("head", sub=h)


def _bracket(*items) -> Fence:
    """``\\left[\\, ... \\,\\right]``: a row written out, in brackets sized to it."""
    return Fence("[", m.row(m.thin(), *items, m.thin()), "]")


def _concat_work(heads: list[Matrix], shown: list[Matrix], places: int | None) -> Node:
    """``c_1 = [head_1 row 1 | ...] ≈ [0.5, 1 | -0.25, 2]``: the first row of C, head by head
    (one head: ``c_1 = row 1 of head_1 ...``, no ``| ...`` of heads that are not there)."""
    parts: list[Node] = []
    for k, hd in enumerate(shown):
        if k:
            parts += [m.thick(), Middle("|"), m.thick()]
        parts.append(m.join([lines.unwrapped(lines.work_term(x, 0, places)[0]) for x in hd[0]], ","))
    rel = "≈" if any(lines.work_term(x, 0)[1] for hd in heads for x in hd[0]) else "="
    if len(heads) == 1:
        lhs = line(m.text("row 1 of "), _head(1))
    else:
        lhs = _bracket(_head(1), m.text(" row "), m.number(1), m.thick(), Middle("|"), m.thick(), DOTS)
    return line(m.sym("c", sub=1), "=", lhs, rel, _bracket(*parts))


def _values(p: Problem, H: int) -> list[Matrix]:
    return [p.step(f"V_{h}").exact for h in range(1, H + 1)]


# ---------------------------------------------------------------- mistakes
# Per head the shared attention rules (worksheet.kinds.mistakes: scores_h, scaled_h,
# masked_h, weights_h, and weights-times-X on head_h); then concat and output.
def _heads(v: mistakes.Values, params) -> list[np.ndarray]:
    return [v[f"head_{h}"] for h in range(1, int(params["heads"]) + 1)]


@mistakes.register("multi-head-attention", "concat", "concat-wrong-axis")
def _concat_rows(v, params):
    return np.vstack(_heads(v, params))  # (H n, d_v) instead of (n, H d_v)


@mistakes.register("multi-head-attention", "output", "missing-W_O")
def _missing_w_o(v, params):
    return v["concat"]
