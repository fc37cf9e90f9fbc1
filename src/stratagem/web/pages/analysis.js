// stratagem view: the Analysis part of an experiment's page (issue 35): the studies' leaderboards,
// each row opening the episode list filtered to it (`group=<key>`), the calibration of stored
// beliefs with a reliability diagram per model and belief kind, and the noise floor of replicate
// cells. The numbers come from the data layer (stratagem.web.data.analysis), served or exported
// alike; they are computed when the part is first opened (ratings refit bootstraps: seconds on a
// large experiment), then kept while the page refreshes. Text enters as text nodes; the diagram
// is SVG drawn with d3 (vendor/d3, as charts.js), coloured by app.css classes (no inline style).
"use strict";

window.StratagemPages = window.StratagemPages || {};

window.StratagemAnalysis = (() => {
  const REFRESH_MS = 30000; // a part refreshed by the page's polling asks again at most this often
  const MAX_DIAGRAMS = 12; // as the report: the rest are in the calibration table
  const opened = new Set(); // "<source>/<experiment>" whose part is open

  function load(kit, source, experiment) {
    const path = `/api/experiments/${encodeURIComponent(source)}/${kit.pathId(experiment)}/analysis`;
    return window.StratagemSource.apiAtMostEvery(REFRESH_MS, path);
  }

  // The part: folded until opened (or when the list shows a row's episodes), then drawn.
  function part(kit, source, experiment, group) {
    const key = `${source}/${experiment}`;
    const body = kit.el("div", { class: "analysis-body" });
    let drawn = false;
    const details = kit.el(
      "details",
      { class: "analysis", open: opened.has(key) || Boolean(group) },
      kit.el("summary", {}, kit.el("h2", {}, "Analysis"), " leaderboards, belief calibration, noise floor"),
      body,
    );
    const draw = () => {
      if (drawn) return;
      drawn = true;
      body.replaceChildren(kit.el("p", { class: "muted" }, "Computing…"));
      load(kit, source, experiment).then(
        (answer) => body.replaceChildren(...parts(kit, source, experiment, answer, group)),
        (error) => body.replaceChildren(kit.el("p", { class: "error" }, "Error: " + error.message)),
      );
    };
    details.addEventListener("toggle", () => {
      if (details.open) {
        opened.add(key);
        draw();
      } else opened.delete(key);
    });
    if (details.open) draw();
    return details;
  }

  function parts(kit, source, experiment, answer, group) {
    if (answer.withheld) return [kit.el("p", { class: "muted" }, answer.withheld)];
    const shown = [
      ...answer.leaderboards.flatMap((b) => leaderboard(kit, source, experiment, b, group)),
      ...calibration(kit, answer.calibration),
      ...noise(kit, answer.noise),
    ];
    return shown.length ? shown : [kit.el("p", { class: "muted" }, "No leaderboard, scored belief or replicate cell in this experiment.")];
  }

  // ---- leaderboards: each row's label and count open the episodes behind it -------------------
  function leaderboard(kit, source, experiment, board, group) {
    const open = (row, text) => kit.el("a", { href: { path: ["x", source, experiment], query: { group: row.group } }, class: "group-link" }, text);
    const numeric = (k) => (board.numeric[k] ? "num" : "");
    const rows = board.rows.map((r) =>
      kit.el(
        "tr",
        { class: r.group === group ? "group-row chosen" : "group-row" },
        kit.el("td", {}, open(r, r.label)),
        r.cells.map((c, k) => kit.el("td", { class: numeric(k + 1) }, c)),
        kit.el("td", { class: "num" }, open(r, String(r.episodes))),
      ),
    );
    return [
      kit.el("h3", {}, board.title),
      kit.el("p", { class: "caption" }, board.caption),
      kit.el(
        "table",
        { class: "leaderboard" },
        kit.el("thead", {}, kit.el("tr", {}, [...board.columns, "Episodes ▸"].map((h) => kit.el("th", {}, h)))),
        kit.el("tbody", {}, rows),
      ),
      board.note ? kit.el("p", { class: "caption" }, board.note) : null,
    ].filter((n) => n !== null);
  }

  // The line above a row's episodes: which row, and the way back to all of them.
  function groupNote(kit, source, experiment, group) {
    return kit.el(
      "p",
      { class: "group-note" },
      "The episodes behind the leaderboard row ",
      kit.el("b", {}, group),
      " · ",
      kit.el("a", { href: ["x", source, experiment] }, "all episodes"),
    );
  }

  // ---- calibration ---------------------------------------------------------------------------
  function estimate(kit, e) {
    if (!e || e.value === null) return "—";
    return e.low === null ? kit.fmt(e.value) : `${kit.fmt(e.value)} (${kit.fmt(e.low)}–${kit.fmt(e.high)})`;
  }

  function calibration(kit, rows) {
    if (!rows.length) return [];
    const scored = rows.filter((c) => c.probabilistic);
    return [
      kit.el("h3", {}, "Belief calibration"),
      kit.el("p", { class: "caption" }, "Stored beliefs scored as forecasts of what the episode recorded, per model, agent, game and belief kind: Brier score (0 is perfect), log loss, expected calibration error (ECE, 10 equal-width confidence bins) and the accuracy of the most probable outcome, with 95% intervals from a bootstrap over episodes; guesses stated without a probability get only their accuracy (docs/calibration.md)."),
      kit.table(
        ["Model", "Agent", "Game", "Belief", "Forecasts", "Episodes", "Brier", "Log loss", "ECE", "Accuracy"],
        rows.map((c) => [c.model, c.agent || "—", c.game, c.kind, kit.fmt(c.forecasts), kit.fmt(c.episodes),
          estimate(kit, c.brier), estimate(kit, c.log_loss), estimate(kit, c.ece), estimate(kit, c.accuracy)]),
      ),
      kit.el("div", { class: "reliability-grid" }, scored.slice(0, MAX_DIAGRAMS).map((c) => diagram(kit, c))),
      scored.length > MAX_DIAGRAMS ? kit.el("p", { class: "caption" }, `${scored.length - MAX_DIAGRAMS} more diagrams are not drawn; the table above has their numbers.`) : null,
    ].filter((n) => n !== null);
  }

  // A reliability diagram: accuracy against mean confidence per non-empty bin (a dot whose area
  // grows with the bin's forecasts), the diagonal being perfect calibration; its bins beside it.
  function diagram(kit, c) {
    const size = 200, pad = 30, left = 44; // the left margin holds the ticks and the label
    const x = d3.scaleLinear().domain([0, 1]).range([left, left + size]);
    const y = d3.scaleLinear().domain([0, 1]).range([pad + size, pad]);
    const bins = c.bins.filter((b) => b.count > 0);
    const most = Math.max(1, ...bins.map((b) => b.count));
    const svg = d3.create("svg").attr("class", "reliability").attr("role", "img")
      .attr("width", left + size + pad).attr("height", size + 2 * pad).attr("viewBox", `0 0 ${left + size + pad} ${size + 2 * pad}`);
    svg.append("title").text(`Reliability diagram: ${c.model} (${c.agent}), ${c.game}: ${c.kind}`);
    svg.append("rect").attr("class", "frame").attr("x", x(0)).attr("y", y(1)).attr("width", size).attr("height", size);
    svg.append("line").attr("class", "diagonal").attr("x1", x(0)).attr("y1", y(0)).attr("x2", x(1)).attr("y2", y(1));
    svg.append("g").attr("class", "tick").attr("transform", `translate(0,${y(0)})`).call(d3.axisBottom(x).tickValues([0, 0.5, 1]));
    svg.append("g").attr("class", "tick").attr("transform", `translate(${x(0)},0)`).call(d3.axisLeft(y).tickValues([0, 0.5, 1]));
    svg.append("text").attr("class", "label").attr("x", x(0.5)).attr("y", y(0) + 27).attr("text-anchor", "middle").text("confidence");
    svg.append("text").attr("class", "label").attr("x", 12).attr("y", y(0.5)).attr("text-anchor", "middle").attr("transform", `rotate(-90 12 ${y(0.5)})`).text("accuracy");
    if (bins.length > 1) svg.append("path").attr("class", "series").attr("d", d3.line().x((b) => x(b.confidence)).y((b) => y(b.accuracy))(bins));
    for (const b of bins) {
      svg.append("circle").attr("class", "bin").attr("cx", x(b.confidence)).attr("cy", y(b.accuracy)).attr("r", (3 + 6 * Math.sqrt(b.count / most)).toFixed(1))
        .append("title").text(`${kit.fmt(b.lower, 1)}–${kit.fmt(b.upper, 1)}: ${b.count} forecasts, confidence ${kit.fmt(b.confidence)}, accuracy ${kit.fmt(b.accuracy)}`);
    }
    const drawing = svg.node();
    return kit.el(
      "figure",
      { class: "reliability-figure" },
      kit.el("figcaption", {}, `${c.model}${c.agent ? ` (${c.agent})` : ""} · ${c.game}: ${c.kind}`),
      kit.el("div", { class: "reliability-box" },
        drawing,
        kit.table(["Bin", "Forecasts", "Confidence", "Accuracy"],
          bins.map((b) => [`${kit.fmt(b.lower, 1)}–${kit.fmt(b.upper, 1)}`, kit.fmt(b.count), kit.fmt(b.confidence), kit.fmt(b.accuracy)]))),
    );
  }

  // ---- noise floor ---------------------------------------------------------------------------
  function noise(kit, floors) {
    if (!floors.length) return [];
    return [
      kit.el("h3", {}, "Noise floor: replicate cells"),
      kit.el("p", { class: "caption" }, "Each cell played again under new sampling seeds and compared with its copy, per metric of seat 0: two identical cells differ by less than the noise floor 95% of the time, so a comparison inside it is one identical cells produce (docs/statistics.md)."),
      kit.el("table", { class: "noise" },
        kit.el("thead", {}, kit.el("tr", {}, ["Metric", "Noise floor", "Cells", "Replicates", "RMS", "Mean |Δ|", "Largest |Δ|", "Intervals excluding 0"].map((h) => kit.el("th", {}, h)))),
        kit.el("tbody", {}, floors.map((f) => kit.el("tr", {}, [f.name, "±" + kit.fmt(f.floor), kit.fmt(f.cells), kit.fmt(f.replicates), kit.fmt(f.rms), kit.fmt(f.mean_abs), kit.fmt(f.largest), `${f.excluding_zero} of ${f.replicates}`].map((v) => kit.el("td", {}, v)))))),
    ];
  }

  // "#/find/<experiment>?group=<key>": a report's link back to the viewer (it cannot know the
  // results directory's number): the experiment's page in the first directory holding it, the
  // one with a report first.
  window.StratagemPages.find = async (kit, parts, query) => {
    const all = await kit.api("/api/experiments");
    const found = all.filter((x) => x.id === parts[0]);
    const chosen = parts.length === 1 ? found.find((x) => x.report) || found[0] : null;
    if (!chosen) throw new Error(`no experiment '${parts.join("/")}' in these results directories`);
    location.replace(kit.route({ path: ["x", chosen.source, chosen.id], query: Object.fromEntries(query.entries()) }));
    return { sources: [], refresh: () => {} };
  };

  return Object.freeze({ part, groupNote });
})();
