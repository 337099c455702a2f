// opcheck trace viewer. Every string of the trace is data: it is inserted
// with textContent only, never parsed as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("trace-data").textContent);

  function el(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) { n.className = cls; }
    if (text !== undefined && text !== null) { n.textContent = String(text); }
    return n;
  }
  function add(parent, child) { parent.appendChild(child); return child; }

  function jump(step) {
    var row = document.getElementById("step-" + step);
    if (!row) { return; }
    // The timeline scrolls in its own pane, under its sticky lane header;
    // centring the row keeps it clear of the header.
    row.scrollIntoView({ block: "center", inline: "nearest" });
    row.classList.remove("flash");
    void row.offsetWidth;
    row.classList.add("flash");
  }
  function stepLink(step) {
    var b = el("button", "steplink", "#" + step);
    b.type = "button";
    b.setAttribute("data-step", String(step));
    b.addEventListener("click", function () { jump(step); });
    return b;
  }

  // The violation, pinned at the top.
  var top = add(document.body, el("header"));
  top.id = "violation";
  add(top, el("h1", null, data.title));
  var v = data.violation;
  if (v) {
    var p = add(top, el("div"));
    add(p, el("span", null, "Violation: "));
    add(p, el("span", "property", v.property));
    add(p, el("span", null, " at step "));
    add(p, stepLink(v.step));
    add(top, el("div", "statement", v.statement));
    if (v.explanation && v.explanation.length) {
      add(top, el("div", "explanation", v.explanation.join("\n")));
    }
    if (v.related && v.related.length) {
      var r = add(top, el("div", null, "Related steps: "));
      v.related.forEach(function (s) { add(r, stepLink(s)); });
    }
  } else {
    top.classList.add("ok");
    add(top, el("div", null, "No violation recorded in this trace."));
  }

  // Run metadata.
  var meta = add(document.body, el("div"));
  meta.id = "meta";
  add(meta, el("span", null, "scenario: " + data.scenario));
  add(meta, el("span", null, "opcheck " + data.opcheck));
  add(meta, el("span", null, "faults: " + data.faults));
  add(meta, el("span", null, data.events.length + " steps"));
  if (data.linearizabilityHref) {
    var a = add(meta, el("a", null, "linearizability view (porcupine)"));
    a.id = "linearizability";
    a.setAttribute("href", data.linearizabilityHref);
  }
  var det = add(meta, el("details"));
  add(det, el("summary", null, data.choiceCount + " choices (replay input)"));
  add(det, el("pre", null, data.choices));

  var layout = add(document.body, el("div"));
  layout.id = "layout";
  var wrap = add(layout, el("div"));
  wrap.id = "timeline-wrap";
  var table = add(wrap, el("table"));
  table.id = "timeline";
  var hr = add(add(table, el("thead")), el("tr"));
  add(hr, el("th", null, "step"));
  data.lanes.forEach(function (l) {
    var th = add(hr, el("th", "lane-head g-" + l.group, l.name));
    th.setAttribute("data-lane", l.name);
  });
  var tbody = add(table, el("tbody"));

  var related = {};
  if (v && v.related) { v.related.forEach(function (s) { related[s] = true; }); }

  data.events.forEach(function (e) {
    var tr = add(tbody, el("tr"));
    tr.id = "step-" + e.step;
    if (v && e.step === v.step) { tr.classList.add("violating"); }
    if (related[e.step]) { tr.classList.add("related"); }
    var st = add(tr, el("td", "step mono"));
    add(st, el("div", null, "#" + e.step));
    add(st, el("div", "muted", e.time));
    var cells = data.lanes.map(function (l) { return add(tr, el("td", "g-" + l.group)); });

    var box = add(cells[e.lane], el("div", "ev"));
    box.title = e.line;
    if (v && e.step === v.step) { box.classList.add("violating"); }
    add(box, el("span", "op", e.op));
    if (e.kind || e.key) {
      add(box, el("span", "target", " " + [e.kind, e.key].filter(Boolean).join(" ")));
    }
    add(box, el("div", "result mono" + (e.result.indexOf("error: ") === 0 ? " err" : ""),
      "→ " + e.result + (e.change ? " " + e.change : "")));
    if (e.detail) {
      // Long details (a restart's informer revisions, a panic's stack) are
      // clipped to three lines; a click shows the rest.
      var dt = add(box, el("div", "detail", e.detail));
      dt.title = "click to show or clip the whole detail";
      dt.addEventListener("click", function () { dt.classList.toggle("open"); });
    }
    if (e.server && e.read) {
      var rn = "apiserver-" + e.server + ", cache at rev " + e.cacheRev;
      if (e.headRev) { rn += ", store at rev " + e.headRev; }
      add(box, el("div", "muted", rn));
    }
    if (e.stale) {
      box.classList.add("stale");
      add(box, el("div", "stale-note", "stale read: the cache had not seen"));
      var ul = add(box, el("ul", "missed"));
      if (e.missed && e.missed.length) {
        e.missed.forEach(function (m) { add(ul, el("li", null, m)); });
      } else {
        add(ul, el("li", null, "writes after rev " + e.cacheRev + (e.headRev ? " (store at rev " + e.headRev + ")" : "")));
      }
    }
    if (e.object >= 0) {
      var o = data.objects[e.object];
      var b = add(box, el("button", "obj-ver", "v" + (e.version + 1) + " of " + o.key));
      b.type = "button";
      b.addEventListener("click", function () { openObject(e.object, e.version); });
    }
    if (e.serverLane >= 0 && e.serverLane !== e.lane) {
      var s = add(cells[e.serverLane], el("div", "served mono",
        (e.read ? "served " : "handled ") + e.op + (e.key ? " " + e.key : "") +
        (e.read ? " @" + e.cacheRev : "") + (e.stale ? " (stale)" : "")));
      if (e.stale) { s.classList.add("stale"); }
    }
    if (e.markLane >= 0) {
      add(cells[e.markLane], el("div", "mark " + e.mark, e.mark === "crash" ? "✖ crashed" : "↻ restarted"));
    }
  });

  // Objects and their versions.
  var side = add(layout, el("aside"));
  side.id = "objects";
  add(side, el("h2", null, "Objects"));
  var list = add(side, el("div"));
  list.id = "object-list";
  if (!data.hasHistory) {
    add(side, el("div", "muted", "Object versions need the replayed history: view the trace with explore view."));
  } else if (!data.objects.length) {
    add(side, el("div", "muted", "No object was written."));
  }
  data.objects.forEach(function (o, i) {
    var b = add(list, el("button", "obj-link", o.kind + " " + o.key + " (" + o.versions.length + (o.versions.length === 1 ? " version)" : " versions)")));
    b.type = "button";
    b.setAttribute("data-object", o.kind + " " + o.key);
    b.addEventListener("click", function () { openObject(i, o.versions.length - 1); });
  });
  var panel = add(side, el("div"));
  panel.id = "diff-panel";
  panel.hidden = true;
  var ptitle = add(panel, el("h3"));
  var vers = add(panel, el("div"));
  vers.id = "versions";
  var pnote = add(panel, el("div", "muted"));
  var diff = add(panel, el("pre"));
  diff.id = "diff";
  var full = add(panel, el("details"));
  add(full, el("summary", null, "full JSON of this version"));
  var fullPre = add(full, el("pre"));

  function lineDiff(a, b) {
    var n = a.length, m = b.length, i, j;
    var lcs = [];
    for (i = 0; i <= n; i++) { lcs.push(new Int32Array(m + 1)); }
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    var out = [];
    i = 0; j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) { out.push([" ", a[i]]); i++; j++; }
      else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) { out.push(["-", a[i]]); i++; }
      else { out.push(["+", b[j]]); j++; }
    }
    return out;
  }

  function openObject(oi, vi) {
    var o = data.objects[oi];
    var ver = o.versions[vi];
    panel.hidden = false;
    ptitle.textContent = o.kind + " " + o.key;
    vers.textContent = "";
    o.versions.forEach(function (x, k) {
      var b = add(vers, el("button", "ver" + (k === vi ? " current" : ""), "v" + (k + 1) + " #" + x.step));
      b.type = "button";
      b.setAttribute("data-step", String(x.step));
      b.title = x.change + " at rev " + x.rev + " by " + x.actor;
      b.addEventListener("click", function () { openObject(oi, k); });
    });
    var prev = vi > 0 ? o.versions[vi - 1].json.split("\n") : [];
    pnote.textContent = (vi > 0 ? "diff v" + vi + " → v" + (vi + 1) : "v1 (first version)") +
      ": " + ver.change + " at rev " + ver.rev + " by " + ver.actor + " (step " + ver.step + ")";
    diff.textContent = "";
    var firstChange = null;
    lineDiff(prev, ver.json.split("\n")).forEach(function (d) {
      var cls = d[0] === "+" ? "d-add" : d[0] === "-" ? "d-del" : "d-same";
      var line = add(diff, el("span", cls, d[0] + " " + d[1]));
      if (cls !== "d-same" && !firstChange) { firstChange = line; }
    });
    fullPre.textContent = ver.json;
    // Show the panel's title, then the first change if it is further down:
    // the objects pane scrolls on its own, the timeline stays put.
    side.scrollTop += panel.getBoundingClientRect().top - side.getBoundingClientRect().top;
    if (firstChange) {
      var sr = side.getBoundingClientRect(), cr = firstChange.getBoundingClientRect();
      if (cr.bottom > sr.bottom - 8) { side.scrollTop += cr.top - sr.top - sr.height / 3; }
    }
  }
}());
