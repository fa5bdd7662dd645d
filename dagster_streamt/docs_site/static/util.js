/* streamt docs: small DOM helpers shared by the page's scripts (no framework; all user text goes
   through textContent, never innerHTML). */
(function (SD) {
  "use strict";

  function append(el, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(el, c); }); return; }
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }

  /* h("a", {href: "#x", class: "c", onclick: fn}, "text", child, [more]) */
  SD.h = function (tag, attrs) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "class") el.className = v;
      else if (k.slice(0, 2) === "on") el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    });
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  };

  /* Routes: "" (overview), "model.orders_clean", "model.orders_clean/amount", "schedule.x", "pii". */
  SD.href = function (target, column) {
    return "#" + encodeURIComponent(target) + (column ? "/" + encodeURIComponent(column) : "");
  };
  SD.parseRoute = function (hash) {
    var text = (hash || "").replace(/^#/, "");
    var slash = text.indexOf("/");
    if (slash < 0) return { target: decodeURIComponent(text), column: null };
    return { target: decodeURIComponent(text.slice(0, slash)), column: decodeURIComponent(text.slice(slash + 1)) };
  };

  SD.link = function (target, text, column, cls) {
    return SD.h("a", { href: SD.href(target, column), class: cls || null }, text);
  };

  SD.badge = function (text, cls) {
    return SD.h("span", { class: "badge " + (cls || "") }, text);
  };

  SD.plural = function (n, word) { return n + " " + word + (n === 1 ? "" : "s"); };

  SD.fmtTime = function (iso) {
    if (!iso) return "-";
    return iso.replace("T", " ").replace(/\.\d+/, "").replace("+00:00", " UTC");
  };

  SD.fmtInt = function (n) {
    return n === null || n === undefined ? "-" : Number(n).toLocaleString("en-US");
  };

  /* A titled section of a page; returns null when it has nothing to show. */
  SD.section = function (title, body, cls) {
    if (body === null || body === undefined || (Array.isArray(body) && !body.length)) return null;
    return SD.h("section", { class: "block " + (cls || "") }, SD.h("h3", null, title), body);
  };

  /* A key/value list (dl), skipping empty values. */
  SD.facts = function (pairs) {
    var dl = SD.h("dl", { class: "facts" });
    pairs.forEach(function (p) {
      if (p[1] === null || p[1] === undefined || p[1] === "" || (Array.isArray(p[1]) && !p[1].length)) return;
      dl.appendChild(SD.h("dt", null, p[0]));
      dl.appendChild(SD.h("dd", null, p[1]));
    });
    return dl.childNodes.length ? dl : null;
  };

  /* Code highlighted by highlight.js (vendored); plain text when it is missing. */
  SD.code = function (text, language) {
    var code = SD.h("code", { class: "hljs language-" + language });
    if (window.hljs && window.hljs.getLanguage(language)) {
      code.innerHTML = window.hljs.highlight(text, { language: language, ignoreIllegals: true }).value;
    } else {
      code.textContent = text;
    }
    return SD.h("pre", { class: "code" }, code);
  };

  /* Any JSON-like configuration value as short readable text. */
  SD.configText = function (value) {
    if (value === null || value === undefined) return "";
    if (typeof value !== "object") return String(value);
    return JSON.stringify(value, null, 1).replace(/\n\s*/g, " ");
  };
})(window.StreamtDocs = window.StreamtDocs || {});
