/* streamt docs: the lineage graph, drawn with Cytoscape.js and laid out left to right by dagre.
   Small projects are drawn whole; large ones by neighbourhood (the selected node ± N hops, with
   controls to widen it), so a 10,000-model project draws in well under a second. Tests are not
   drawn: they are listed on their model's page. */
(function (SD) {
  "use strict";
  var FULL_LIMIT = 250;  // projects with up to this many sources, models and exposures are drawn whole
  var MAX_DRAWN = 300;   // a neighbourhood is cut (nearest first) beyond this many nodes
  var READABLE = 0.6;    // zoom below which labels cannot be read: zoom in on the focus instead

  var STYLE = [
    { selector: "node", style: {
      "shape": "round-rectangle", "width": "data(w)", "height": 34, "label": "data(label)",
      "text-wrap": "wrap", "text-valign": "center", "text-halign": "center", "font-size": 11,
      "font-family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "color": "#1f2933",
      "background-color": "#eef2ff", "border-width": 1.5, "border-color": "#6366f1" } },
    { selector: "node[type = 'source']", style: { "background-color": "#e7f6ec", "border-color": "#2f855a" } },
    { selector: "node[type = 'exposure']", style: { "shape": "cut-rectangle", "background-color": "#fff4e5",
                                                    "border-color": "#dd6b20" } },
    { selector: "node[mat = 'stream']", style: { "border-style": "dashed" } },
    { selector: "node[mat = 'view']", style: { "background-color": "#f5f3ff" } },
    { selector: "node[mat = 'sink']", style: { "shape": "tag", "background-color": "#fdf2f8", "border-color": "#b83280" } },
    { selector: "node[status = 'FAIL']", style: { "border-color": "#e53e3e", "border-width": 3 } },
    { selector: "edge", style: {
      "width": 1.4, "curve-style": "bezier", "line-color": "#a0aec0", "target-arrow-color": "#a0aec0",
      "target-arrow-shape": "triangle", "arrow-scale": 0.9 } },
    { selector: ".faded", style: { "opacity": 0.28 } },
    { selector: "node.up", style: { "border-color": "#2b6cb0", "border-width": 2.5 } },
    { selector: "node.down", style: { "border-color": "#c05621", "border-width": 2.5 } },
    { selector: "edge.up", style: { "line-color": "#2b6cb0", "target-arrow-color": "#2b6cb0", "width": 2.2 } },
    { selector: "edge.down", style: { "line-color": "#c05621", "target-arrow-color": "#c05621", "width": 2.2 } },
    { selector: "node.lineage", style: { "underlay-color": "#ecc94b", "underlay-padding": 5, "underlay-opacity": 0.5,
                                         "underlay-shape": "round-rectangle" } },
    { selector: "node.focus", style: { "border-color": "#1a202c", "border-width": 3.5, "font-weight": "bold" } },
  ];

  function GraphView(data, container, toolbar, note, go) {
    var self = this;
    this.data = data; this.container = container; this.toolbar = toolbar; this.note = note;
    this.drawable = data.nodes.filter(function (n) { return n.type !== "test"; });
    this.whole = this.drawable.length <= FULL_LIMIT;
    this.hops = 2;
    this.focus = null; this.lineage = null; this.drawnKey = null;
    this.cy = window.cytoscape({ container: container, elements: [], style: STYLE, minZoom: 0.05, maxZoom: 3,
                                 boxSelectionEnabled: false, autoungrabify: true });
    this.cy.on("tap", "node", function (e) { go(e.target.id()); });
    this.buildToolbar();
  }

  GraphView.prototype.buildToolbar = function () {
    var self = this, h = SD.h;
    this.hopsLabel = h("span", { class: "hops" });
    var items = [h("button", { type: "button", onclick: function () { self.cy.fit(undefined, 24); } }, "Fit")];
    if (!this.whole) {
      items.push(h("span", { class: "sep" }), "Neighbourhood:",
                 h("button", { type: "button", title: "fewer hops", onclick: function () { self.setHops(self.hops - 1); } }, "−"),
                 this.hopsLabel,
                 h("button", { type: "button", title: "more hops", onclick: function () { self.setHops(self.hops + 1); } }, "+"),
                 h("button", { type: "button", title: "every upstream and downstream node",
                               onclick: function () { self.setHops(Infinity); } }, "all"));
    }
    items.push(h("span", { class: "legend" }, h("i", { class: "lg up" }), "upstream", h("i", { class: "lg down" }), "downstream",
                 h("i", { class: "lg lin" }), "column lineage"));
    items.forEach(function (i) { self.toolbar.appendChild(typeof i === "string" ? document.createTextNode(i) : i); });
    this.updateHopsLabel();
  };

  GraphView.prototype.updateHopsLabel = function () {
    this.hopsLabel.textContent = this.hops === Infinity ? "± all" : "± " + this.hops + " hops";
  };

  GraphView.prototype.setHops = function (n) {
    this.hops = Math.max(1, n);
    this.updateHopsLabel();
    this.show(this.focus, this.lineage);
  };

  /* Node indexes to draw: everything, or the focus ± hops plus the relations of a column's lineage. */
  GraphView.prototype.visible = function (focusIdx, lineageIds) {
    var data = this.data, drawable = function (i) { return data.nodes[i].type !== "test"; };
    if (this.whole) return { ids: this.drawable.map(function (n) { return n.index; }), total: this.drawable.length };
    if (focusIdx === null) focusIdx = this.drawable[0].index;
    var depth = this.hops === Infinity ? null : this.hops;
    var ups = data.closure([focusIdx], "up", depth), downs = data.closure([focusIdx], "down", depth);
    var ranked = [[focusIdx, 0]];
    ups.forEach(function (d, i) { ranked.push([i, d]); });
    downs.forEach(function (d, i) { ranked.push([i, d]); });
    (lineageIds || []).forEach(function (id) { var n = data.node(id); if (n) ranked.push([n.index, 0.5]); });
    ranked = ranked.filter(function (r) { return drawable(r[0]); });
    ranked.sort(function (a, b) { return (a[1] - b[1]) || (a[0] - b[0]); });
    var seen = new Set(), ids = [];
    ranked.forEach(function (r) { if (!seen.has(r[0])) { seen.add(r[0]); ids.push(r[0]); } });
    return { ids: ids.slice(0, MAX_DRAWN), total: ids.length };
  };

  GraphView.prototype.elements = function (ids) {
    var data = this.data, keep = new Set(ids), els = [];
    ids.slice().sort(function (a, b) { return a - b; }).forEach(function (i) {
      var n = data.nodes[i], sub = n.type === "model" ? n.materialized : n.type === "exposure" ? n.detail : n.type;
      var run = n.type === "model" ? data.lastRun(n.name) : null;
      els.push({ group: "nodes", data: { id: n.id, label: n.name + "\n" + (sub || ""), type: n.type, mat: n.materialized || "",
                                         status: run ? run.status : "", w: Math.max(n.name.length, (sub || "").length) * 6.6 + 26 } });
    });
    ids.forEach(function (i) {
      data.down[i].forEach(function (d) {
        if (keep.has(d)) els.push({ group: "edges", data: { id: data.nodes[i].id + "->" + data.nodes[d].id,
                                                             source: data.nodes[i].id, target: data.nodes[d].id } });
      });
    });
    return els;
  };

  /* Draw (or re-highlight) the graph for a selected node id (or null) and a column's lineage ids. */
  GraphView.prototype.show = function (focusId, lineageIds) {
    var data = this.data, focus = focusId ? data.node(focusId) : null;
    if (focus && focus.type === "test") {  // a test is drawn as its target
      var t = data.raw.tests[focus.name];
      focus = t ? data.node(t.target) : null;
    }
    this.focus = focus ? focus.id : null;
    this.lineage = lineageIds || null;
    var vis = this.visible(focus ? focus.index : null, lineageIds);
    var key = vis.ids.slice().sort(function (a, b) { return a - b; }).join(",");
    var relaid = key !== this.drawnKey;
    if (relaid) {
      this.cy.elements().remove();
      this.cy.add(this.elements(vis.ids));
      this.cy.layout({ name: "dagre", rankDir: "LR", nodeSep: 14, rankSep: 70, edgeSep: 8, fit: true, padding: 24,
                       animate: false }).run();
      this.drawnKey = key;
    }
    this.highlight(focus, lineageIds);
    var drawnFocus = focus ? this.cy.getElementById(focus.id) : this.cy.nodes().first();
    if (drawnFocus.length && relaid && this.cy.zoom() < READABLE) {
      this.cy.zoom(READABLE);
      this.cy.center(drawnFocus);
    } else if (drawnFocus.length && !relaid) {
      var ext = this.cy.extent(), bb = drawnFocus.boundingBox();
      if (bb.x1 < ext.x1 || bb.x2 > ext.x2 || bb.y1 < ext.y1 || bb.y2 > ext.y2) this.cy.center(drawnFocus);
    }
    this.note.textContent = this.whole ? "" : "Large project (" + SD.fmtInt(this.drawable.length) + " nodes): showing "
      + SD.fmtInt(vis.ids.length) + (vis.total > vis.ids.length ? " of " + SD.fmtInt(vis.total) : "") + " around "
      + (focus ? focus.name : this.data.nodes[vis.ids[0]].name) + ". Pick a node or search to move; widen with +.";
    this.container.dataset.drawn = String(this.cy.nodes().length);
  };

  GraphView.prototype.highlight = function (focus, lineageIds) {
    var cy = this.cy, data = this.data;
    cy.elements().removeClass("up down faded focus lineage");
    if (!focus) return;
    var ups = data.closure([focus.index], "up"), downs = data.closure([focus.index], "down");
    var lin = new Set(lineageIds || []);
    cy.batch(function () {
      cy.nodes().forEach(function (n) {
        var idx = data.node(n.id()).index;
        if (n.id() === focus.id) n.addClass("focus");
        else if (ups.has(idx)) n.addClass("up");
        else if (downs.has(idx)) n.addClass("down");
        else if (!lin.has(n.id())) n.addClass("faded");
        if (lin.has(n.id())) n.addClass("lineage");
      });
      cy.edges().forEach(function (e) {
        var s = data.node(e.source().id()).index, t = data.node(e.target().id()).index;
        var fi = focus.index;
        if ((ups.has(s) || s === fi) && (ups.has(t) || t === fi)) e.addClass("up");
        else if ((downs.has(s) || s === fi) && (downs.has(t) || t === fi)) e.addClass("down");
        else e.addClass("faded");
      });
    });
  };

  SD.GraphView = GraphView;
})(window.StreamtDocs = window.StreamtDocs || {});
