/* streamt docs: search across names, descriptions and columns. The index (one row per node,
   column and schedule, with lower-cased keys) is built once when the page opens; a query is one
   pass over plain strings, ranked: exact name, name prefix, name substring, then description/tags. */
(function (SD) {
  "use strict";
  var LIMIT = 40;
  var KIND_RANK = { model: 0, source: 1, exposure: 2, column: 3, test: 4, schedule: 5 };

  function words(list) { return list ? " " + list.join(" ") : ""; }

  function Index(data) {
    var rows = [];  // [kind, target, column, label, nameKey, textKey]
    data.nodes.forEach(function (n) {
      rows.push([n.type, n.id, null, n.name, n.name.toLowerCase(), ((n.description || "") + words(n.tags) + " "
                 + (n.owner || "") + " " + (n.materialized || "") + " " + (n.detail || "")).toLowerCase()]);
    });
    [["model", data.raw.models], ["source", data.raw.sources]].forEach(function (kv) {
      Object.keys(kv[1]).forEach(function (rel) {
        var target = kv[0] + "." + rel, cols = kv[1][rel].columns;
        for (var i = 0; i < cols.length; i++) {
          var c = cols[i], label = rel + "." + c.name;
          rows.push(["column", target, c.name, label, c.name.toLowerCase(), (label + " " + (c.description || "")
                     + words(c.classification) + words(c.tags) + " " + (c.type || "")).toLowerCase()]);
        }
      });
    });
    Object.keys(data.raw.schedules).forEach(function (name) {
      var s = data.raw.schedules[name];
      rows.push(["schedule", "schedule." + name, null, name, name.toLowerCase(),
                 (s.description + " " + s.cron + " " + s.select).toLowerCase()]);
    });
    this.rows = rows;
  }

  Index.prototype.query = function (q) {
    q = q.trim().toLowerCase();
    if (!q) return [];
    var dot = q.indexOf("."), relPart = dot > 0 ? q.slice(0, dot) : null, colPart = dot > 0 ? q.slice(dot + 1) : null;
    var scored = [];
    for (var i = 0; i < this.rows.length; i++) {
      var r = this.rows[i], name = r[4], score = -1;
      if (name === q) score = 0;
      else if (name.lastIndexOf(q, 0) === 0) score = 1;
      else if (name.indexOf(q) >= 0) score = 2;
      else if (relPart !== null && r[0] === "column" && r[3].toLowerCase() === q) score = 0;
      else if (relPart !== null && r[0] === "column" && name.lastIndexOf(colPart, 0) === 0
               && r[1].slice(r[1].indexOf(".") + 1).toLowerCase().indexOf(relPart) >= 0) score = 1;
      else if (r[5].indexOf(q) >= 0) score = 3;
      if (score >= 0) scored.push([score, KIND_RANK[r[0]], r[3], r]);
    }
    scored.sort(function (a, b) { return (a[0] - b[0]) || (a[1] - b[1]) || SD.cmp(a[2], b[2]); });
    return scored.map(function (s) { return { kind: s[3][0], target: s[3][1], column: s[3][2], label: s[3][3],
                                              where: s[0] === 3 ? "description" : "name" }; });
  };

  /* Wires the header's search box: results as you type, Enter opens the first, "/" focuses. */
  /* index: a function returning the Index (built on first use if the page has not built it yet). */
  function SearchBox(index, input, list) {
    var self = this, timer = null;
    this.index = index; this.input = input; this.list = list;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { self.show(input.value); }, 60);
    });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter") {
        clearTimeout(timer);
        self.show(input.value);
        var first = list.querySelector("a");
        if (first) { first.click(); }
      } else if (e.key === "Escape") { self.close(); input.blur(); }
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "/" && document.activeElement !== input) { e.preventDefault(); input.focus(); input.select(); }
    });
    document.addEventListener("click", function (e) { if (!list.contains(e.target) && e.target !== input) self.close(); });
  }

  SearchBox.prototype.close = function () { this.list.hidden = true; };

  SearchBox.prototype.show = function (q) {
    var self = this, h = SD.h, hits = this.index().query(q);
    this.list.textContent = "";
    if (!q.trim()) { this.close(); return; }
    if (!hits.length) {
      this.list.appendChild(h("li", { class: "none" }, "Nothing matches “" + q.trim() + "”"));
    }
    hits.slice(0, LIMIT).forEach(function (hit) {
      var a = SD.link(hit.target, hit.label, hit.column);
      a.addEventListener("click", function () { self.close(); });
      self.list.appendChild(h("li", { "data-kind": hit.kind }, SD.badge(hit.kind, "k-" + hit.kind), a,
                              hit.where === "description" ? h("span", { class: "muted" }, " in description") : null));
    });
    if (hits.length > LIMIT) {
      this.list.appendChild(h("li", { class: "none" }, (hits.length - LIMIT) + " more: type more to narrow"));
    }
    this.list.hidden = false;
  };

  SD.SearchIndex = Index;
  SD.SearchBox = SearchBox;
})(window.StreamtDocs = window.StreamtDocs || {});
