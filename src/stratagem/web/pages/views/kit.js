// stratagem view: what the game-specific step views (views/*.js) share, and the registry they
// register into (app.js's GAME_VIEWS). Text enters the page as text nodes only; colours come from
// classes in app.css (the CSP allows no inline style).
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

  return { el, svg, fmt, table, upTo };
})();
