/* sessiongraph run page: draws the timeline and tables from the inline JSON block.
   Values reach the DOM through textContent and setAttribute only, never as markup. */
(function () {
  "use strict";
  var T0 = performance.now();
  var D = JSON.parse(document.getElementById("sg-data").textContent);
  var T_PARSED = performance.now();
  var svg = document.getElementById("timeline"), axis = document.getElementById("axis");
  var scroller = document.getElementById("timeline-scroll"), box = document.getElementById("details");
  var NS = svg.namespaceURI;
  var LANE = 18, LABEL_W = 240, PAD = 14;
  var S = D.sessions, E = D.edges, A = D.artifacts, LG = D.legend;
  var byId = {}, edgeById = {}, edgesOf = {}, artByPath = {};
  S.forEach(function (s) { byId[s.id] = s; });
  E.forEach(function (e) {
    edgeById[e.id] = e;
    (edgesOf[e.src] = edgesOf[e.src] || []).push(e);
    if (e.dst !== e.src) (edgesOf[e.dst] = edgesOf[e.dst] || []).push(e);
  });
  A.forEach(function (a) { artByPath[a.path] = a; });
  var laneEls = {}, edgeEls = {}, marked = [], sel = null, tables = {};

  // -- formatting ------------------------------------------------------------------------------
  function pad2(n) { return (n < 10 ? "0" : "") + n; }
  function fmtTime(ms) {
    return ms == null ? "n/a" : new Date(ms).toISOString().replace("T", " ").slice(0, 19) + "Z";
  }
  function fmtDur(s) {
    if (s == null) return "n/a";
    var neg = s < 0 ? "-" : ""; s = Math.abs(s);
    if (s < 1) return neg + Math.round(s * 1000) + " ms";
    if (s < 60) return neg + s.toFixed(s < 10 ? 2 : 1) + " s";
    var m = Math.floor(s / 60), h = Math.floor(m / 60), d = Math.floor(h / 24);
    if (d) return neg + d + "d " + pad2(h % 24) + "h";
    if (h) return neg + h + "h " + pad2(m % 60) + "m";
    return neg + m + "m " + pad2(Math.floor(s % 60)) + "s";
  }
  function fmtInt(n) { return n == null ? "n/a" : Number(n).toLocaleString("en-US"); }
  function fmtUsd(u) {
    if (u == null) return "n/a";
    return "$" + (u !== 0 && u < 0.01 ? u.toFixed(4) : u.toFixed(2));
  }
  function harnessClass(h) { return LG.harness_class[h || "unknown"] || "hc-6"; }

  // -- DOM helpers -----------------------------------------------------------------------------
  function svgEl(tag, attrs, parent) {
    var n = document.createElementNS(NS, tag);
    for (var k in attrs) n.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(n);
    return n;
  }
  function h(tag, text, cls, parent) {
    var n = document.createElement(tag);
    if (text != null) n.textContent = text;
    if (cls) n.className = cls;
    if (parent) parent.appendChild(n);
    return n;
  }
  function link(type, id, text) {
    var b = h("a", text, "link");
    b.href = "#";
    b.title = id;
    b.addEventListener("click", function (ev) { ev.preventDefault(); select(type, id, { scroll: true }); });
    return b;
  }

  // -- time scale ------------------------------------------------------------------------------
  function domain() {
    var lo = Infinity, hi = -Infinity;
    function take(t) { if (t != null) { lo = Math.min(lo, t); hi = Math.max(hi, t); } }
    // The run's own sessions and the edges between them: a far end in another run (drawn at the
    // edge, clamped) must not stretch the axis until the run fills a sliver of it.
    S.forEach(function (s) { if (!s.external) { take(s.start); take(s.end); } });
    E.forEach(function (e) {
      var a = byId[e.src], b = byId[e.dst];
      if (a && b && !a.external && !b.external) take(e.ts);
    });
    if (!isFinite(lo)) { lo = 0; hi = 1000; }
    if (hi - lo < 1000) hi = lo + 1000;
    var p = (hi - lo) * 0.02;
    return [lo - p, hi + p];
  }
  var DOM = domain();

  // Where an edge starts and ends in time: spawn/launch from the call to the child's start;
  // artifact, continue and fork from the write (or the earlier session's end) to the read (or start).
  function edgeTimes(e) {
    var lag = (e.lag_s || 0) * 1000, t = e.ts;
    if (t == null) {
      var d = byId[e.dst], s = byId[e.src];
      t = d && d.start != null ? d.start : (s && s.start != null ? s.start : DOM[0]);
      return [t, t];
    }
    if (e.kind === "spawn" || e.kind === "launch") return [t, t + lag];
    return [t - lag, t];
  }

  var MIN_BAR = 6;  // px
  var TICKS = [1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5,
               432e5, 864e5, 1728e5, 6048e5, 2592e6];

  function draw() {
    var H = S.length * LANE + 4;
    svg.textContent = "";
    axis.textContent = "";
    laneEls = {}; edgeEls = {};
    svg.setAttribute("width", 10); svg.setAttribute("height", H);  // height first: its scrollbar takes width
    var W = Math.max(720, scroller.clientWidth), x0 = LABEL_W + 6, x1 = W - PAD;
    var span = DOM[1] - DOM[0];
    function X(t) { return x0 + Math.max(0, Math.min(1, (t - DOM[0]) / span)) * (x1 - x0); }
    function Y(id) { return byId[id].lane * LANE + LANE / 2; }
    svg.setAttribute("width", W);
    axis.setAttribute("width", W);
    var defs = svgEl("defs", {}, svg);
    var clip = svgEl("clipPath", { id: "sg-label-clip" }, defs);
    svgEl("rect", { x: 0, y: 0, width: LABEL_W, height: H }, clip);
    var kinds = {};
    LG.kinds.forEach(function (k) { kinds[LG.kind_class[k]] = 1; });
    Object.keys(kinds).forEach(function (cls) {
      var m = svgEl("marker", { id: "m-" + cls, "class": cls, viewBox: "0 0 8 8", refX: 7, refY: 4,
                                markerUnits: "userSpaceOnUse", markerWidth: 8, markerHeight: 8,
                                orient: "auto-start-reverse" }, defs);
      svgEl("path", { d: cls === "k-artifact" ? "M4 1 A3 3 0 1 1 3.99 1 Z" : "M0 0 L8 4 L0 8 Z", "class": "head" }, m);
    });
    // axis and grid
    var step = TICKS[TICKS.length - 1];
    for (var i = 0; i < TICKS.length; i++) { if (span / TICKS[i] <= (x1 - x0) / 90) { step = TICKS[i]; break; } }
    var grid = svgEl("g", {}, svg);
    for (var y = 0; y < S.length; y += 2) {
      svgEl("rect", { "class": "stripe", x: 0, y: y * LANE, width: W, height: LANE }, grid);
    }
    for (var t = Math.ceil(DOM[0] / step) * step; t <= DOM[1]; t += step) {
      var x = X(t), iso = new Date(t).toISOString();
      svgEl("line", { "class": "grid", x1: x, x2: x, y1: 0, y2: H }, grid);
      svgEl("line", { x1: x, x2: x, y1: 18, y2: 26 }, axis);
      var label = svgEl("text", { x: x, y: 13, "text-anchor": "middle" }, axis);
      label.textContent = step >= 864e5 ? iso.slice(5, 10) : step >= 6e4 ? iso.slice(11, 16) : iso.slice(11, 19);
    }
    var first = svgEl("text", { x: 6, y: 13 }, axis);
    first.textContent = fmtTime(DOM[0] + span / 51).slice(0, 10) + " UTC";
    // lanes
    var labels = svgEl("g", { "clip-path": "url(#sg-label-clip)" }, svg), bars = svgEl("g", {}, svg);
    S.forEach(function (s) {
      var top = s.lane * LANE;
      var text = svgEl("text", { "class": "label" + (s.external ? " external" : ""), x: 6 + (s.depth || 0) * 12,
                                 y: top + 13, "data-session": s.id }, labels);
      text.textContent = (s.external ? "\u2197 " : "") + s.short + "  " + (s.role || s.kind || "");
      var a = s.start != null ? s.start : (s.end != null ? s.end : DOM[0]);
      var b = s.end != null ? s.end : a;
      var bx = X(a), bw = Math.max(MIN_BAR, X(b) - bx);  // a short session stays visible on a long axis
      var bar = svgEl("rect", { "class": "bar " + (s.external ? "external" : harnessClass(s.harness)), x: bx,
                                y: top + 3, width: bw, height: LANE - 6, rx: 2, "data-session": s.id,
                                "data-harness": s.harness || "" }, bars);
      svgEl("title", {}, bar).textContent = s.id + "\n" + (s.harness || "") + " " + (s.role || s.kind || "") +
        (s.external ? " (run " + (s.run || "none") + ")" : "") + "\n" + fmtTime(s.start) + " \u2192 " + fmtTime(s.end);
      laneEls[s.id] = [text, bar];
    });
    // edges
    var eg = svgEl("g", {}, svg);
    E.forEach(function (e) {
      if (!byId[e.src] || !byId[e.dst]) return;
      var tt = edgeTimes(e), ax = X(tt[0]), bx = X(tt[1]), ay = Y(e.src), by = Y(e.dst), d;
      if (e.src === e.dst) {
        d = "M" + ax + " " + ay + " C" + (ax + 20) + " " + (ay - 16) + " " + (bx + 20) + " " + (by + 16) + " " + bx + " " + by;
      } else {
        var mid = (ax + bx) / 2;
        d = "M" + ax + " " + ay + " C" + mid + " " + ay + " " + mid + " " + by + " " + bx + " " + by;
      }
      var kc = LG.kind_class[e.kind], g = svgEl("g", { "class": "edge " + kc + " " + LG.tier_class[e.tier],
                                                   "data-edge": e.id, "data-kind": e.kind, "data-tier": e.tier }, eg);
      svgEl("path", { "class": "hit", d: d }, g);
      svgEl("path", { "class": "line", d: d, "marker-end": "url(#m-" + kc + ")" }, g);
      svgEl("title", {}, g).textContent = e.kind + " [" + e.tier + "] " + byId[e.src].short + " \u2192 " +
        byId[e.dst].short + (e.path ? "\n" + e.path : "");
      edgeEls[e.id] = g;
    });
  }

  svg.addEventListener("click", function (ev) {
    var n = ev.target.closest("[data-edge],[data-session]");
    if (!n) return select(null);
    if (n.hasAttribute("data-edge")) select("edge", n.getAttribute("data-edge"));
    else select("session", n.getAttribute("data-session"));
  });

  // -- tables ----------------------------------------------------------------------------------
  // A table of more than WINDOW rows keeps only the rows in view (and a margin) in the DOM, so a
  // 1,000-session run lays out about as fast as a small one; sorting still orders every row.
  var WINDOW = 200, OVERSCAN = 25;
  function Table(el, cols, rows, attr, idOf, type) {
    var head = h("tr", null, null, el.tHead), body = el.tBodies[0], box = el.parentNode;
    var order = rows.map(function (r, i) { return { r: r, i: i, tr: null }; });
    var self = { key: null, dir: 1, selected: null, virtual: rows.length > WINDOW, rowH: 0, lo: 0, hi: 0 };
    var top = spacer(), bottom = spacer(), pending = 0;
    el.setAttribute("aria-rowcount", String(rows.length + 1));
    cols.forEach(function (c) {
      var th = h("th", c.label, c.num && !c.left ? "num" : "", head);
      th.setAttribute("data-key", c.key);
      th.setAttribute("aria-sort", "none");
      th.addEventListener("click", function () { self.sort(c.key, self.key === c.key ? -self.dir : (c.num ? -1 : 1)); });
    });
    function spacer() {
      var tr = h("tr", null, "spacer");
      tr.setAttribute("aria-hidden", "true");
      h("td", null, null, tr).colSpan = cols.length;
      return tr;
    }
    function rowEl(x, pos) {
      if (!x.tr) {
        var tr = x.tr = h("tr"), r = x.r;
        tr.setAttribute(attr, idOf(r));
        tr.addEventListener("click", function () { select(type, idOf(r), { scroll: true, fromTable: true }); });
        cols.forEach(function (c) {
          var v = c.get(r), td = h("td", null, c.num && !c.left ? "num" : "", tr);
          td.setAttribute("data-key", c.key);
          td.setAttribute("data-v", v == null ? "" : String(v));
          if (c.chip) h("span", null, "chip " + harnessClass(v), td);
          td.appendChild(document.createTextNode(v == null ? "n/a" : c.fmt ? c.fmt(v, r) : String(v)));
          if (v == null) td.classList.add("na");
          if (c.title) td.title = c.title(r);
        });
      }
      x.tr.setAttribute("aria-rowindex", String(pos + 2));
      x.tr.classList.toggle("on", self.selected !== null && idOf(x.r) === self.selected);
      return x.tr;
    }
    function render() {
      var lo = 0, hi = order.length, frag = document.createDocumentFragment();
      if (self.virtual) {
        var rh = self.rowH || 26;
        lo = Math.max(0, Math.floor(box.scrollTop / rh) - OVERSCAN);
        hi = Math.min(order.length, lo + Math.ceil((box.clientHeight || 600) / rh) + 2 * OVERSCAN);
        top.style.height = lo * rh + "px";
        bottom.style.height = (order.length - hi) * rh + "px";
        frag.appendChild(top);
      }
      for (var k = lo; k < hi; k++) frag.appendChild(rowEl(order[k], k));
      if (self.virtual) frag.appendChild(bottom);
      body.textContent = "";
      body.appendChild(frag);
      self.lo = lo; self.hi = hi;
    }
    render();
    if (self.virtual) {
      var first = body.querySelector("tr[" + attr + "]");
      self.rowH = first ? first.getBoundingClientRect().height || 26 : 26;
      render();
      box.addEventListener("scroll", function () {
        if (!pending) pending = requestAnimationFrame(function () { pending = 0; render(); });
      });
    }
    self.sort = function (key, dir) {
      var col = cols.filter(function (c) { return c.key === key; })[0];
      if (!col) return;
      self.key = key; self.dir = dir;
      order.sort(function (p, q) {
        var a = col.get(p.r), b = col.get(q.r);
        if (a == null || b == null) return a == null && b == null ? p.i - q.i : (a == null ? 1 : -1);
        var c = col.num ? a - b : (a < b ? -1 : a > b ? 1 : 0);
        return c * dir || p.i - q.i;
      });
      if (self.virtual) box.scrollTop = 0;
      render();
      Array.prototype.forEach.call(head.children, function (th) {
        th.setAttribute("aria-sort", th.getAttribute("data-key") !== key ? "none" : dir > 0 ? "ascending" : "descending");
      });
      writeHash();
    };
    // Highlight one row (or none) and, when asked, scroll the table box so the row shows.
    self.mark = function (id, reveal) {
      self.selected = id;
      var at = -1;
      order.forEach(function (x, k) {
        if (id !== null && idOf(x.r) === id) at = k;
        if (x.tr) x.tr.classList.toggle("on", id !== null && idOf(x.r) === id);
      });
      if (at < 0 || !reveal) return;
      var y = self.virtual ? at * self.rowH : order[at].tr.offsetTop;
      if (y < box.scrollTop + 30 || y > box.scrollTop + box.clientHeight - 30) box.scrollTop = Math.max(0, y - box.clientHeight / 2);
      if (self.virtual) render();
    };
    return self;
  }

  function tok(k) { return function (s) { return s.tokens[k]; }; }
  function shorts(ids) { return ids.map(function (i) { return byId[i] ? byId[i].short : i; }).join(", "); }
  var SESSION_COLS = [
    { key: "id", label: "session", get: function (s) { return s.short; }, title: function (s) { return s.id; } },
    { key: "harness", label: "harness", chip: true, get: function (s) { return s.harness; } },
    { key: "model", label: "model", get: function (s) { return s.model; } },
    { key: "role", label: "role", get: function (s) { return s.role; } },
    { key: "start", label: "start (UTC)", num: true, get: function (s) { return s.start; }, fmt: fmtTime },
    { key: "dur", label: "duration", num: true, get: function (s) { return s.dur_s; }, fmt: fmtDur },
    { key: "input", label: "input", num: true, get: tok("input"), fmt: fmtInt },
    { key: "cache_read", label: "cache read", num: true, get: tok("cache_read"), fmt: fmtInt },
    { key: "cache_write", label: "cache write", num: true, get: tok("cache_creation"), fmt: fmtInt },
    { key: "output", label: "output", num: true, get: tok("output"), fmt: fmtInt },
    { key: "total", label: "total tokens", num: true, get: tok("total"), fmt: fmtInt },
    { key: "usd", label: "USD", num: true, get: function (s) { return s.usd; }, fmt: fmtUsd }
  ];
  var ARTIFACT_COLS = [
    { key: "path", label: "path", get: function (a) { return a.path; }, title: function (a) { return a.path; } },
    { key: "versions", label: "versions", num: true, left: true, get: function (a) { return a.versions.length; },
      fmt: function (v, a) { return a.versions.map(function (x) { return "v" + x.version; }).join(", "); } },
    { key: "writers", label: "writers", num: true, left: true, get: function (a) { return a.writers.length; },
      fmt: function (v, a) { return shorts(a.writers); } },
    { key: "readers", label: "readers", num: true, left: true, get: function (a) { return a.readers.length; },
      fmt: function (v, a) { return a.readers.length ? shorts(a.readers) : "none"; } }
  ];

  // -- selection and details -------------------------------------------------------------------
  function dl(parent, pairs) {
    var list = h("dl", null, null, parent);
    pairs.forEach(function (p) {
      if (p === null) return;
      h("dt", p[0], null, list);
      var dd = h("dd", null, null, list), v = p[1];
      if (v instanceof Node) dd.appendChild(v);
      else if (v == null || v === "") { dd.textContent = "n/a"; dd.className = "na"; }
      else dd.textContent = String(v);
    });
    return list;
  }
  function code(text) { return h("code", text); }
  function sessionLink(id) { return byId[id] ? link("session", id, id) : code(id); }
  function edgeList(parent, edges, from) {
    var ul = h("ul", null, null, parent);
    edges.forEach(function (e) {
      var other = e.src === from ? "\u2192 " + (byId[e.dst] ? byId[e.dst].short : e.dst)
        : "\u2190 " + (byId[e.src] ? byId[e.src].short : e.src);
      h("li", null, null, ul).appendChild(link("edge", e.id, e.kind + " [" + e.tier + "] " + other +
        (e.path ? " " + e.path : "")));
    });
  }

  function showSession(s) {
    h("h3", s.external ? "Session in another run" : "Session", null, box);
    var t = s.tokens || {};
    dl(box, [
      ["id", code(s.id)], ["harness", s.harness], ["kind", s.kind],
      ["role", s.role ? s.role + (s.role_tier ? " (" + s.role_tier + ")" : "") : null],
      s.phase ? ["phase", s.phase] : null, ["model", s.model], ["entrypoint", s.entrypoint],
      ["parent", s.parent ? sessionLink(s.parent) : null], ["via", s.via], ["depth", s.depth],
      ["run", s.run], ["start", fmtTime(s.start)], ["end", fmtTime(s.end)], ["duration", fmtDur(s.dur_s)]
    ]);
    if (!s.external) {
      h("h3", "Tokens", null, box);
      dl(box, [
        ["input", fmtInt(t.input)], ["cache read", fmtInt(t.cache_read)],
        ["cache write", fmtInt(t.cache_creation) + " (5m " + fmtInt(t.cache_creation_5m) + ", 1h " +
          fmtInt(t.cache_creation_1h) + ")"],
        ["output", fmtInt(t.output) + " (reasoning " + fmtInt(t.reasoning) + ")"], ["total", fmtInt(t.total)],
        ["requests", fmtInt(s.requests) + (s.session_totals ? " (and the harness's session totals)" : "")],
        ["cost", s.usd != null ? fmtUsd(s.usd) : s.unpriced.length ? "n/a: no price for " + s.unpriced.join(", ")
          : "n/a: no token counts"],
        s.reported_usd != null ? ["reported by the harness", fmtUsd(s.reported_usd) + " (not in cost)"] : null
      ]);
    }
    var es = edgesOf[s.id] || [];
    h("h3", "Edges (" + es.length + ")", null, box);
    edgeList(box, es, s.id);
  }

  function showEdge(e) {
    h("h3", "Edge: " + e.kind + " [" + e.tier + "]", null, box);
    dl(box, [
      ["id", code(e.id)], ["kind", e.kind], ["tier", e.tier], ["from", sessionLink(e.src)], ["to", sessionLink(e.dst)],
      ["evidence", e.evidence], ["pass", e.pass], ["time", fmtTime(e.ts)], ["lag", fmtDur(e.lag_s)],
      e.path ? ["path", artByPath[e.path] ? link("artifact", e.path, e.path) : code(e.path)] : null,
      e.version != null ? ["version", "v" + e.version] : null,
      e.src_tier ? ["write tier", e.src_tier] : null, e.dst_tier ? ["read tier", e.dst_tier] : null,
      e.src_call ? ["call", code(e.src_call)] : null, e.dst_call ? ["read call", code(e.dst_call)] : null,
      ["run", e.run || "crosses runs"]
    ]);
  }

  function showArtifact(a) {
    h("h3", "Artifact", null, box);
    dl(box, [["path", code(a.path)], ["versions", String(a.versions.length)]]);
    var ul = h("ul", null, null, box);
    a.versions.forEach(function (v) {
      var li = h("li", "v" + v.version + " of " + v.of + " written " + fmtTime(v.ts) + " (" + (v.how || "?") + ", " +
                 (v.tier || "?") + ") by ", null, ul);
      li.appendChild(sessionLink(v.producer));
      if (v.readers.length) {
        li.appendChild(document.createTextNode("; read by "));
        v.readers.forEach(function (r, i) {
          if (i) li.appendChild(document.createTextNode(", "));
          li.appendChild(sessionLink(r));
        });
      }
    });
    var es = E.filter(function (e) { return e.kind === "artifact" && e.path === a.path; });
    h("h3", "Edges (" + es.length + ")", null, box);
    edgeList(box, es, null);
  }

  function select(type, id, opts) {
    opts = opts || {};
    marked.forEach(function (n) { n.classList.remove("on"); });
    marked = [];
    box.textContent = "";
    var target = type === "session" ? byId[id] : type === "edge" ? edgeById[id] : type === "artifact" ? artByPath[id] : null;
    if (!target) {
      sel = null;
      svg.classList.remove("focus");
      if (tables.sessions) { tables.sessions.mark(null); tables.artifacts.mark(null); }
      h("p", "Select a session, an edge or an artifact.", "hint", box);
      if (!opts.fromHash) writeHash();
      return;
    }
    sel = { type: type, id: id };
    var sids = {}, eids = [];
    if (type === "session") { sids[id] = 1; eids = edgesOf[id] || []; }
    else if (type === "edge") { eids = [target]; }
    else {
      target.writers.concat(target.readers).forEach(function (s) { sids[s] = 1; });
      eids = E.filter(function (e) { return e.kind === "artifact" && e.path === id; });
    }
    eids.forEach(function (e) { sids[e.src] = 1; sids[e.dst] = 1; mark(edgeEls[e.id]); });
    Object.keys(sids).forEach(function (s) { (laneEls[s] || []).forEach(mark); });
    if (tables.sessions) tables.sessions.mark(type === "session" ? id : null, !opts.fromTable);
    if (tables.artifacts) tables.artifacts.mark(type === "artifact" ? id : null, !opts.fromTable);
    svg.classList.add("focus");
    box.setAttribute("data-selected", type);
    if (type === "session") showSession(target);
    else if (type === "edge") showEdge(target);
    else showArtifact(target);
    if (opts.scroll) {  // bring the lane into the timeline's own view; the page stays put
      var lane = type === "session" ? target.lane : type === "edge" ? Math.min(byId[target.src].lane,
        byId[target.dst].lane) : null;
      var y = lane === null ? null : lane * LANE;
      if (y !== null && (y < scroller.scrollTop || y > scroller.scrollTop + scroller.clientHeight - LANE)) {
        scroller.scrollTop = Math.max(0, y - scroller.clientHeight / 3);
      }
    }
    if (!opts.fromHash) writeHash();
  }
  function mark(n) { if (n) { n.classList.add("on"); marked.push(n); } }

  // -- the address keeps the view: #sort=usd:desc&select=session:<id> ---------------------------
  var reading = false;
  function writeHash() {
    if (reading || !tables.sessions) return;
    var p = new URLSearchParams();
    [["sort", tables.sessions], ["asort", tables.artifacts]].forEach(function (x) {
      if (x[1].key) p.set(x[0], x[1].key + ":" + (x[1].dir > 0 ? "asc" : "desc"));
    });
    if (sel) p.set("select", sel.type + ":" + sel.id);
    history.replaceState(null, "", "#" + p.toString());
  }
  function readHash() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    reading = true;
    [["sort", tables.sessions], ["asort", tables.artifacts]].forEach(function (x) {
      var v = p.get(x[0]);
      if (v) { var kd = v.split(":"); x[1].sort(kd[0], kd[1] === "desc" ? -1 : 1); }
    });
    var s = p.get("select"), at = s ? s.indexOf(":") : -1;
    if (at > 0) select(s.slice(0, at), s.slice(at + 1), { fromHash: true, scroll: true });
    reading = false;
  }

  // -- go --------------------------------------------------------------------------------------
  var r = D.run, meta = document.getElementById("run-meta");
  meta.textContent = "\u00b7 " + fmtTime(r.start) + " \u2192 " + fmtTime(r.end) + " \u00b7 " +
    fmtDur(r.start != null && r.end != null ? (r.end - r.start) / 1000 : null) + " \u00b7 " + r.n_sessions +
    (r.n_sessions === 1 ? " session \u00b7 " : " sessions \u00b7 ") + E.length + " edges \u00b7 " + fmtInt(r.tokens) + " tokens \u00b7 " + fmtUsd(r.usd);
  draw();
  var T_DRAWN = performance.now();
  tables.sessions = Table(document.getElementById("sessions"), SESSION_COLS,
                          S.filter(function (s) { return !s.external; }), "data-session",
                          function (s) { return s.id; }, "session");
  tables.artifacts = Table(document.getElementById("artifacts"), ARTIFACT_COLS, A, "data-artifact",
                           function (a) { return a.path; }, "artifact");
  readHash();
  window.addEventListener("hashchange", readHash);
  var resizeTimer = 0;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { draw(); if (sel) select(sel.type, sel.id, { fromHash: true }); }, 150);
  });
  document.body.getBoundingClientRect();  // force layout so the mark below includes it
  var T_READY = performance.now(), root = document.documentElement;
  root.setAttribute("data-sg-script-start", T0.toFixed(1));
  root.setAttribute("data-sg-parsed", T_PARSED.toFixed(1));
  root.setAttribute("data-sg-drawn", T_DRAWN.toFixed(1));
  root.setAttribute("data-sg-ready", T_READY.toFixed(1));
  // what the browser fetched for this page: nothing, as everything is inline
  root.setAttribute("data-sg-resources", String(performance.getEntriesByType("resource").length));
  requestAnimationFrame(function () {
    requestAnimationFrame(function () { root.setAttribute("data-sg-frame", performance.now().toFixed(1)); });
  });
})();
