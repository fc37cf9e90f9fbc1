// stratagem view: what the game-specific step views (views/*.js, and plugins' registered with
// `register.view`) share, and the registry they register into (app.js's GAME_VIEWS). Text
// enters the page as text nodes only; colours come from classes in app.css (the CSP allows no
// inline style).
"use strict";

window.StratagemViews = window.StratagemViews || {};

window.StratagemViewKit = (() => {
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, props, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else node[key] = value; // DOM properties only, never innerHTML
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid !== null && kid !== undefined) node.append(kid instanceof Node ? kid : String(kid));
    }
    return node;
  }

  // An SVG element with attributes (numbers and class names), text kids as text nodes.
  function svg(tag, attrs, ...kids) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    for (const kid of kids.flat(Infinity)) {
      if (kid !== null && kid !== undefined) node.append(kid instanceof Node ? kid : String(kid));
    }
    return node;
  }

  function fmt(value, digits = 3) {
    if (value === null || value === undefined) return "—";
    if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits);
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  function table(headers, rows, className) {
    return el(
      "table",
      { class: className || "" },
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c) => (c instanceof Node && c.tagName === "TD" ? c : el("td", {}, c)))))),
    );
  }

  // The steps up to and including `step`, in order: what has happened by then.
  function upTo(step, episode) {
    return episode.steps.slice(0, step.index + 1);
  }

  // The events of these kinds up to and including `step`, in order (what the seat shown saw).
  function eventsUpTo(step, episode, ...kinds) {
    return upTo(step, episode).flatMap((s) => s.events.filter((e) => kinds.includes(e.kind)));
  }

  // A horizontal bar for `value` out of `max`, drawn in SVG: its width is an attribute, since
  // the CSP allows no inline style. Non-numbers draw an empty bar.
  function bar(value, max, className) {
    const W = 100, H = 10;
    const part = typeof value === "number" && Number.isFinite(value) && max > 0 ? value / max : 0;
    const width = Math.max(0, Math.min(1, part)) * W;
    return svg(
      "svg",
      { class: `bar ${className || ""}`.trim(), viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" },
      svg("title", {}, fmt(value)),
      svg("rect", { class: "bar-back", x: 0, y: 0, width: W, height: H }),
      svg("rect", { class: "bar-fill", x: 0, y: 0, width, height: H }),
    );
  }

  // Register `draw(step, episode)` under the games or families the page loaded this file for
  // (its script element's data-views, written from `register.view`), so that a plugin's view
  // need not know the namespace its plugin was loaded under. Call it while the file runs.
  function register(draw) {
    const script = document.currentScript;
    const keys = script && script.dataset.views ? JSON.parse(script.dataset.views) : [];
    for (const key of keys) window.StratagemViews[key] = draw;
    return keys;
  }

  return { el, svg, fmt, table, upTo, eventsUpTo, bar, register };
})();
