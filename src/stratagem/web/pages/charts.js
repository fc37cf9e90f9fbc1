// stratagem view: the Charts part of an experiment's page (issue 36 item 6): each cell's metric
// as a sortable dot plot with its interval, a cell's metric over rounds with its interval band,
// and each counterfactual variant's paired difference from its default game. The numbers come
// from the data layer (stratagem.web.data.charts), served or exported alike, and each chart has
// them in a table one click away. MAgIC's Bradley-Terry ratings (each mark opening the episodes
// of its leaderboard row, `group=<key>` as the Analysis part's rows) and ToM's belief accuracy per
// turn (the report's Figure 4) are drawn where the experiment has those games. Drawn as SVG with d3 (vendor/d3, VENDORED.md); every text
// from data enters as a text node (d3's .text, textContent), coloured by app.css classes.
"use strict";

window.StratagemCharts = (() => {
  const REFRESH_MS = 30000; // as the Analysis part: asked again at most this often
  const WIDTH = 640, ROW = 22, LEFT = 260, RIGHT = 24, TOP = 8, AXIS = 36;
  const TONES = 6; // app.css colours line series tone-0 … tone-5
  const PROPORTIONS = new Set(["cooperation", "invalid rate", "valid"]);
  const opened = new Set();

  function load(kit, source, experiment) {
    const path = `/api/experiments/${encodeURIComponent(source)}/${kit.pathId(experiment)}/charts`;
    return window.StratagemSource.apiAtMostEvery(REFRESH_MS, path);
  }

  // The part: folded until opened, then drawn (reading every round takes a moment at scale).
  function part(kit, source, experiment) {
    const key = `${source}/${experiment}`;
    const body = kit.el("div", { class: "charts-body" });
    const details = kit.el(
      "details",
      { class: "charts", open: opened.has(key) },
      kit.el("summary", {}, kit.el("h2", {}, "Charts"), " metric by cell, over rounds, variant vs base"),
      body,
    );
    let drawn = false;
    const draw = () => {
      if (drawn) return;
      drawn = true;
      body.replaceChildren(kit.el("p", { class: "muted" }, "Computing…"));
      load(kit, source, experiment).then(
        (answer) => body.replaceChildren(...sections(kit, source, experiment, answer)),
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

  function sections(kit, source, experiment, answer) {
    if (!answer.cells.length) return [kit.el("p", { class: "muted" }, "No finished episode to chart.")];
    return [byCell(kit, answer), overRounds(kit, answer), variants(kit, answer),
      ratings(kit, source, experiment, answer.ratings), belief(kit, answer.belief)].filter((n) => n !== null);
  }

  // A <select> whose change redraws `box` with `drawn(value)`.
  function chooser(kit, label, options, redraw) {
    const select = kit.el("select", { on: { change: () => redraw() } }, options.map(([v, text]) => kit.el("option", { value: v }, text)));
    return [select, kit.el("label", {}, label + " ", select)];
  }

  function interval(kit, p, digits = 3) {
    return p.low === null || p.low === undefined ? "—" : `${kit.fmt(p.low, digits)} – ${kit.fmt(p.high, digits)}`;
  }

  // A figure: its controls, the chart, and its numbers folded beneath it.
  function figure(kit, cls, title, caption, controls, draw) {
    const box = kit.el("div", { class: "chart-box" });
    const redraw = () => {
      const [chart, numbers] = draw();
      box.replaceChildren(chart, kit.el("details", { class: "numbers" }, kit.el("summary", {}, "numbers"), numbers));
    };
    const made = controls(redraw);
    redraw();
    return kit.el("figure", { class: `chart-figure ${cls}` }, kit.el("h3", {}, title), kit.el("p", { class: "caption" }, caption),
      kit.el("div", { class: "chart-controls" }, made), box);
  }

  // ---- metric by cell: a dot per cell with its interval, in the order chosen ----------------------
  function byCell(kit, answer) {
    let metric, order;
    return figure(kit, "by-cell", "Metric by cell",
      `Each cell's mean per episode of seat 0's metric with its ${answer.level * 100}% t interval (clustered by seed where a seed holds several episodes).`,
      (redraw) => {
        [metric] = chooser(kit, "metric", answer.cell_metrics.map((m) => [m, m]), redraw);
        [order] = chooser(kit, "sort", [["cells", "as the cells table"], ["up", "lowest first"], ["down", "highest first"]], redraw);
        return [metric.parentNode, order.parentNode];
      },
      () => {
        const rows = answer.cells.map((c) => ({ label: c.label, ...c.metrics[metric.value] }));
        const sorted = order.value === "cells" ? rows : sortedBy(rows, order.value === "up" ? 1 : -1);
        return [dotPlot(kit, `${metric.value} by cell`, sorted, metric.value, PROPORTIONS.has(metric.value), false),
          kit.table(["Cell", "Mean", "Interval", "Episodes"], sorted.map((r) => [r.label, kit.fmt(r.value), interval(kit, r), kit.fmt(r.n)]))];
      });
  }

  function sortedBy(rows, sign) {
    const v = (r) => (r.value === null ? Infinity : sign * r.value);
    return [...rows].sort((a, b) => v(a) - v(b));
  }

  // ---- one cell over rounds: the mean line in its interval band ------------------------------------
  function overRounds(kit, answer) {
    const cells = answer.cells.filter((c) => Object.keys(c.over_rounds).length);
    if (!cells.length) return null;
    let cell, metric;
    return figure(kit, "over-rounds", "Over rounds",
      `Seat 0's value in each round, the mean over the cell's episodes with its ${answer.level * 100}% t interval as a band: its payoff, whether its move was valid, and whether a valid move was the cooperative one.`,
      (redraw) => {
        [cell] = chooser(kit, "cell", cells.map((c, k) => [String(k), c.label]), redraw);
        [metric] = chooser(kit, "metric", answer.round_metrics.map((m) => [m, m]), redraw);
        return [cell.parentNode, metric.parentNode];
      },
      () => {
        const chosen = cells[Number(cell.value)];
        const points = chosen.over_rounds[metric.value] || [];
        return [linePlot(kit, `${metric.value} over rounds: ${chosen.label}`, points, metric.value, PROPORTIONS.has(metric.value)),
          kit.table(["Round", "Mean", "Interval", "Episodes"], points.map((p) => [kit.fmt(p.round), kit.fmt(p.value), interval(kit, p), kit.fmt(p.n)]))];
      });
  }

  // ---- variant vs base: each pair's paired difference with its interval, 0 marked --------------------
  function variants(kit, answer) {
    const pairs = answer.variants.pairs;
    if (!pairs.length) return null;
    let metric;
    const label = (p) => `${p.variant} − ${p.base} · ${p.model} · ${p.agent} · vs ${p.opponent} · ${p.rounds} rounds`;
    return figure(kit, "variants", "Variant vs base",
      `Each counterfactual variant minus its default game in cells alike in everything else: the mean paired difference (paired by seed and repetition) with its ${answer.level * 100}% interval.`,
      (redraw) => {
        [metric] = chooser(kit, "metric", answer.cell_metrics.map((m) => [m, m]), redraw);
        return [metric.parentNode];
      },
      () => {
        const rows = pairs.filter((p) => p.metrics[metric.value]).map((p) => ({ label: label(p), ...p.metrics[metric.value] }));
        const note = answer.variants.correction[metric.value];
        return [dotPlot(kit, `${metric.value}: variant minus base`, rows, `Δ ${metric.value}`, false, true),
          kit.el("div", {}, kit.table(["Pair", "Difference", "Interval", "p", "p adjusted", "Pairs", "Method"],
            rows.map((r) => [r.label, kit.fmt(r.value), interval(kit, r), kit.fmt(r.p), kit.fmt(r.p_adjusted), kit.fmt(r.n), r.method])),
          note ? kit.el("p", { class: "caption" }, note) : null)];
      });
  }

  // ---- MAgIC: the Bradley-Terry rating of each entity, best first, each mark opening its games ------
  function ratings(kit, source, experiment, board) {
    if (!board || !board.rows.length) return null;
    const episodes = (r) => ({ path: ["x", source, experiment], query: { group: r.group } });
    const open = (r, text) => kit.el("a", { href: episodes(r), class: "group-link" }, text);
    const rows = board.rows.map((r) => ({ ...r, label: r.entity, n: r.games }));
    return figure(kit, "ratings", `MAgIC: ${board.title}`,
      `Each entity's rating with its ${board.level * 100}% interval from ${board.n_boot} bootstrap refits over games, best first, as the leaderboard of the Analysis part (Elo-like scale, mean ${board.base}). A mark opens the games behind it.`,
      () => [],
      () => [dotPlot(kit, board.title, rows, "rating", false, false, episodes),
        kit.table(["Entity", "Rating", "Interval", "Games", "W / T / L", "Episodes ▸"],
          rows.map((r) => [open(r, r.entity), kit.fmt(r.value, 1), interval(kit, r, 1), kit.fmt(r.games), `${r.wins} / ${r.ties} / ${r.losses}`, open(r, String(r.episodes))]))]);
  }

  // ---- ToM: belief accuracy, the mean KL per turn of each (model, group), as Figure 4 ----------------
  function belief(kit, data) {
    if (!data || !data.series.length) return null;
    const name = (s) => `${s.model} · ${s.group}`;
    return figure(kit, "belief", "ToM: belief accuracy per turn",
      `KL(V0 opponent ‖ V1 focal): how far the focal agent's guess of the opponent's item values is from the opponent's own report at the same turn (ε = ${data.epsilon}); lower is closer. The mean over games at each turn, a line per model and group.`,
      () => [],
      () => [multiLine(kit, "mean KL per turn", data.series, name),
        kit.el("div", {},
          kit.table(["Model", "Group", "Mean KL", "Turns (n)", "Games with a pair"],
            data.series.map((s) => [s.model, s.group, kit.fmt(s.mean), kit.fmt(s.turns), kit.fmt(s.games)])),
          kit.table(["Model", "Group", "Turn", "Mean KL", "Games"],
            data.series.flatMap((s) => s.points.map((p) => [s.model, s.group, kit.fmt(p.turn), kit.fmt(p.value), kit.fmt(p.n)]))))]);
  }

  // A line per series (its points' turn and value), told apart by a colour class and a legend.
  function multiLine(kit, title, series, name) {
    const legend = 18 * series.length;
    const height = 240 + legend;
    const bottom = height - legend - AXIS;
    const svg = frame(title, height);
    const left = 56;
    const all = series.flatMap((s) => s.points.filter((p) => p.value !== null));
    const turns = d3.extent(all, (p) => p.turn);
    if (turns[0] === turns[1]) turns.splice(0, 2, turns[0] - 1, turns[1] + 1);
    const x = d3.scaleLinear().domain(turns).range([left, WIDTH - RIGHT]);
    const y = d3.scaleLinear().domain([0, d3.max(all, (p) => p.value) || 1]).nice().range([bottom, TOP]);
    svg.append("g").attr("class", "axis").attr("transform", `translate(0,${bottom})`).call(d3.axisBottom(x).ticks(Math.min(10, turns[1] - turns[0])).tickFormat(d3.format("d")));
    svg.append("g").attr("class", "axis").attr("transform", `translate(${left},0)`).call(d3.axisLeft(y).ticks(5));
    svg.append("text").attr("class", "axis-label").attr("x", (left + WIDTH) / 2).attr("y", bottom + 30).attr("text-anchor", "middle").text("turn");
    svg.append("text").attr("class", "axis-label").attr("x", 12).attr("y", bottom / 2).attr("text-anchor", "middle").attr("transform", `rotate(-90 12 ${bottom / 2})`).text("mean KL (nats)");
    series.forEach((s, k) => {
      const points = s.points.filter((p) => p.value !== null);
      const g = svg.append("g").attr("class", `line-series tone-${k % TONES}`);
      g.append("path").attr("class", "series").attr("d", d3.line().x((p) => x(p.turn)).y((p) => y(p.value))(points));
      for (const p of points) {
        g.append("circle").attr("class", "mark").attr("cx", x(p.turn)).attr("cy", y(p.value)).attr("r", 3.5)
          .append("title").text(`${name(s)}, turn ${p.turn}: ${kit.fmt(p.value)}, n=${p.n}`);
      }
      const at = bottom + AXIS + 12 + 18 * k;
      g.append("line").attr("class", "series key").attr("x1", left).attr("x2", left + 24).attr("y1", at - 4).attr("y2", at - 4);
      g.append("text").attr("class", "legend").attr("x", left + 32).attr("y", at).text(name(s));
    });
    return svg.node();
  }

  // ---- drawing (d3) -------------------------------------------------------------------------------
  function frame(title, height) {
    const svg = d3.create("svg").attr("class", "chart").attr("role", "img")
      .attr("width", WIDTH).attr("height", height).attr("viewBox", `0 0 ${WIDTH} ${height}`);
    svg.append("title").text(title);
    return svg;
  }

  function xScale(rows, proportion, zero) {
    const values = rows.flatMap((r) => [r.value, r.low, r.high]).filter((v) => v !== null && v !== undefined);
    const domain = proportion ? [0, 1] : d3.extent(zero ? [...values, 0] : values);
    if (domain[0] === undefined) domain.splice(0, 2, 0, 1);
    if (domain[0] === domain[1]) domain.splice(0, 2, domain[0] - 1, domain[1] + 1);
    return d3.scaleLinear().domain(domain).nice().range([LEFT, WIDTH - RIGHT]).clamp(true);
  }

  // One row per item: its label, its interval as a line and its mean as a dot (each with a title);
  // with `link` (row -> route) each row is a link there.
  function dotPlot(kit, title, rows, axisLabel, proportion, zero, link) {
    const height = TOP + rows.length * ROW + AXIS;
    const svg = frame(title, height);
    const x = xScale(rows, proportion, zero);
    const y = (k) => TOP + k * ROW + ROW / 2;
    svg.append("g").attr("class", "axis").attr("transform", `translate(0,${height - AXIS})`).call(d3.axisBottom(x).ticks(6));
    svg.append("text").attr("class", "axis-label").attr("x", (LEFT + WIDTH - RIGHT) / 2).attr("y", height - 4).attr("text-anchor", "middle").text(axisLabel);
    if (zero) svg.append("line").attr("class", "zero").attr("x1", x(0)).attr("x2", x(0)).attr("y1", TOP).attr("y2", height - AXIS);
    rows.forEach((r, k) => {
      const g = link ? svg.append("a").attr("class", "row row-link").attr("href", kit.route(link(r))) : svg.append("g").attr("class", "row");
      g.append("text").attr("class", "row-label").attr("x", LEFT - 8).attr("y", y(k) + 4).attr("text-anchor", "end").text(short(r.label));
      if (r.value === null || r.value === undefined) return;
      const said = `${r.label}: ${kit.fmt(r.value)}` + (r.low === null ? "" : ` (${kit.fmt(r.low)} – ${kit.fmt(r.high)})`) + `, n=${r.n}`;
      if (r.low !== null) g.append("line").attr("class", "interval").attr("x1", x(r.low)).attr("x2", x(r.high)).attr("y1", y(k)).attr("y2", y(k)).append("title").text(said);
      g.append("circle").attr("class", "mark").attr("cx", x(r.value)).attr("cy", y(k)).attr("r", 4.5).append("title").text(said);
    });
    return svg.node();
  }

  // The mean per round as a line with a dot per round, in its interval band.
  function linePlot(kit, title, points, axisLabel, proportion) {
    const height = 260;
    const svg = frame(title, height);
    const left = 56;
    const x = d3.scaleLinear().domain(d3.extent(points, (p) => p.round)).range([left, WIDTH - RIGHT]);
    if (points.length === 1) x.domain([points[0].round - 1, points[0].round + 1]);
    const values = points.flatMap((p) => [p.value, p.low, p.high]).filter((v) => v !== null);
    const y = d3.scaleLinear().domain(proportion ? [0, 1] : d3.extent(values)).nice().range([height - AXIS, TOP]).clamp(true);
    svg.append("g").attr("class", "axis").attr("transform", `translate(0,${height - AXIS})`).call(d3.axisBottom(x).ticks(Math.min(points.length, 10)).tickFormat(d3.format("d")));
    svg.append("g").attr("class", "axis").attr("transform", `translate(${left},0)`).call(d3.axisLeft(y).ticks(5));
    svg.append("text").attr("class", "axis-label").attr("x", (left + WIDTH) / 2).attr("y", height - 4).attr("text-anchor", "middle").text("round");
    svg.append("text").attr("class", "axis-label").attr("x", 12).attr("y", height / 2).attr("text-anchor", "middle").attr("transform", `rotate(-90 12 ${height / 2})`).text(axisLabel);
    const banded = points.filter((p) => p.low !== null);
    svg.append("path").attr("class", "band").attr("d", d3.area().x((p) => x(p.round)).y0((p) => y(p.low)).y1((p) => y(p.high))(banded));
    svg.append("path").attr("class", "series").attr("d", d3.line().x((p) => x(p.round)).y((p) => y(p.value))(points));
    for (const p of points) {
      svg.append("circle").attr("class", "mark").attr("cx", x(p.round)).attr("cy", y(p.value)).attr("r", 3.5)
        .append("title").text(`round ${p.round}: ${kit.fmt(p.value)}` + (p.low === null ? "" : ` (${kit.fmt(p.low)} – ${kit.fmt(p.high)})`) + `, n=${p.n}`);
    }
    return svg.node();
  }

  function short(text) {
    return text.length > 40 ? text.slice(0, 39) + "…" : text;
  }

  return Object.freeze({ part });
})();
