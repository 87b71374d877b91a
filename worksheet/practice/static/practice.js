// worksheet practice: checks each cell as it is left (POST /check), shows
// worked lines on request (POST /reveal), and remembers, in this browser
// only (localStorage), the named mistakes made.  The pages work without it:
// the form then posts to the server, which answers with the same verdicts.
(function () {
  "use strict";
  var STORE = "worksheet-practice-mistakes";
  var SYMBOL = { right: "\u2713", carried: "\u21aa", mistake: "\u2717", wrong: "\u2717", unreadable: "?" };
  var WORDS = { right: "right", carried: "carried forward", mistake: "mistake", wrong: "wrong", unreadable: "could not read" };

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
      var a = document.createElement("a");
      a.href = "/mistakes?codes=" + encodeURIComponent(code);
      var c = document.createElement("code");
      text(c, code);
      a.appendChild(c);
      li.appendChild(a);
      li.appendChild(document.createTextNode(" \u2014 " + mine[code].count + " time" +
        (mine[code].count === 1 ? "" : "s") + (mine[code].hint ? ": " + mine[code].hint : "")));
      ul.appendChild(li);
    });
    var all = document.createElement("li");
    var link = document.createElement("a");
    link.href = "/mistakes?codes=" + encodeURIComponent(codes.join(","));
    text(link, "A new problem for all of them");
    all.appendChild(link);
    ul.appendChild(all);
    box.hidden = false;
    var forget = document.getElementById("forget-mistakes");
    if (forget) {
      forget.onclick = function () { saveMistakes({}); box.hidden = true; };
    }
  }

  var form = document.getElementById("practice");
  showMine();
  if (!form) { return; }

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

  function setVerdict(el, v) {
    var span = document.getElementById("v-" + el.id);
    if (!span) { return; }
    span.textContent = "";
    span.removeAttribute("data-mistake");
    if (!v) { span.removeAttribute("data-verdict"); return; }
    span.setAttribute("data-verdict", v.verdict);
    var sym = document.createElement("span");
    sym.className = "sym";
    sym.setAttribute("aria-hidden", "true");
    text(sym, SYMBOL[v.verdict]);
    span.appendChild(sym);
    var words = v.verdict === "mistake" && v.mistake ? v.mistake : WORDS[v.verdict];
    if (v.message) { words += " (" + v.message + ")"; }
    span.appendChild(document.createTextNode(" " + words));
    if (v.mistake) { span.setAttribute("data-mistake", v.mistake); }
  }

  function apply(data) {
    var by = {};
    (data.verdicts || []).forEach(function (v) { by["cell-" + v.step + "-" + v.row + "-" + v.col] = v; });
    inputs.forEach(function (el) { setVerdict(el, by[el.id]); });
    (data.steps || []).forEach(function (s) {
      var p = document.getElementById("progress-" + s.name);
      if (p) {
        var extra = "";
        var codes = {};
        (data.verdicts || []).forEach(function (v) { if (v.step === s.name && v.mistake) { codes[v.mistake] = 1; } });
        Object.keys(codes).forEach(function (c) {
          if (s.status !== "incorrect" || s.mistake !== c) {
            extra += (extra ? " " : ". ") + "Named mistake " + c + ": " + (data.hints[c] || "");
          }
        });
        text(p, s.text + extra);
      }
    });
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
    var body = Object.assign({}, problem, { cells: collect() });
    form.setAttribute("aria-busy", "true");
    pending = post("/check", body).then(apply, function (e) {
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

  form.addEventListener("submit", function (ev) {
    var button = ev.submitter;
    ev.preventDefault();
    if (button && button.name === "reveal") {
      var step = button.value;
      post("/reveal", Object.assign({}, problem, { step: step })).then(function (d) {
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
