"""worksheet practice in a real browser: headless Chromium (Debian's, through
Playwright) against the app on 127.0.0.1.  A right value, a carried-forward
value and a named mistake each show their verdict; a whole step entered with
the keyboard only; reveal; own numbers; a hostile label shown as text; the
mistakes a student made remembered in the browser.  One screenshot per kind
is kept under output/practice/ (ignored by git) for a person to look at.

Skips when Chromium or Playwright is missing; fails instead under
WORKSHEET_REQUIRE_CHROMIUM=1 (as .ci/run sets)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from practice_util import browser_page, served
from worksheet import kinds
from worksheet.build import ProblemSpec, build_document

pytest.importorskip("uvicorn")

SEED = 3
SHOTS = Path(__file__).resolve().parent.parent / "output" / "practice"
# the whole page at a phone's and a laptop's width too (KIND-390.png, KIND-1280.png), for a
# person comparing layouts: WORKSHEET_PRACTICE_SHOTS=1 (a full-page capture is most of
# such a test's time, and nothing is asserted on it)
SHOTS_AT_WIDTHS = os.environ.get("WORKSHEET_PRACTICE_SHOTS") == "1"


@pytest.fixture(scope="module")
def base():
    with served() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with browser_page() as page:
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.errors = errors
        yield page


def problem(kind="attention", seed=SEED, **settings):
    return build_document([ProblemSpec(kind, settings)], seed=seed).problems[0]


def leave(page, cell_id: str, value: str) -> None:
    page.fill(f"#{cell_id}", value)
    page.press(f"#{cell_id}", "Tab")


def verdict(page, cell_id: str):
    el = page.wait_for_selector(f'[data-verdict-for="{cell_id}"][data-verdict]')
    return el.get_attribute("data-verdict"), el.get_attribute("data-mistake"), el.inner_text()


def test_right_carried_and_named_mistake_show_in_the_page(base, browser):
    p = problem()
    scores, scaled = p.step("scores").value, p.step("scaled").value
    browser.goto(f"{base}/p/attention?seed={SEED}")
    browser.errors.clear()
    # right
    leave(browser, "cell-weights-1-1", f"{p.step('weights').value[0, 0]:.4f}")
    v, _, text = verdict(browser, "cell-weights-1-1")
    assert v == "right" and "\u2713" in text and "right" in text
    # carried: a wrong score, and the scaled score that follows from it
    root = scores[0, 0] / scaled[0, 0] if scaled[0, 0] else 2.0
    wrong = scores[0, 0] + 2
    leave(browser, "cell-scores-1-1", str(int(wrong)))
    leave(browser, "cell-scaled-1-1", f"{wrong / root:.4f}")
    assert verdict(browser, "cell-scores-1-1")[0] == "wrong"
    v, _, text = verdict(browser, "cell-scaled-1-1")
    assert v == "carried" and "carried forward" in text
    # a named mistake: the unscaled score in the scaled step
    i, j = next((i, j) for i in range(3) for j in range(3) if scores[i, j] != 0 and (i, j) != (0, 0))
    leave(browser, f"cell-scaled-{i + 1}-{j + 1}", str(int(scores[i, j])))
    v, code, text = verdict(browser, f"cell-scaled-{i + 1}-{j + 1}")
    assert (v, code) == ("mistake", "no-scaling") and "a named mistake" in text and "\u2717" in text
    named = browser.wait_for_selector('#named-scaled li[data-mistake="no-scaling"]')
    assert "not divided by" in named.inner_text() and named.query_selector("math msqrt")  # words, maths typeset
    assert "no-scaling" not in browser.inner_text("main")  # the code is for scripts, not for the student
    assert browser.errors == []


def test_an_entry_that_cannot_be_read_says_so_and_why(base, browser):
    browser.goto(f"{base}/p/attention?seed={SEED}")
    browser.errors.clear()
    leave(browser, "cell-weights-1-2", "0.2(")
    v, _, text = verdict(browser, "cell-weights-1-2")
    assert v == "unreadable" and "can\u2019t read this" in text and "wrong" not in text
    assert browser.query_selector('[data-verdict-for="cell-weights-1-2"] .why')  # the reason, in words
    leave(browser, "cell-weights-1-2", "")  # emptied: no verdict
    browser.wait_for_selector('[data-verdict-for="cell-weights-1-2"]:not([data-verdict])')
    assert browser.errors == []


def test_keyboard_only_entry_of_a_whole_step(base, browser):
    p = problem()
    w = p.step("weights").value
    browser.goto(f"{base}/p/attention?seed={SEED}")
    browser.focus("#cell-scaled-3-3")  # the last cell of the step before
    browser.keyboard.press("Tab")  # then that step's reveal button, in reading order
    assert browser.evaluate("document.activeElement.dataset.revealStep") == "scaled"
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            browser.keyboard.press("Tab")
            assert browser.evaluate("document.activeElement.id") == f"cell-weights-{i + 1}-{j + 1}"
            browser.keyboard.type(f"{w[i, j]:.4f}")
    browser.keyboard.press("Enter")  # Enter moves on to the next cell, as Tab does
    assert browser.evaluate("document.activeElement.id") == "cell-output-1-1"
    # a selector, not wait_for_function: the page's CSP forbids the eval that polling a JS string needs
    browser.wait_for_selector("#progress-weights:has-text('Step done')")
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            assert verdict(browser, f"cell-weights-{i + 1}-{j + 1}")[0] == "right"


def test_reveal_shows_the_worked_line_of_one_step_then_the_key(base, browser):
    browser.goto(f"{base}/p/attention?seed={SEED}")
    assert browser.inner_text("#solution-weights").strip() == ""
    browser.click('button[data-reveal-step="weights"]')
    browser.wait_for_selector("#solution-weights h4")
    assert "To 4 decimals" in browser.inner_text("#solution-weights") or browser.query_selector(
        "#solution-weights math"
    )
    assert browser.inner_text("#solution-output").strip() == ""
    browser.click('button[data-reveal-step="*"]')
    browser.wait_for_selector("#solution-output h4")


def test_own_numbers_practise_and_worked_solution(base, browser):
    browser.goto(f"{base}/own")
    browser.select_option("#own-kind", "attention")
    browser.fill(
        "#own-table", 'Q = [[1, 0], [0, 1]]\nK = [[1, 2], [0, 1]]\nV = [[1, 0], [0, 1]]\ntokens = ["Je", "suis"]\n'
    )
    browser.click('button[value="practise"]')
    browser.wait_for_selector("#cell-scores-1-2")
    assert browser.get_attribute("#cell-scores-1-2", "aria-label") == "scores, row Je, column suis"
    leave(browser, "cell-scores-1-2", "0")  # q_1 . k_2 = 1*0 + 0*1
    assert verdict(browser, "cell-scores-1-2")[0] == "right"
    leave(browser, "cell-scores-2-1", "7")
    assert verdict(browser, "cell-scores-2-1")[0] == "wrong"
    browser.click('button[data-reveal-step="scores"]')
    browser.wait_for_selector("#solution-scores h4")
    browser.goto(f"{base}/own")
    browser.fill("#own-table", "Q = [[1, 0]]\nK = [[1, 0]]\nV = [[2, 3]]\n")
    browser.click('button[value="solution"]')
    browser.wait_for_selector("#solution-output h4")


def test_a_hostile_label_is_shown_as_text(base, browser):
    browser.goto(f"{base}/p/attention?seed=1&tokens=%3Cimg%2Fsrc%2Fonerror%3E+b+c")
    assert browser.query_selector("img") is None
    assert "<img/src/onerror>" in browser.inner_text("main")
    assert browser.get_attribute("#cell-weights-1-2", "aria-label") == "weights, row <img/src/onerror>, column b"


def test_mistakes_are_remembered_in_the_browser_and_offered(base, browser):
    p = problem()
    scores = p.step("scores").value
    i, j = next((i, j) for i in range(3) for j in range(3) if scores[i, j] != 0)
    browser.goto(f"{base}/p/attention?seed={SEED}")
    browser.evaluate("localStorage.clear()")
    leave(browser, f"cell-scaled-{i + 1}-{j + 1}", str(int(scores[i, j])))
    assert verdict(browser, f"cell-scaled-{i + 1}-{j + 1}")[1] == "no-scaling"
    browser.goto(f"{base}/mistakes")
    browser.wait_for_selector("#my-mistakes:not([hidden])")
    mine = browser.wait_for_selector('#my-mistakes li[data-mistake="no-scaling"]')
    assert "not divided by" in mine.inner_text() and mine.query_selector("math msqrt")  # in words, maths typeset
    browser.click('#my-mistakes a[href$="/mistakes?codes=no-scaling"]')
    browser.wait_for_selector("input[data-step]")
    assert "/p/" in browser.url and "seed=" in browser.url


def test_page_works_without_javascript(base, browser):
    """With the script blocked, the form posts to the server, which answers with the verdicts."""
    block = "**/static/practice.js"
    browser.route(block, lambda route: route.abort())
    try:
        browser.goto(f"{base}/p/attention?seed={SEED}")
        p = problem()
        browser.fill("#cell-weights-1-1", f"{p.step('weights').value[0, 0]:.4f}")
        browser.click("button.check")
        browser.wait_for_selector('[data-verdict-for="cell-weights-1-1"][data-verdict="right"]')
        browser.click('button[data-reveal-step="scores"]')
        browser.wait_for_selector("#solution-scores h4")
        assert browser.input_value("#cell-weights-1-1") == f"{p.step('weights').value[0, 0]:.4f}"
    finally:
        browser.unroute(block)
        browser.errors.clear()  # the blocked script's load error


@pytest.mark.parametrize("kind", kinds.names())
def test_screenshot_of_each_kind(base, browser, kind):
    """Every kind's page loads without a console error, with its cells; the
    screenshot (output/practice/KIND.png) is for a person to look at."""
    browser.errors.clear()
    browser.goto(f"{base}/p/{kind}?seed={SEED}")
    cells = browser.query_selector_all("input[data-step]")
    assert cells
    first = cells[0]
    first.fill("1")
    first.press("Tab")
    browser.wait_for_selector(f'[data-verdict-for="{first.get_attribute("id")}"][data-verdict]')
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.screenshot(path=str(SHOTS / f"{kind}.png"), full_page=True)
    assert browser.errors == []


# ---------------------------------------------------------------- phones and narrow windows
WIDTHS = {"phone": (390, 844), "laptop": (1280, 800)}
CELLS_IN_REACH = """() => {
  const bad = [];
  for (const el of document.querySelectorAll("input[data-step]")) {
    el.scrollIntoView();
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (hit !== el) { bad.push(el.id + " is covered by " + (hit ? hit.tagName + "." + hit.className : "nothing")); }
    if (r.height < 44 || r.width < 44) { bad.push(el.id + " is " + r.width + " x " + r.height + " px"); }
  }
  return bad;
}"""
PAGE_WIDTH = "() => [document.scrollingElement.scrollWidth, window.innerWidth]"


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("kind", kinds.names())
def test_no_sideways_page_scroll_and_every_cell_tappable(base, browser, kind, width):
    """Each kind's default problem at 390 x 844 (a phone) and 1280 x 800: the
    page is never wider than the window (a wide grid scrolls in its own box),
    and every answer cell, scrolled into view, is the element at its centre
    (nothing covers it, the sticky row labels included) and at least 44 px."""
    w, h = WIDTHS[width]
    browser.set_viewport_size({"width": w, "height": h})
    try:
        browser.errors.clear()
        browser.goto(f"{base}/p/{kind}?seed={SEED}")
        browser.click('button[data-reveal-step="*"]')  # the worked lines must fit too
        browser.wait_for_selector(".solution h4")
        scroll_width, inner = browser.evaluate(PAGE_WIDTH)
        assert scroll_width <= inner, f"the page is {scroll_width} px wide in a {inner} px window"
        browser.evaluate("window.scrollTo(0, 0)")
        if SHOTS_AT_WIDTHS:
            SHOTS.mkdir(parents=True, exist_ok=True)
            browser.screenshot(path=str(SHOTS / f"{kind}-{w}.png"), full_page=True)
        assert browser.evaluate(CELLS_IN_REACH) == []
        assert browser.evaluate(PAGE_WIDTH)[0] <= inner
        assert browser.errors == []
    finally:
        browser.set_viewport_size({"width": 1100, "height": 900})
