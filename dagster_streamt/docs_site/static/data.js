/* streamt docs: the project data and the questions asked of it. Closures and the impact summary
   answer like dagster_streamt/graph (graph.py, impact.py), column lineage like
   ProjectColumnLineage.upstream/downstream (lineage/column_types.py); the tests check both agree. */
(function (SD) {
  "use strict";

  function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function Data(raw) {
    var self = this;
    this.raw = raw;
    this.nodes = raw.nodes;
    this.byId = new Map();
    this.down = raw.nodes.map(function () { return []; });
    this.up = raw.nodes.map(function () { return []; });
    raw.nodes.forEach(function (n, i) { n.index = i; self.byId.set(n.id, n); });
    raw.edges.forEach(function (e) { self.down[e[0]].push(e[1]); self.up[e[1]].push(e[0]); });
    this.direct = new Set(raw.lineage_types.DIRECT);
    this.testsOf = new Map();  // "model.x" -> [test names]
    Object.keys(raw.tests).forEach(function (t) {
      var target = raw.tests[t].target;
      if (!self.testsOf.has(target)) self.testsOf.set(target, []);
      self.testsOf.get(target).push(t);
    });
    this.columns = new Map();  // relation name -> Map(column -> entry)
    [["model", raw.models], ["source", raw.sources]].forEach(function (kv) {
      Object.keys(kv[1]).forEach(function (rel) {
        var m = new Map();
        kv[1][rel].columns.forEach(function (c) { m.set(c.name, c); });
        self.columns.set(rel, m);
      });
    });
    this._reverse = null;
    this._sql = null;
  }

  Data.prototype.node = function (id) { return this.byId.get(id); };

  /* The id of a relation named in column lineage (models and sources share one namespace). */
  Data.prototype.relationId = function (rel) {
    return this.raw.models[rel] ? "model." + rel : "source." + rel;
  };

  /* Breadth-first closure from node indexes; Map index -> hops (starts excluded unless reached). */
  Data.prototype.closure = function (starts, dir, depth) {
    var adj = dir === "up" ? this.up : this.down;
    var seen = new Map(), queue = starts.map(function (s) { return [s, 0]; });
    for (var q = 0; q < queue.length; q++) {
      var cur = queue[q][0], d = queue[q][1];
      if (depth !== undefined && depth !== null && d >= depth) continue;
      var next = adj[cur];
      for (var i = 0; i < next.length; i++) {
        if (!seen.has(next[i])) { seen.set(next[i], d + 1); queue.push([next[i], d + 1]); }
      }
    }
    starts.forEach(function (s) { seen.delete(s); });
    return seen;
  };

  /* What changes to a node affect, as `streamt lineage --downstream` says it. */
  Data.prototype.impact = function (id) {
    var self = this, start = this.byId.get(id).index;
    var down = Array.from(this.closure([start], "down").keys()).sort(function (a, b) { return a - b; })
      .map(function (i) { return self.nodes[i]; });
    var owners = new Set(), tags = new Set();
    down.forEach(function (n) {
      if (n.type === "test") return;
      if (n.owner) owners.add(n.owner);
      (n.tags || []).forEach(function (t) { tags.add(t); });
    });
    function ids(pred) { return down.filter(pred).map(function (n) { return n.id; }); }
    return {
      node: id,
      models: ids(function (n) { return n.type === "model" && n.materialized !== "sink"; }),
      sinks: ids(function (n) { return n.type === "model" && n.materialized === "sink"; }),
      exposures: ids(function (n) { return n.type === "exposure"; }),
      tests: ids(function (n) { return n.type === "test"; }),
      owners: Array.from(owners).sort(cmp),
      tags: Array.from(tags).sort(cmp),
    };
  };

  Data.prototype.impactSentence = function (id) {
    var imp = this.impact(id), name = this.byId.get(id).name, parts = [];
    [["model", imp.models], ["sink", imp.sinks], ["exposure", imp.exposures]].forEach(function (p) {
      if (!p[1].length) return;
      var names = p[1].map(function (i) { return i.slice(i.indexOf(".") + 1); }).join(", ");
      parts.push(p[1].length + " " + p[0] + (p[1].length !== 1 ? "s" : "") + ": " + names);
    });
    if (!parts.length) return "Changes to " + name + " affect nothing downstream.";
    var text = "Changes to " + name + " will affect: " + parts.join("; ");
    if (imp.owners.length) text += "\nOwners to notify: " + imp.owners.join(", ");
    return text;
  };

  /* ---- column lineage ------------------------------------------------------------------- */

  Data.prototype.column = function (rel, col) {
    var cols = this.columns.get(rel);
    return cols ? cols.get(col) || null : null;
  };

  Data.prototype.edgeType = function (subtype) { return this.direct.has(subtype) ? "DIRECT" : "INDIRECT"; };

  /* One-hop inputs of a model column: [[relation, column, type, subtype]] (sources have none). */
  Data.prototype._inputs = function (rel, col) {
    var self = this, entry = this.raw.models[rel] ? this.column(rel, col) : null;
    if (!entry || !entry.edges) return [];
    return entry.edges.map(function (e) { return [e[0], e[1], self.edgeType(e[2]), e[2]]; });
  };

  Data.prototype._reverseIndex = function () {
    if (this._reverse) return this._reverse;
    var self = this, rev = new Map();
    Object.keys(this.raw.models).sort(cmp).forEach(function (rel) {
      self.raw.models[rel].columns.forEach(function (c) {
        (c.edges || []).forEach(function (e) {
          var key = e[0] + "\u0000" + e[1];
          if (!rev.has(key)) rev.set(key, []);
          rev.get(key).push([rel, c.name, self.edgeType(e[2]), e[2]]);
        });
      });
    });
    this._reverse = rev;
    return rev;
  };

  function bfs(rel, col, step, directOnly) {
    var startKey = rel + "\u0000" + col, seen = new Set([startKey]), hits = [];
    var queue = [[rel, col, []]];
    for (var q = 0; q < queue.length; q++) {
      var cur = queue[q];
      var next = step(cur[0], cur[1]).filter(function (n) { return !directOnly || n.type === "DIRECT"; });
      next.sort(function (a, b) {
        return cmp(a.rel, b.rel) || cmp(a.col, b.col) || cmp(a.type, b.type) || cmp(a.subtype, b.subtype);
      });
      for (var i = 0; i < next.length; i++) {
        var n = next[i], key = n.rel + "\u0000" + n.col;
        if (seen.has(key)) continue;
        seen.add(key);
        var path = cur[2].concat([n.step]);
        hits.push({ depth: path.length, rel: n.rel, col: n.col, path: path,
                    type: path.every(function (s) { return s.type === "DIRECT"; }) ? "DIRECT" : "INDIRECT" });
        queue.push([n.rel, n.col, path]);
      }
    }
    hits.sort(function (a, b) { return (a.depth - b.depth) || cmp(a.rel, b.rel) || cmp(a.col, b.col); });
    return hits;
  }

  /* Every column rel.col depends on (nearest first), each with one shortest path. */
  Data.prototype.columnUpstream = function (rel, col, directOnly) {
    var self = this;
    return bfs(rel, col, function (r, c) {
      return self._inputs(r, c).map(function (e) {
        return { rel: e[0], col: e[1], type: e[2], subtype: e[3],
                 step: { down: [r, c], up: [e[0], e[1]], type: e[2], subtype: e[3] } };
      });
    }, directOnly);
  };

  /* Every model column that depends on rel.col (a model or a source column). */
  Data.prototype.columnDownstream = function (rel, col, directOnly) {
    var rev = this._reverseIndex();
    return bfs(rel, col, function (r, c) {
      return (rev.get(r + "\u0000" + c) || []).map(function (t) {
        return { rel: t[0], col: t[1], type: t[2], subtype: t[3],
                 step: { down: [t[0], t[1]], up: [r, c], type: t[2], subtype: t[3] } };
      });
    }, directOnly);
  };

  /* ---- SQL: assets/sql/<n>.js, loaded with a plain <script> (works from file://) when needed -- */
  var sqlChunks = {}, sqlWaiting = {};
  SD.sqlChunk = function (n, models) {  // called by each loaded chunk file
    sqlChunks[n] = models;
    (sqlWaiting[n] || []).forEach(function (cb) { cb(null); });
    delete sqlWaiting[n];
  };

  /* callback([compiled SQL, SQL as written] or null for a model without SQL, error text or null) */
  Data.prototype.sql = function (model, callback) {
    var n = this.raw.sql_chunk[model];
    if (n === undefined) { callback(null, null); return; }
    function done(err) { callback(err ? null : sqlChunks[n][model] || null, err); }
    if (sqlChunks[n]) { done(null); return; }
    if (sqlWaiting[n]) { sqlWaiting[n].push(done); return; }
    sqlWaiting[n] = [done];
    var script = document.createElement("script");
    script.src = "assets/sql/" + n + ".js";
    script.onerror = function () {
      (sqlWaiting[n] || []).forEach(function (cb) { cb("cannot load " + script.src + ": is the site folder complete?"); });
      delete sqlWaiting[n];
      script.remove();
    };
    document.head.appendChild(script);
  };

  /* ---- last runs ------------------------------------------------------------------------- */
  Data.prototype.lastRun = function (model) {
    var st = this.raw.state;
    return st && st.runs ? st.runs[model] || null : null;
  };
  Data.prototype.lastCheck = function (test) {
    var st = this.raw.state;
    return st && st.checks ? st.checks[test] || null : null;
  };

  SD.Data = Data;
  SD.cmp = cmp;
})(window.StreamtDocs = window.StreamtDocs || {});
