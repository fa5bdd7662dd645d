/* streamt docs: boot. Reads the inlined data, lists every node in the sidebar, draws the graph,
   builds the search index and follows the URL hash (#model.x, #model.x/column, #schedule.s, #pii).
   When the page is usable, <body data-ready="1"> and StreamtDocs.readyMs say so (tests, benchmark). */
(function (SD) {
  "use strict";
  var h = SD.h;
  var GROUPS = [["source", "Sources"], ["model", "Models"], ["exposure", "Exposures"], ["test", "Tests"]];
  var OPEN_LIMIT = 200;  // sidebar groups longer than this start folded and are filled after the page is ready
  var SLICE = 1500;      // list items added per task while filling, so typing and clicking stay responsive

  function item(data, n) {
    var run = n.type === "model" ? data.lastRun(n.name) : null;
    return h("li", { "data-id": n.id }, SD.link(n.id, n.name),
             run ? h("i", { class: "dot st-" + run.status.toLowerCase(), title: "last run " + run.status }) : null,
             n.type === "model" ? h("span", { class: "muted" }, " " + n.materialized) : null);
  }

  /* A list filled up to `upTo` items (all by default); returns true once complete. */
  function filler(data, nodes, ul) {
    var next = 0;
    return function (upTo) {
      var end = Math.min(nodes.length, upTo === undefined ? nodes.length : next + upTo);
      var frag = document.createDocumentFragment();
      for (; next < end; next++) frag.appendChild(item(data, nodes[next]));
      ul.appendChild(frag);
      return next >= nodes.length;
    };
  }

  /* Every node, grouped by kind. Returns {all(), later()}: fill the folded groups now, or a
     slice per task after the page is ready (sets #sidebar[data-listed] when done). */
  function sidebar(data, el) {
    var frag = document.createDocumentFragment(), pending = [];
    frag.appendChild(h("a", { href: "#", class: "home" }, "Overview"));
    GROUPS.forEach(function (g) {
      var nodes = data.nodes.filter(function (n) { return n.type === g[0]; });
      if (!nodes.length) return;
      var small = nodes.length <= OPEN_LIMIT, ul = h("ul"), fill = filler(data, nodes, ul);
      var group = h("details", { open: small || null, "data-group": g[0] },
                    h("summary", null, g[1], h("span", { class: "count" }, String(nodes.length))), ul);
      if (small) fill();
      else {
        group.addEventListener("toggle", function () { fill(); });
        pending.push(fill);
      }
      frag.appendChild(group);
    });
    var schedules = Object.keys(data.raw.schedules);
    if (schedules.length) {
      frag.appendChild(h("details", { open: true, "data-group": "schedule" },
        h("summary", null, "Schedules", h("span", { class: "count" }, String(schedules.length))),
        h("ul", null, schedules.map(function (s) {
          return h("li", { "data-id": "schedule." + s }, SD.link("schedule." + s, s),
                   h("span", { class: "muted" }, " " + data.raw.schedules[s].cron));
        }))));
    }
    el.appendChild(frag);
    function finished() { el.dataset.listed = "1"; }
    if (!pending.length) finished();
    return {
      all: function () { pending.forEach(function (f) { f(); }); pending = []; finished(); },
      later: function () {
        (function step() {
          while (pending.length && pending[0](SLICE)) pending.shift();
          if (pending.length) setTimeout(step, 0); else finished();
        })();
      },
    };
  }

  function App(raw) {
    var self = this;
    this.data = new SD.Data(raw);
    this.directOnly = false;
    this.details = document.getElementById("details");
    this.sidebar = sidebar(this.data, document.getElementById("sidebar"));
    this.graph = new SD.GraphView(this.data, document.getElementById("graph"), document.getElementById("graph-toolbar"),
                                  document.getElementById("graph-note"), function (id) { self.go(id); });
    window.addEventListener("hashchange", function () { self.route(); });
  }

  App.prototype.go = function (target, column) { location.hash = SD.href(target, column); };

  App.prototype.markSidebar = function (target) {
    var prev = document.querySelector("#sidebar li.on");
    if (prev) prev.classList.remove("on");
    var sel = '#sidebar li[data-id="' + CSS.escape(target) + '"]';
    var li = target ? document.querySelector(sel) : null;
    if (target && !li && this.data.node(target)) {
      this.sidebar.all();
      li = document.querySelector(sel);
    }
    if (li) {
      li.classList.add("on");
      var group = li.closest("details");
      if (group && !group.open) group.open = true;
      li.scrollIntoView({ block: "nearest" });
    }
  };

  App.prototype.route = function () {
    var self = this, r = SD.parseRoute(location.hash), data = this.data, content, lineage = null, focus = null;
    if (r.target === "pii") content = SD.pages.pii(data);
    else if (r.target === "diagnostics") content = SD.pages.diagnostics(data);
    else if (r.target.indexOf("schedule.") === 0 && data.raw.schedules[r.target.slice(9)]) {
      content = SD.pages.schedule(data, r.target.slice(9));
    } else if (data.node(r.target)) {
      var n = data.node(r.target), view = null;
      focus = n.id;
      if (r.column !== null && (n.type === "model" || n.type === "source")) {
        view = SD.columnView(data, n, r.column, this.directOnly, function (on) { self.directOnly = on; self.route(); });
        lineage = view.relations;
      }
      content = SD.pages.node(data, n, view ? view.el : null);
    } else {
      content = SD.pages.overview(data);
      if (r.target) content.unshift(h("p", { class: "warn" }, "Nothing named “" + r.target + "” in this project."));
      if (!this.graph.whole) focus = this.defaultFocus();
    }
    this.details.textContent = "";
    content.forEach(function (c) { if (c) self.details.appendChild(c); });
    this.details.scrollTop = 0;
    this.graph.show(focus, lineage);
    this.markSidebar(r.target);
    if (r.column !== null) {
      var row = this.details.querySelector('tr[data-column="' + CSS.escape(r.column) + '"]');
      if (row) row.classList.add("on");
    }
  };

  /* A large project opens on its busiest source: the feed most of the project is built on. */
  App.prototype.defaultFocus = function () {
    var data = this.data, best = null, most = -1;
    data.nodes.forEach(function (n) {
      if (n.type === "source" && data.down[n.index].length > most) { best = n; most = data.down[n.index].length; }
    });
    return best ? best.id : null;
  };

  function boot() {
    var t = SD.timings = { start: performance.now() };
    var raw = JSON.parse(document.getElementById("streamt-data").textContent);
    t.parsed = performance.now();
    var app = new App(raw);
    SD.app = app;
    t.listed = performance.now();
    app.route();
    t.drawn = performance.now();
    var index = null;
    function search() { if (!index) { index = SD.search = new SD.SearchIndex(app.data); t.indexed = performance.now(); } return index; }
    new SD.SearchBox(search, document.getElementById("search"), document.getElementById("search-results"));
    SD.readyMs = performance.now();
    document.body.dataset.ready = "1";
    // after the first paint: the search index, then the folded sidebar groups
    setTimeout(function () { search(); setTimeout(app.sidebar.later, 0); }, 0);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})(window.StreamtDocs = window.StreamtDocs || {});
