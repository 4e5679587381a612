/* combex study page: draws the sections from the study's JSON and polls it.
   Every text goes through textContent (never innerHTML), so names typed by people are
   shown, never run. */
(function () {
  "use strict";
  var root = document.getElementById("study");
  var name = root.getAttribute("data-name");
  var api = "/api/study/" + encodeURIComponent(name);
  var interval = Math.max(0.5, parseFloat(root.getAttribute("data-interval")) || 3);
  var chart = null;
  var chartKey = "";

  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === "text") e.textContent = attrs[k];
        else if (k === "cls") e.className = attrs[k];
        else e.setAttribute(k, attrs[k]);
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }
  function fill(id) {
    var node = document.getElementById(id);
    while (node.firstChild) node.removeChild(node.firstChild);
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) node.appendChild(arguments[i]);
    return node;
  }
  function num(x, digits) {
    if (x === null || x === undefined || !isFinite(x)) return "-";
    if (Number.isInteger(x)) return String(x);
    var d = digits === undefined ? 3 : digits;
    var a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(2);
    return x.toFixed(a >= 100 ? 1 : d).replace(/\.?0+$/, "");
  }
  function when(iso) {
    return iso ? iso.replace("T", " ").replace("Z", " UTC") : "-";
  }
  function names(list) {
    return list && list.length ? list.join(", ") : "-";
  }
  function unavailable(sec) {
    return el("p", {cls: "unavailable", text: sec.reason || "not available"});
  }
  function card(title, value, note, cls) {
    return el("div", {cls: "card " + (cls || "")},
      el("div", {cls: "card-title", text: title}),
      el("div", {cls: "card-value", text: value}),
      note ? el("div", {cls: "card-note", text: note}) : null);
  }

  function renderHead(s) {
    var st = document.getElementById("status");
    var status = s.summary.available ? s.summary.status : "?";
    st.textContent = s.summary.stopped_by_owner ? "stopped by the owner" : status.replace(/_/g, " ");
    st.className = "status status-" + status;
    var p = s.problem;
    var what = p.team ? ("the best team of " + (p.team_size || "?") + " among " + p.n + " workers")
                      : ("the best of " + p.n + " arms");
    var range = (p.low !== null && p.high !== null) ? ("; one " + (p.team ? "session's" : "evaluation's") +
                " score in [" + num(p.low) + ", " + num(p.high) + "]") : "";
    var delta = s.summary.available && s.summary.solver_params ? s.summary.solver_params.delta : null;
    var eps = s.summary.available && s.summary.solver_params ? s.summary.solver_params.epsilon : null;
    fill("subtitle", document.createTextNode(
      s.solver_title + " looks for " + what + (eps ? " (or one within \u03b5 = " + eps + " of it)" : "") + range +
      (delta !== null && delta !== undefined ? "; target error probability \u03b4 = " + delta : "") + "."));
  }

  function renderVerdict(s) {
    var b = s.best, sm = s.summary;
    var cards = [];
    if (!b.available) {
      fill("verdict", unavailable(b));
      return;
    }
    var stopped = sm.available && sm.status !== "running";
    var ev = sm.available ? sm.evaluations : b.evaluations;
    var early = !ev ? "after the first evaluations" : null;  // nothing told yet: no solver has these
    if (b.first_check_pending) early = typeof b.next_check_at === "number"
      ? "after the rule's first check, at " + b.next_check_at + " evaluations"
      : "after the solver's initial sessions (its stopping rule has not checked yet)";
    var certified = sm.available && sm.status === "identified";
    cards.push(card(stopped ? (certified ? "Answer" : "Answer (not certified)") : "Leader",
      b.first_check_pending ? "-" : names(b.leader),
      b.leader && b.leader.length && !b.first_check_pending ? null : early, "leader"));
    var chal = b.challenger && !b.first_check_pending;
    cards.push(card("Challenger", chal ? names(b.challenger) : "-",
      chal ? "the closest alternative the rule checks against" : (early || (stopped && b.statistic === null
        ? "the study stopped before the rule's first check" : "none reported by this solver")),
      "challenger"));
    cards.push(card("Evaluations told", num(ev) + (sm.stopped_by_owner ? "" : sm.budget ? " of " + sm.budget : ""),
      sm.available && sm.tickets ? (sm.stopped_by_owner ? "stopped by the owner" + (sm.budget_before_stop ?
        " (the budget was " + sm.budget_before_stop + ")" : "") + "; " : "") + (sm.tickets.pending || 0) + " pending" +
        (sm.voided ? "; " + sm.voided + " voided (counted against the budget, not in the statistics)" : "") : null,
      "evaluations"));
    cards.push(card("How sure (\u03b4 achieved)", b.delta_achieved === null ? "-" : String(Number(b.delta_achieved.toPrecision(3))),
      b.delta_achieved === null ? (early || "not computed by this solver")
        : b.delta_achieved >= 1 ? (stopped ? "nothing certified: no error probability below 1 can be claimed for this answer (a larger budget continues the study)"
          : "nothing certified yet: the data rule out no alternative at an error probability below 1")
        : "the stopping rule would hold now at any error probability \u2265 this value (anytime-valid)" +
          (b.oblivious_design && !stopped ? "; between checks it moves, either way, with the estimate of the noise level" : ""),
      "delta-achieved"));
    var done = sm.available && sm.status === "identified";  // the rule holds: no estimate, none left
    cards.push(card("Evaluations left", done ? "none" : b.evaluations_left === null ? "-" : "about " + num(Math.round(b.evaluations_left)),
      b.evaluations_left === null ? (early || b.evaluations_left_note || "no estimate from this solver")
        : (b.evaluations_left_short || b.evaluations_left_note || "an estimate, not a promise"),
      "evaluations-left"));
    var nodes = cards;
    var v = fill("verdict");
    nodes.forEach(function (c) { v.appendChild(c); });
    if (b.noise_check) v.appendChild(el("p", {cls: "noise-check", text: "Noise check: " + b.noise_check}));
  }

  function renderChart(s) {
    var h = s.history, b = s.best;
    var stopped = s.summary && s.summary.available && s.summary.status !== "running";
    var caption = document.getElementById("chart-caption");
    var box = document.getElementById("chart");
    if (!h.available || !h.evaluations.length) {
      if (chart) { chart.destroy(); chart = null; }
      fill("chart", h.available ? el("p", {cls: "muted", text: "No statistic yet: the stopping rule's first check comes " +
        (b.available && typeof b.next_check_at === "number" ? "after " + b.next_check_at + " evaluations."
                                                             : "after the solver's initial sessions.")})
                                : unavailable(h));
      caption.textContent = "";
      return;
    }
    var statName = (b.available && b.statistic_name) || "stopping statistic";
    var op = b.available && b.stops_when ? b.stops_when : null;
    caption.textContent = "The " + statName + " of " + s.solver_title +
      (s.solver_title !== s.solver ? " ('" + s.solver + "')" : "") + " at each check of its stopping rule (solid blue; " +
      (b.available && b.oblivious_design
        ? "this solver checks at set points" + (typeof b.checked_at === "number" ? ", the last after " +
          b.checked_at + " evaluations" : "") + (typeof b.next_check_at === "number" && !stopped
          ? ", the next after " + b.next_check_at : "") + (typeof b.budget_last_check === "number" && !stopped
          ? "; the last before the budget of " + b.budget + " comes after " + b.budget_last_check +
            " (the evaluations after it cannot certify: see the Certificate)" : "")
        : "a check after each told evaluation, or after each completed batch") +
      ") and the stopping threshold (dashed red)" +
      (op ? "; the study stops when " + op + "." : ".") +
      (h.statistic.every(function (v) { return v === null; }) ? " " + s.solver_title +
        " has reported no statistic so far: only the threshold is drawn." : "") +
      (h.evaluations.length === 1 ? " One check" + (stopped ? ", after " + h.evaluations[0] +
        " evaluations (the solver's initial sessions): the study stopped before the next."
        : " so far: the first comes after " + h.evaluations[0] +
        " evaluations (the solver's initial sessions), more come as scores are told.") : "");
    var data = [h.evaluations, h.statistic, h.threshold];
    var key = statName + "|" + box.clientWidth + "|" + (h.evaluations.length <= 40) + "|" +
      Boolean(b.available && b.oblivious_design);
    if (chart && chartKey === key) {
      chart.setData(data);
      return;
    }
    if (chart) chart.destroy();
    fill("chart");
    var width = Math.max(240, Math.min(box.clientWidth || 720, 900));
    // a solver checking at set points keeps a check's values until the next: drawn as steps
    var steps = b.available && b.oblivious_design && uPlot.paths && uPlot.paths.stepped
      ? uPlot.paths.stepped({align: 1}) : undefined;
    chart = new uPlot({
      width: width, height: 280,
      scales: {x: {time: false}},
      axes: [
        {label: "evaluations told", stroke: "#333", grid: {stroke: "#eee"},
         incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 1e6]},
        {label: statName, stroke: "#333", grid: {stroke: "#eee"}, size: 60}
      ],
      series: [
        {label: "evaluations told"},
        {label: statName, stroke: "#1f5fbf", width: 2, points: {show: h.evaluations.length <= 40}, paths: steps},
        {label: "threshold", stroke: "#d62728", width: 2, dash: [8, 5], points: {show: false}, paths: steps}
      ],
      legend: {show: true, live: false}
    }, data, box);
    chartKey = key;
    window.combexChart = chart;
  }

  function renderEstimates(s) {
    var e = s.estimates;
    document.getElementById("members-title").textContent = s.problem.team ? "Members: estimated contributions" : "Arms: estimated means";
    if (!e.available) {
      fill("estimates", unavailable(e));
      document.getElementById("estimates-validity").textContent = "";
      return;
    }
    var rows = e.rows;
    var lo = Infinity, hi = -Infinity;
    rows.forEach(function (r) {
      if (r.low !== null) lo = Math.min(lo, r.low);
      if (r.high !== null) hi = Math.max(hi, r.high);
      if (r.estimate !== null && r.estimable) { lo = Math.min(lo, r.estimate); hi = Math.max(hi, r.estimate); }
    });
    var noScale = !isFinite(lo) || !isFinite(hi) || hi <= lo;  // nothing estimated yet: no axis to name
    if (noScale) { lo = 0; hi = 1; }
    var W = 260;
    function X(v) { return 6 + (W - 12) * (v - lo) / (hi - lo); }
    var pending = s.best.available && s.best.first_check_pending;  // no leader yet: nothing to mark
    var leader = s.best.available && !pending ? s.best.leader : [];
    var tbody = el("tbody");
    rows.forEach(function (r) {
      var bar = svg("svg", {width: W, height: 14, "class": "interval"});
      if (r.low !== null && r.high !== null) {
        bar.appendChild(svg("line", {x1: X(r.low), x2: X(r.high), y1: 7, y2: 7, "class": "interval-line"}));
      }
      if (r.estimate !== null && r.estimable) bar.appendChild(svg("circle", {cx: X(r.estimate), cy: 7, r: 3.5, "class": "interval-dot"}));
      var tr = el("tr", {cls: "member-row" + (leader.indexOf(r.name) >= 0 ? " in-leader" : "")},
        el("td", {cls: "member-name", text: r.name}),
        el("td", {cls: "num", text: num(r.n)}),
        el("td", {cls: "num estimate" + (r.estimable ? "" : " muted"),
                  text: r.estimable ? num(r.estimate, 2) : "not yet"}),
        el("td", {cls: "num ci", text: r.low === null ? "-" : "[" + num(r.low, 2) + ", " + num(r.high, 2) + "]"}),
        el("td", null, bar));
      tbody.appendChild(tr);
    });
    var table = el("table", {cls: "estimates"},
      el("thead", null, el("tr", null, el("th", {text: "name"}), el("th", {cls: "num", text: "evaluations"}),
        el("th", {cls: "num", text: "estimate"}), el("th", {cls: "num", text: "interval"}),
        el("th", {cls: "scale", text: noScale ? "" : "scale " + num(lo, 1) + " to " + num(hi, 1)}))),
      tbody);
    fill("estimates", table);
    document.getElementById("estimates-validity").textContent =
      (e.noise ? e.noise + " " : "") + (e.validity ? "What the intervals mean: " + e.validity : "") +
      (s.problem.team ? (pending ? " Until the solver's initial sessions are told the estimates rest on a few " +
        "teams, and no team leads yet." : " Members of the leading team are marked.") : "") +
      (rows.some(function (r) { return !r.estimable; }) ? " An estimate \"not yet\": the teams told so far " +
        "cannot tell this member's contribution from the others' (no estimate is shown until they can)." : "");
  }

  function renderCertificate(s) {
    var b = s.best;
    if (!b.available) { fill("certificate", unavailable(b)); return; }
    if (b.certificate_text) {
      fill("certificate", el("p", {cls: "certificate-text", text: b.certificate_text}));
    } else {
      fill("certificate", el("p", {cls: "muted", text: b.has_certificate
        ? "This version of combex.studies gives no certificate in words."
        : "No certificate yet: the study is running."}));
    }
  }

  function renderEvents(s) {
    var e = s.events;
    if (!e) { fill("events"); return; }
    if (!e.available) { fill("events", unavailable(e)); return; }
    if (!e.rows.length) {
      fill("events", el("p", {cls: "muted", text: "No budget change or stop so far."}));
      return;
    }
    var list = el("ol", {cls: "events"});
    e.rows.forEach(function (r) {
      list.appendChild(el("li", {cls: "event"}, r.at ? el("span", {cls: "muted", text: when(r.at) + " "}) : null, r.text));
    });
    fill("events", list);
  }

  function renderPending(s) {
    var p = s.pending;
    if (!p.available) { fill("pending", unavailable(p)); return; }
    if (!p.tickets.length) { fill("pending", el("p", {cls: "muted", text: "No ticket is out."})); return; }
    var tbody = el("tbody");
    p.tickets.forEach(function (t) {
      tbody.appendChild(el("tr", {cls: "pending-row", "data-ticket": String(t.id)},
        el("td", {cls: "num", text: "#" + t.id}),
        el("td", {text: names(t.team)}),
        el("td", {cls: "assistant", text: t.assistant || "the owner"}),
        el("td", {cls: "age" + (t.overdue ? " overdue" : ""), text: t.age + (t.overdue ? " (held long)" : "")}),
        el("td", {text: when(t.issued_at)}),
        el("td", {text: when(t.lease_deadline)})));
    });
    fill("pending", el("table", {cls: "pending"},
      el("thead", null, el("tr", null, el("th", {cls: "num", text: "ticket"}), el("th", {text: "team"}),
        el("th", {text: "assistant"}), el("th", {text: "age"}), el("th", {text: "issued"}),
        el("th", {text: "lease until"}))), tbody));
  }

  function renderLog(s) {
    var l = s.log;
    if (!l.available) { fill("log", unavailable(l)); return; }
    if (!l.rows.length) { fill("log", el("p", {cls: "muted", text: "Nothing told yet."})); return; }
    var tbody = el("tbody");
    var olderShown = false;
    l.rows.forEach(function (r) {
      if (r.older && !olderShown) {  // corrected rows older than the newest ones listed
        olderShown = true;
        var sep = el("td", {cls: "muted", text: "Older evaluations that were corrected:"});
        sep.setAttribute("colspan", "7");
        tbody.appendChild(el("tr", {cls: "older-head"}, sep));
      }
      var score = el("td", {cls: "num score"});
      if (r.voided) {
        score.appendChild(el("s", {text: num(r.original !== null ? r.original : r.score)}));
        score.appendChild(document.createTextNode(" void"));
      } else {
        score.appendChild(document.createTextNode(num(r.score)));
        if (r.original !== null && r.original !== r.score) {
          score.appendChild(document.createTextNode(" "));
          score.appendChild(el("s", {cls: "muted", text: num(r.original)}));
        }
      }
      var corr = el("td", {cls: "corrections"});
      (r.corrections || []).forEach(function (c) {
        corr.appendChild(el("div", {cls: "correction",
          text: (c.voided ? "voided" : "corrected to " + num(c.score)) + " by " + (c.assistant || "the owner") +
                (c.at ? " at " + when(c.at) : "") + ": " + (c.reason || "")}));
      });
      tbody.appendChild(el("tr", {cls: "log-row" + (r.corrections && r.corrections.length ? " corrected" : ""),
                                  "data-ticket": String(r.id)},
        el("td", {cls: "num", text: r.seq === null || r.seq === undefined ? "-" : String(r.seq)}),
        el("td", {cls: "num", text: "#" + r.id}),
        el("td", {text: names(r.team)}),
        score,
        el("td", {text: r.assistant || "the owner"}),
        el("td", {text: when(r.told_at)}),
        corr));
    });
    fill("log", el("table", {cls: "log"},
      el("thead", null, el("tr", null, el("th", {cls: "num", text: "n"}), el("th", {cls: "num", text: "ticket"}),
        el("th", {text: "team"}), el("th", {cls: "num", text: "score"}), el("th", {text: "told by"}),
        el("th", {text: "told at"}), el("th", {text: "corrections"}))), tbody));
  }

  var last = null, resizing = null;
  window.addEventListener("resize", function () {  // a phone turned, a window resized: the chart fits its box again
    clearTimeout(resizing);
    resizing = setTimeout(function () { if (last) renderChart(last); }, 150);
  });

  function render(s) {
    last = s;
    renderHead(s);
    renderVerdict(s);
    renderChart(s);
    renderEstimates(s);
    renderCertificate(s);
    renderEvents(s);
    renderPending(s);
    renderLog(s);
    document.getElementById("updated").textContent = "Updated " + when(s.updated_at) +
      "; this page reads the study every " + interval + " s.";
    root.setAttribute("data-updated", s.updated_at || "");
  }

  function poll() {
    fetch(api, {credentials: "same-origin", cache: "no-store"})
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (s) { render(s); })
      .catch(function (e) {
        document.getElementById("updated").textContent = "Could not read the study (" + e.message + "); retrying.";
      })
      .then(function () { setTimeout(poll, interval * 1000); });
  }

  render(JSON.parse(document.getElementById("snapshot").textContent));
  setTimeout(poll, interval * 1000);
})();
