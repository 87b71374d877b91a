"""The size limits of everything a user gives us, in one place.

Input files, answer files and keys may come from other people, so every
accepted input must finish in seconds with bounded memory.  Each limit is
checked *before* any work, with a one-line error naming the file, the field
(and row and column) and the limit.  The limits keep every lecture example
working (``thinking-machines`` gives 2 x 64 matrices with d_k = 64) and were
chosen by measuring the worst accepted input (the largest sizes filled with
12-digit decimals): it solves in a few seconds.

Input files of ``worksheet solve`` (JSON or TOML):

* at most ``MAX_INPUT_BYTES`` (1 MB);
* each matrix at most ``MAX_ROWS`` (16) rows and ``MAX_COLS`` (64) columns,
  and all the matrices of a file together at most ``MAX_ENTRIES`` (1024)
  entries (the work of attention grows with the cube of the number of tokens,
  so rows are the tighter limit);
* each number (entry or numeric parameter such as ``eps`` or
  ``temperature``) in the range ``|x| <= MAX_MAGNITUDE`` (10^6), with a
  denominator (in lowest terms) of at most ``MAX_DENOMINATOR`` (10^12): so a
  decimal has at most 12 places, ``1e308``, ``1e-1000`` and ``10**99`` are
  refused;
* all the entries of a file over one common denominator of at most
  ``MAX_COMMON_DENOMINATOR`` (10^18).  Decimals of up to 12 places qualify,
  also mixed with fractions such as 1/3, 1/7 and 1/11; what is refused is,
  e.g., 1/p for hundreds of distinct primes, whose sums have denominators of
  thousands of digits (the exact arithmetic would run for minutes).

Exact forms of ``worksheet solve``: the kinds whose exact forms can grow
beyond the input limits (multi-head attention, whose heads' softmax
denominators are mixed by W^O; layer norm, feed-forward and positional
encoding, which share the mechanism) keep exact values while every entry's
exact form has at most ``MAX_EXACT_CHARS`` (200) characters; from the first
step past that, that step and every later one carry values rounded to 4
decimals, marked ``rounded`` (the key says "carried forward rounded to 4
places"), the same rule the encoder block always follows.  The other kinds
stay exact within the input limits.  Measured worst accepted inputs (all
entries 12-digit decimals, on a busy 2-core machine): attention 16 x 21 Q, K,
V: 1.3 MB of Markdown, 1-3 s; self-attention-basic 16 x 64: 3 MB, 1-5 s;
multi-head attention 16 x 14 with 7 heads: 0.3 MB, 2 s (14 MB and 11 s
without carrying decimals); layer norm 16 x 30 with S: 0.2 MB.

Keys and answer files of ``worksheet check``: the file size is checked
first (``MAX_KEY_BYTES``, ``MAX_ANSWER_BYTES``), then the structure and
the shapes (at most ``MAX_KEY_PROBLEMS`` problems per variant and
``MAX_KEY_STEPS`` steps per problem, each matrix at most 64 x 64, at most
``MAX_KEY_ENTRIES`` entries per variant), and only then are entries read;
reading the entries of one answer file is bounded by a count of work (``ANSWER_WORK``: trial divisions
and tree nodes, see :class:`worksheet.parse.Budget`), never by the clock, so
the same file gets the same result on every machine; a key's exact strings
are read only for the steps being marked, from ``KEY_WORK`` per variant
(past it, a step's float ``value`` is the expected value).

A Moodle Responses report (``check --moodle-responses``): at most
``MAX_RESPONSES_BYTES`` of UTF-8, ``MAX_RESPONSE_ROWS`` attempts,
``MAX_RESPONSE_COLUMNS`` columns and ``MAX_RESPONSE_CELL`` characters a
cell; each attempt's answers are then read as an answer file is.

Exam specs: ``points`` is a finite number from 0 to ``MAX_POINTS`` per
section.  Seeds are whole numbers from 0 to ``MAX_SEED``.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

MAX_INPUT_BYTES = 1_000_000  # an input file of solve
MAX_ROWS = 16  # rows of one input matrix (tokens, or d_model of a weight matrix)
MAX_COLS = 64  # columns of one input matrix (thinking-machines has d_k = 64)
MAX_ENTRIES = 1024  # entries of all the matrices of one input file together
MAX_MAGNITUDE = 10**6  # |x| of an input number
MAX_DENOMINATOR = 10**12  # denominator of an input number (12 decimal places)
MAX_COMMON_DENOMINATOR = 10**18  # common denominator of all the entries of a file
MAX_EXACT_CHARS = 200  # characters of an exact entry solve keeps (kinds that can carry decimals)

MAX_KEY_BYTES = 64 * 1024 * 1024  # a key of check (300 variants of a big exam fit)
MAX_ANSWER_BYTES = 512 * 1024  # an answer file of check
MAX_KEY_PROBLEMS = 1000  # problems in one variant of a key
MAX_KEY_STEPS = 400  # steps in one problem of a key
MAX_KEY_ENTRIES = 4_000_000  # entries of all the steps of a key (about the 64 MB cap's worth)
# parser work (see worksheet.parse.Budget): trial divisions for square roots, and tree
# nodes exact.py walks; one costly entry spends at most 100,000 and 12,000 of them
ANSWER_WORK = (2_500_000, 1_000_000)  # every entry of one answer file together
KEY_WORK = (2_500_000, 1_000_000)  # the exact strings of one variant of a key

MAX_RESPONSES_BYTES = 32 * 1024 * 1024  # a Moodle Responses report of check --moodle-responses
MAX_RESPONSE_ROWS = 5000  # attempts (rows) in one Responses report
MAX_RESPONSE_COLUMNS = 2000  # columns of one Responses report (3 per question slot, ticked)
MAX_RESPONSE_CELL = 1024 * 1024  # characters of one cell (a question's text summary)

MAX_POINTS = 10**6  # points of one spec section
MAX_SEED = 2**32 - 1  # --seed and a spec's seed


def check_number(x: Fraction) -> str | None:
    """Why ``x`` is outside the input range (None if it is inside)."""
    if abs(x) > MAX_MAGNITUDE:
        return "out of range: |x| must be at most 10^6"
    if x.denominator > MAX_DENOMINATOR:
        return "too many decimal places: at most 12 (a denominator of at most 10^12)"
    return None


def common_denominator(values) -> int:
    """The least common denominator of ``values`` (Fractions), stopping once it
    passes :data:`MAX_COMMON_DENOMINATOR` (so it stays a small integer)."""
    lcm = 1
    for x in values:
        d = x.denominator
        if lcm % d:
            lcm = lcm // gcd(lcm, d) * d
            if lcm > MAX_COMMON_DENOMINATOR:
                return lcm
    return lcm
