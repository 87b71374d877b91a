// worksheet practice: checks each cell as it is left (POST check), shows
// worked lines on request (POST reveal), and remembers, in this browser
// only (localStorage), the named mistakes made.  The pages work without it:
// the form then posts to the server, which answers with the same verdicts.
// Every address is relative to the app's root, which the page names in
// <html data-base>: the app may be served under any path prefix.
(function () {
  "use strict";
  var STORE = "worksheet-practice-mistakes";
  var SYMBOL = { right: "\u2713", carried: "\u21aa", mistake: "\u2717", wrong: "\u2717", unreadable: "?" };
  var WORDS = {
    right: "right", carried: "carried forward", mistake: "a named mistake", wrong: "wrong",
    unreadable: "can\u2019t read this"
  };
  var BASE = new URL(document.documentElement.getAttribute("data-base") || "./", window.location.href);
  function here(path) { return new URL(path, BASE).href; }

  // A named mistake's words with their maths: a copy of the page's own
  // server-made MathML (template#mistake-words), or the plain sentence.
  function wordsOf(code, plain) {
    var t = document.getElementById("mistake-words");
    var found = t && t.content.querySelector('[data-mistake="' + CSS.escape(code) + '"]');
    if (found) { return found.cloneNode(true); }
    var span = document.createElement("span");
    span.textContent = plain || code;
    return span;
  }

  function loadMistakes() {
    try { return JSON.parse(window.localStorage.getItem(STORE) || "{}") || {}; } catch (e) { return {}; }
  }
  function saveMistakes(m) {
    try { window.localStorage.setItem(STORE, JSON.stringify(m)); } catch (e) { /* private mode: not kept */ }
  }

  function text(el, s) { el.textContent = s; }

  function showMine() {
    var box = document.getElementById("my-mistakes");
    if (!box) { return; }
    var mine = loadMistakes();
    var codes = Object.keys(mine).sort(function (a, b) { return mine[b].count - mine[a].count; });
    if (!codes.length) { box.hidden = true; return; }
    var ul = box.querySelector("ul");
    ul.textContent = "";
    codes.forEach(function (code) {
      var li = document.createElement("li");
      li.setAttribute("data-mistake", code);
      var a = document.createElement("a");
      a.href = here("mistakes?codes=" + encodeURIComponent(code));
      a.appendChild(wordsOf(code, mine[code].hint));
      li.appendChild(a);
      li.appendChild(document.createTextNode(" (" + mine[code].count + " time" +
        (mine[code].count === 1 ? "" : "s") + ")"));
      ul.appendChild(li);
    });
    var all = document.createElement("li");
    var link = document.createElement("a");
    link.href = here("mistakes?codes=" + encodeURIComponent(codes.join(",")));
    text(link, "A new problem for all of them");
    all.appendChild(link);
    ul.appendChild(all);
    box.hidden = false;
    var forget = document.getElementById("forget-mistakes");
    if (forget) {
      forget.onclick = function () { saveMistakes({}); box.hidden = true; };
    }
  }

  // A cell scrolled into view (by Tab, or by the browser) stops beside the
  // sticky row labels, not under them.
  function padGrids() {
    Array.prototype.forEach.call(document.querySelectorAll(".scroll"), function (box) {
      var th = box.querySelector("tbody th");
      if (th) { box.style.scrollPaddingLeft = Math.ceil(th.getBoundingClientRect().width) + 4 + "px"; }
    });
  }

  var form = document.getElementById("practice");
  showMine();
  if (!form) { return; }
  padGrids();
  window.addEventListener("resize", padGrids);

  var problem = JSON.parse(form.getAttribute("data-problem"));
  var inputs = Array.prototype.slice.call(form.querySelectorAll("input[data-step]"));
  var seen = {};  // step + code already counted on this page
  var pending = null, again = false;

  function collect() {
    var cells = {};
    inputs.forEach(function (el) {
      var v = el.value.trim();
      if (!v) { return; }
      var step = el.getAttribute("data-step");
      (cells[step] = cells[step] || {})[el.getAttribute("data-row") + "," + el.getAttribute("data-col")] = v;
    });
    return cells;
  }

  function why(span, words, code) {
    var w = document.createElement("span");
    w.className = "why";
    if (code) {
      var c = document.createElement("code");
      text(c, code);
      w.appendChild(document.createTextNode(words));
      w.appendChild(c);
    } else {
      text(w, words);
    }
    span.appendChild(w);
  }

  function setVerdict(el, v) {
    var span = document.getElementById("v-" + el.id);
    if (!span) { return; }
    span.textContent = "";
    span.removeAttribute("data-mistake");
    if (!v) { span.removeAttribute("data-verdict"); return; }
    var kind = SYMBOL[v.verdict] ? v.verdict : "wrong";
    span.setAttribute("data-verdict", kind);
    var sym = document.createElement("span");
    sym.className = "sym";
    sym.setAttribute("aria-hidden", "true");
    text(sym, SYMBOL[kind]);
    span.appendChild(sym);
    span.appendChild(document.createTextNode(" " + WORDS[kind]));
    if (kind === "unreadable") {
      if (v.read_as) { why(span, "read as ", v.read_as); }
      if (v.message) { why(span, v.message); }
    }
    if (v.mistake) { span.setAttribute("data-mistake", v.mistake); }
  }

  // The named mistakes of each step, under its grid, in words with maths.
  function showNamed(data) {
    var by = data.named || {};
    Array.prototype.forEach.call(form.querySelectorAll("[data-named-for]"), function (ul) {
      var codes = by[ul.getAttribute("data-named-for")] || [];
      ul.textContent = "";
      codes.forEach(function (code) {
        var li = document.createElement("li");
        li.setAttribute("data-mistake", code);
        var sym = document.createElement("span");
        sym.className = "sym";
        sym.setAttribute("aria-hidden", "true");
        text(sym, "\u2717");
        li.appendChild(sym);
        li.appendChild(document.createTextNode(" "));
        var words = document.createElement("span");
        if (data.words && data.words[code]) {
          words.innerHTML = data.words[code];  // server-rendered, escaped HTML of this app (as reveal)
        } else {
          text(words, (data.hints && data.hints[code]) || code);
        }
        li.appendChild(words);
        ul.appendChild(li);
      });
    });
  }

  function apply(data) {
    var by = {};
    (data.verdicts || []).forEach(function (v) { by["cell-" + v.step + "-" + v.row + "-" + v.col] = v; });
    inputs.forEach(function (el) { setVerdict(el, by[el.id]); });
    (data.steps || []).forEach(function (s) {
      var p = document.getElementById("progress-" + s.name);
      if (p) { text(p, s.text); }
    });
    showNamed(data);
    var mine = loadMistakes(), changed = false;
    (data.verdicts || []).forEach(function (v) {
      if (v.verdict !== "mistake" || !v.mistake || seen[v.step + " " + v.mistake]) { return; }
      seen[v.step + " " + v.mistake] = true;
      var m = mine[v.mistake] || { count: 0 };
      m.count += 1;
      m.hint = data.hints[v.mistake] || m.hint || "";
      mine[v.mistake] = m;
      changed = true;
    });
    if (changed) { saveMistakes(mine); }
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      credentials: "same-origin"
    }).then(function (r) {
      return r.json().then(function (d) {
        if (!r.ok) { throw new Error(d.error || ("HTTP " + r.status)); }
        return d;
      });
    });
  }

  function check() {
    if (pending) { again = true; return pending; }
    var sep = document.getElementById("decimal");
    var body = Object.assign({}, problem, { cells: collect(), decimal: sep ? sep.value : "point" });
    form.setAttribute("aria-busy", "true");
    pending = post(here("check"), body).then(apply, function (e) {
      var p = form.querySelector(".progress");
      if (p) { text(p, "Could not check: " + e.message); }
    }).then(function () {
      pending = null;
      form.removeAttribute("aria-busy");
      if (again) { again = false; return check(); }
    });
    return pending;
  }

  inputs.forEach(function (el, k) {
    el.addEventListener("change", check);
    el.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") {  // Enter: the next cell, in reading order
        ev.preventDefault();
        var next = inputs[k + 1];
        if (next) { next.focus(); } else { el.blur(); check(); }
      }
    });
  });

  var separator = document.getElementById("decimal");
  if (separator) { separator.addEventListener("change", check); }  // the entries read anew

  form.addEventListener("submit", function (ev) {
    var button = ev.submitter;
    ev.preventDefault();
    if (button && button.name === "reveal") {
      var step = button.value;
      post(here("reveal"), Object.assign({}, problem, { step: step })).then(function (d) {
        Object.keys(d.steps).forEach(function (name) {
          var box = form.querySelector('[data-solution-for="' + CSS.escape(name) + '"]');
          if (box) { box.innerHTML = d.steps[name]; }  // server-rendered, escaped HTML of this app
        });
        var target = step === "*" ? null : document.getElementById("solution-" + step);
        if (target) { target.setAttribute("tabindex", "-1"); target.focus(); }  // read it next
      }, function (e) { window.alert("Could not show the solution: " + e.message); });
      return;
    }
    check();
  });
})();
