/* streamt docs: the page of each source, model, exposure, test and schedule, and the overview. */
(function (SD) {
  "use strict";
  var h = SD.h;

  function header(data, n) {
    var run = n.type === "model" ? data.lastRun(n.name) : null;
    var sub = n.type === "test" ? data.raw.tests[n.name].type : n.type === "exposure" ? n.detail : n.materialized;
    return [
      h("h2", { class: "title" }, SD.badge(n.type, "k-" + n.type), " ", n.name,
        sub ? SD.badge(sub, "mat") : null, run ? SD.badge(run.status, "st-" + run.status.toLowerCase()) : null),
      n.description ? h("p", { class: "description" }, n.description) : null,
      SD.facts([["owner", n.owner || null], ["tags", (n.tags || []).map(function (t) { return SD.badge(t, "tag"); })],
                ["location", n.type === "source" ? n.detail : null],
                ["defined in", n.file ? n.file + (n.line ? ":" + n.line : "") : null]]),
    ];
  }

  function neighbours(data, n) {
    function list(idxs) {
      var shown = idxs.filter(function (i) { return data.nodes[i].type !== "test"; });
      return shown.length ? h("ul", { class: "inline" }, shown.map(function (i) {
        var m = data.nodes[i];
        return h("li", null, SD.link(m.id, m.name), h("span", { class: "muted" }, " " + (m.materialized || m.type)));
      })) : h("span", { class: "muted" }, "none");
    }
    return SD.section("Lineage", SD.facts([["reads from", list(data.up[n.index])], ["read by", list(data.down[n.index])]]));
  }

  /* The impact summary of `streamt lineage --downstream`, with every name a link. */
  function impact(data, n) {
    var imp = data.impact(n.id), parts = [];
    [["model", imp.models], ["sink", imp.sinks], ["exposure", imp.exposures]].forEach(function (p) {
      if (!p[1].length) return;
      var span = h("span", { class: "impact-part" }, p[1].length + " " + p[0] + (p[1].length !== 1 ? "s" : "") + ": ");
      p[1].forEach(function (id, i) {
        if (i) span.appendChild(document.createTextNode(", "));
        span.appendChild(SD.link(id, data.node(id).name, null, p[0] === "exposure" ? "exposure" : null));
      });
      parts.push(span);
    });
    var body = h("div", { class: "impact", id: "impact" });
    if (!parts.length) {
      body.appendChild(h("p", null, "Changes to " + n.name + " affect nothing downstream."));
    } else {
      var p = h("p", { class: "impact-sentence" }, "Changes to " + n.name + " will affect: ");
      parts.forEach(function (part, i) { if (i) p.appendChild(document.createTextNode("; ")); p.appendChild(part); });
      body.appendChild(p);
      if (imp.owners.length) body.appendChild(h("p", null, "Owners to notify: " + imp.owners.join(", ")));
      if (imp.tests.length) body.appendChild(h("p", { class: "muted" }, SD.plural(imp.tests.length, "test") + " downstream"));
    }
    return SD.section("Impact", body);
  }

  function lastRun(data, n) {
    if (n.type !== "model") return null;
    var st = data.raw.state;
    if (!st) return SD.section("Last run", h("p", { class: "muted" }, "No run history: this project's Dagster instance has no runs yet."));
    var r = data.lastRun(n.name);
    if (!r) return SD.section("Last run", h("p", { class: "muted", id: "last-run" }, "never run"));
    return SD.section("Last run", h("div", { id: "last-run" }, SD.facts([
      ["status", SD.badge(r.status, "st-" + r.status.toLowerCase())], ["started", SD.fmtTime(r.started)],
      ["finished", SD.fmtTime(r.finished)], ["duration", r.seconds.toFixed(1) + " s"], ["rows", SD.fmtInt(r.rows)],
      ["run id", r.run_id], ["error", r.error || null]])));
  }

  function testItem(data, name, withTarget) {
    var t = data.raw.tests[name], res = data.lastCheck(name);
    var verdict = !res ? SD.badge("no result", "st-none") : res.passed === null ? SD.badge("running", "st-running")
      : res.passed ? SD.badge("passed", "st-complete") : SD.badge("failed (" + res.severity + ")", "st-fail");
    return h("li", { class: "test" },
      h("div", null, SD.link("test." + name, name), " ", SD.badge(t.type, "mat"), " ", SD.badge("severity " + t.severity, "sev"),
        " ", verdict, res && res.at ? h("span", { class: "muted" }, " " + SD.fmtTime(res.at)) : null,
        withTarget ? [" on ", SD.link(t.target, t.target.slice(t.target.indexOf(".") + 1))] : null),
      SD.code(t.assertions.map(function (a) { return "- " + a; }).join("\n"), "yaml"));
  }

  function tests(data, n) {
    var names = data.testsOf.get(n.id) || [];
    return SD.section("Tests", names.length ? h("ul", { class: "tests" }, names.map(function (t) { return testItem(data, t); })) : null);
  }

  function config(cfg) {
    var keys = Object.keys(cfg || {});
    return SD.section("Configuration", SD.facts(keys.map(function (k) { return [k, SD.configText(cfg[k])]; })));
  }

  function sqlPanes(body, compiled, written) {
    var panes = [["compiled", compiled], ["as written", written]].filter(function (p) { return p[1]; });
    if (panes.length > 1) {
      var tabs = h("div", { class: "tabs" });
      panes.forEach(function (p, i) {
        tabs.appendChild(h("button", { type: "button", class: i ? "" : "on", onclick: function (e) {
          tabs.querySelectorAll("button").forEach(function (b) { b.className = b === e.target ? "on" : ""; });
          body.querySelectorAll("pre").forEach(function (pre, j) { pre.hidden = j !== i; });
        } }, p[0]));
      });
      body.appendChild(tabs);
    }
    panes.forEach(function (p, i) { var pre = SD.code(p[1], "sql"); pre.hidden = i > 0; body.appendChild(pre); });
  }

  /* Compiled SQL (and the SQL as written, when templating changed it), highlighted. */
  function sql(data, n) {
    var m = data.raw.models[n.name];
    var body = h("div", { class: "sql", id: "sql" }, h("p", { class: "muted loading" }, "loading SQL…"));
    data.sql(n.name, function (pair, err) {
      body.textContent = "";
      if (err) body.appendChild(h("p", { class: "warn" }, err));
      else if (pair) sqlPanes(body, pair[0], pair[1]);
      else if (m.from) body.appendChild(h("p", null, "A sink of ", SD.link("model." + m.from, m.from), ": writes its rows as they are."));
      else body.appendChild(h("p", { class: "muted" }, "No SQL."));
      if (m.materialized_inferred_from) body.appendChild(h("p", { class: "muted" }, "Materialization inferred from: " + m.materialized_inferred_from + "."));
      body.dataset.loaded = "1";
    });
    return SD.section("SQL", body);
  }

  function exposurePii(data, n) {
    var got = data.raw.pii.exposures[n.name];
    if (!got) return null;
    return SD.section("Classified data received", h("ul", { class: "pii" }, got.map(function (c) {
      return h("li", null, SD.link(data.relationId(c[0]), c[0] + "." + c[1], c[1]), " ",
               c[2].map(function (k) { return SD.badge(k, "cls cls-" + k); }), h("span", { class: "muted" }, " from " + c[3].join(", ")));
    })));
  }

  SD.pages = {};

  SD.pages.node = function (data, n, columnView) {
    var out = header(data, n);
    if (n.type === "model" || n.type === "source") {
      if (columnView) out.push(columnView);
      out.push(lastRun(data, n), impact(data, n), SD.columnsTable(data, n), n.type === "model" ? sql(data, n) : null,
               tests(data, n), neighbours(data, n), config((n.type === "model" ? data.raw.models : data.raw.sources)[n.name].config));
      if (n.type === "model") {
        var cols = data.raw.models[n.name];
        if (cols.warnings.length) out.push(SD.section("Column lineage notes", h("ul", null, cols.warnings.map(function (w) { return h("li", null, w); }))));
      }
    } else if (n.type === "exposure") {
      out.push(neighbours(data, n), exposurePii(data, n), config(data.raw.exposures[n.name].config));
    } else if (n.type === "test") {
      var t = data.raw.tests[n.name];
      out.push(SD.section("Assertions", h("ul", { class: "tests" }, testItem(data, n.name, true))), config(t.config));
    }
    return out;
  };

  SD.pages.schedule = function (data, name) {
    var s = data.raw.schedules[name];
    return [
      h("h2", { class: "title" }, SD.badge("schedule", "k-schedule"), " ", name, s.enabled ? null : SD.badge("starts stopped", "st-none")),
      s.description ? h("p", { class: "description" }, s.description) : null,
      SD.facts([["cron", h("code", null, s.cron)], ["time zone", s.timezone], ["selection", h("code", null, s.select)],
                ["defined in", s.file ? s.file + (s.line ? ":" + s.line : "") : null], ["problem", s.error || null]]),
      SD.section("Runs " + SD.plural(s.models.length, "model"), h("ul", { class: "inline" }, s.models.map(function (id) {
        return h("li", null, SD.link(id, data.node(id).name));
      }))),
    ];
  };

  SD.pages.overview = function (data) {
    var raw = data.raw, p = raw.project, count = {};
    data.nodes.forEach(function (n) {
      var k = n.type === "model" ? "model:" + n.materialized : n.type;
      count[k] = (count[k] || 0) + 1;
    });
    var mats = Object.keys(count).filter(function (k) { return k.indexOf("model:") === 0; }).sort()
      .map(function (k) { return count[k] + " " + k.slice(6); }).join(", ");
    var st = raw.state, runs = st ? Object.keys(st.runs).length : 0;
    var history = !st ? "No Dagster instance yet: after `streamt run`, regenerate to see each model's last run here."
      : st.error ? "Could not read the run history in " + st.instance + ": " + st.error
      : "Last runs of " + SD.plural(runs, "model") + " and " + SD.plural(Object.keys(st.checks).length, "test result")
        + ", read from the Dagster instance in " + st.instance + ".";
    var warnings = raw.diagnostics.filter(function (d) { return d.severity !== "note"; }).length;
    return [
      h("h2", { class: "title" }, p.name, h("span", { class: "muted" }, " " + p.version + (p.env ? " · env " + p.env : ""))),
      p.description ? h("p", { class: "description" }, p.description) : null,
      SD.facts([["sources", String(count.source || 0)], ["models", (data.raw.models ? Object.keys(raw.models).length : 0) + (mats ? " (" + mats + ")" : "")],
                ["exposures", String(count.exposure || 0)], ["tests", String(count.test || 0)],
                ["schedules", String(Object.keys(raw.schedules).length)],
                ["diagnostics", h("a", { href: "#diagnostics" }, warnings + " warning(s), " + (raw.diagnostics.length - warnings) + " note(s)")],
                ["run history", history]]),
      SD.section("Exposures", h("ul", null, data.nodes.filter(function (n) { return n.type === "exposure"; }).map(function (n) {
        return h("li", null, SD.link(n.id, n.name), h("span", { class: "muted" }, " " + n.detail + (n.owner ? ", owner " + n.owner : "") + " ← "),
                 data.up[n.index].map(function (i, j) { return [j ? ", " : "", SD.link(data.nodes[i].id, data.nodes[i].name)]; }));
      }))),
      h("p", { class: "muted" }, "Click a node in the graph or the list, or search (press /). Generated by " + raw.generator + "."),
    ];
  };

  SD.pages.diagnostics = function (data) {
    var d = data.raw.diagnostics;
    return [h("h2", { class: "title" }, "Diagnostics"),
      d.length ? h("ul", { class: "diags" }, d.map(function (x) {
        return h("li", null, SD.badge(x.severity + " " + x.code, "sev-" + x.severity), " ",
                 h("code", null, x.file + (x.line ? ":" + x.line : "")), " ", x.message,
                 x.hint ? h("div", { class: "muted" }, "fix: " + x.hint) : null);
      })) : h("p", null, "No warnings: `streamt validate` has nothing to say.")];
  };
})(window.StreamtDocs = window.StreamtDocs || {});
