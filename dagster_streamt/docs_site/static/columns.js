/* streamt docs: columns (table, one column's lineage with OpenLineage edge types, where it reaches
   exposures) and the project's PII flow. */
(function (SD) {
  "use strict";
  var h = SD.h;

  function classes(list) {
    return (list || []).map(function (k) { return SD.badge(k, "cls cls-" + k); });
  }

  function edgeBadge(type, subtype) {
    return SD.badge(type + " " + subtype, type === "DIRECT" ? "edge-direct" : "edge-indirect");
  }

  SD.columnsTable = function (data, n) {
    var rel = n.name, isModel = n.type === "model";
    var cols = (isModel ? data.raw.models : data.raw.sources)[rel].columns;
    if (!cols.length) return SD.section("Columns", h("p", { class: "muted" }, "No columns known: declare them (`columns:`)."));
    var rows = cols.map(function (c) {
      var inputs = (c.edges || []).map(function (e, i) {
        return h("div", null, SD.link(data.relationId(e[0]), e[0] + "." + e[1], e[1]), " ", edgeBadge(data.edgeType(e[2]), e[2]));
      });
      return h("tr", { "data-column": c.name },
        h("td", null, SD.link(n.id, c.name, c.name, "colname")),
        h("td", null, c.type ? h("code", null, c.type) : "", c.type_inferred ? h("span", { class: "muted", title: "carried from its input" }, " (inferred)") : null),
        h("td", null, c.description || "", c.declared_only ? h("span", { class: "muted" }, " (declared, not in the SELECT)") : null),
        h("td", null, classes(c.classification), c.mask ? SD.badge("masked: " + c.mask, "mask") : null),
        isModel ? h("td", { class: "inputs" }, inputs.length ? inputs : h("span", { class: "muted" }, c.edges ? "no column inputs" : "")) : null);
    });
    var head = h("tr", null, ["column", "type", "description", "classification"].concat(isModel ? ["from"] : [])
      .map(function (t) { return h("th", null, t); }));
    var ds = isModel ? data.raw.models[rel].dataset : [];
    return SD.section("Columns", [
      h("table", { class: "columns", id: "columns" }, h("thead", null, head), h("tbody", null, rows)),
      ds.length ? h("p", { class: "muted" }, "Every row also depends on: ", ds.map(function (e, i) {
        return [i ? ", " : "", e[0] + "." + e[1] + " (" + e[2].toLowerCase() + ")"];
      })) : null]);
  };

  /* Hits of a traversal as a nested list: each hit hangs under the column one step closer. */
  function tree(data, hits, upstream, start) {
    var kids = new Map();
    hits.forEach(function (hit) {
      var step = hit.path[hit.path.length - 1], parent = (upstream ? step.down : step.up).join(".");
      if (!kids.has(parent)) kids.set(parent, []);
      kids.get(parent).push({ hit: hit, step: step });
    });
    function walk(key, seen) {
      var list = kids.get(key);
      if (!list) return null;
      return h("ul", { class: "tree" }, list.map(function (k) {
        var ref = k.hit.rel + "." + k.hit.col, c = data.column(k.hit.rel, k.hit.col);
        var isSource = !data.raw.models[k.hit.rel];
        return h("li", { "data-ref": ref },
          SD.link(data.relationId(k.hit.rel), ref, k.hit.col), " ", edgeBadge(k.step.type, k.step.subtype),
          isSource ? SD.badge("source", "k-source") : null, c ? classes(c.classification) : null,
          c && c.mask ? SD.badge("masked: " + c.mask, "mask") : null,
          seen.has(ref) ? null : walk(ref, new Set(seen).add(ref)));
      }));
    }
    return walk(start, new Set([start])) || h("p", { class: "muted" }, "(none)");
  }

  /* Exposures reading a relation that holds the column or one computed from it. */
  function reached(data, rel, col, down) {
    var out = [], refs = [{ rel: rel, col: col, type: "DIRECT", self: true }].concat(down);
    refs.forEach(function (r) {
      var node = data.node(data.relationId(r.rel));
      if (!node) return;
      data.down[node.index].forEach(function (i) {
        var e = data.nodes[i];
        if (e.type === "exposure") out.push({ exposure: e, via: r });
      });
    });
    return out;
  }

  /* The PII flow of one column: classified data that leaves it and reaches exposures unmasked. */
  function piiFlow(data, rel, col, directDown) {
    var mine = new Set([rel + "." + col].concat(directDown.map(function (d) { return d.rel + "." + d.col; })));
    var rows = [];
    Object.keys(data.raw.pii.exposures).forEach(function (e) {
      data.raw.pii.exposures[e].forEach(function (c) {
        if (mine.has(c[0] + "." + c[1])) rows.push([e, c]);
      });
    });
    var masked = directDown.filter(function (d) { var c = data.column(d.rel, d.col); return c && c.mask; });
    if (!rows.length && !masked.length) return null;
    return SD.section("PII flow to exposures", [
      rows.length ? h("ul", { class: "pii" }, rows.map(function (r) {
        return h("li", null, SD.link("exposure." + r[0], r[0], null, "exposure"), " receives ",
                 SD.link(data.relationId(r[1][0]), r[1][0] + "." + r[1][1], r[1][1]), " ", classes(r[1][2]));
      })) : h("p", null, "No classified data from this column reaches an exposure."),
      masked.length ? h("p", { class: "muted" }, "Masked on the way: ", masked.map(function (d, i) {
        return [i ? ", " : "", d.rel + "." + d.col + " (" + data.column(d.rel, d.col).mask + ")"];
      })) : null]);
  }

  /* The column panel: returns {el, relations} (relations: node ids of its lineage, for the graph). */
  SD.columnView = function (data, n, col, directOnly, onToggle) {
    var rel = n.name, c = data.column(rel, col);
    if (!c) {
      return { el: h("section", { class: "block column-view" }, h("h3", null, "Column " + rel + "." + col),
                     h("p", null, rel + " has no column " + col + ".")), relations: [] };
    }
    var up = data.columnUpstream(rel, col, directOnly), down = data.columnDownstream(rel, col, directOnly);
    var directDown = directOnly ? down : data.columnDownstream(rel, col, true);
    var exposures = reached(data, rel, col, down);
    var relations = new Set([n.id]);
    up.concat(down).forEach(function (hit) { relations.add(data.relationId(hit.rel)); });
    exposures.forEach(function (x) { relations.add(x.exposure.id); });
    var toggle = h("label", { class: "toggle" }, h("input", { type: "checkbox", id: "direct-only", checked: directOnly || null,
      onchange: function (e) { onToggle(e.target.checked); } }), " DIRECT edges only");
    var el = h("section", { class: "block column-view", id: "column-view", "data-column": rel + "." + col },
      h("h3", null, "Column ", h("code", null, rel + "." + col), " ", c.type ? SD.badge(c.type, "mat") : null,
        classes(c.classification), c.mask ? SD.badge("masked: " + c.mask, "mask") : null,
        h("a", { href: SD.href(n.id), class: "close", title: "close" }, "×")),
      c.description ? h("p", { class: "description" }, c.description) : null, toggle,
      h("div", { class: "col-lineage" },
        h("div", { id: "column-upstream" }, h("h4", null, "Upstream: where it comes from"), tree(data, up, true, rel + "." + col)),
        h("div", { id: "column-downstream" }, h("h4", null, "Downstream: what is computed from it"), tree(data, down, false, rel + "." + col))),
      SD.section("Exposures reached", exposures.length ? h("ul", { class: "inline", id: "column-exposures" }, exposures.map(function (x) {
        return h("li", null, SD.link(x.exposure.id, x.exposure.name, null, "exposure"),
                 h("span", { class: "muted" }, " (" + x.exposure.detail + ") reads " + x.via.rel + (x.via.self ? "" : "." + x.via.col)));
      })) : h("p", { class: "muted" }, "No exposure reads this column or anything computed from it.")),
      piiFlow(data, rel, col, directDown));
    return { el: el, relations: Array.from(relations) };
  };

  SD.pages.pii = function (data) {
    var pii = data.raw.pii, names = Object.keys(pii.exposures);
    var classified = [];
    data.columns.forEach(function (cols, rel) {
      cols.forEach(function (c) { if (c.classification && c.classification.length) classified.push([rel, c]); });
    });
    return [
      h("h2", { class: "title" }, "PII flow"),
      h("p", { class: "description" }, "A source column's classification follows DIRECT column lineage downstream until a model masks it "
        + "(security.policies mask). " + SD.plural(classified.length, "column") + " carry classified data."),
      SD.section("Sensitive columns handed to exposures unmasked", pii.unmasked.length ? h("ul", { class: "pii", id: "pii-unmasked" },
        pii.unmasked.map(function (u) {
          return h("li", null, SD.link("exposure." + u[0], u[0], null, "exposure"), " ← ", SD.link("model." + u[1], u[1] + "." + u[2], u[2]));
        })) : h("p", null, "None.")),
      SD.section("What each exposure receives", names.length ? h("div", { id: "pii-exposures" }, names.map(function (e) {
        return h("div", { class: "pii-exposure" }, h("h4", null, SD.link("exposure." + e, e, null, "exposure")),
          h("ul", { class: "pii" }, pii.exposures[e].map(function (c) {
            return h("li", null, SD.link(data.relationId(c[0]), c[0] + "." + c[1], c[1]), " ", classes(c[2]),
                     h("span", { class: "muted" }, " from " + c[3].join(", ")));
          })));
      })) : h("p", null, "No exposure receives classified columns.")),
    ];
  };
})(window.StreamtDocs = window.StreamtDocs || {});
