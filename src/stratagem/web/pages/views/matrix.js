// stratagem view: repeated matrix games (issue 25 item 3). Up to the step shown: a table of the
// rounds (each seat's action and payoff, as stored in the round records) and each seat's
// cumulative payoff, as a table row and a small SVG plot. Registered as "rounds": app.js draws
// it for any game that stores round results and has no view of its own.
"use strict";

(() => {
  const { el, svg, fmt, table, upTo } = window.StratagemViewKit;
  const W = 400, H = 160, PAD = 28, RIGHT = 64; // RIGHT: room for the seat labels

  function roundsView(step, episode) {
    const results = upTo(step, episode).flatMap((s) => s.results);
    const seats = episode.seats.map((s) => s.seat);
    const totals = seats.map(() => 0);
    const paths = seats.map(() => [[0, 0]]);
    const rows = results.map((r) => {
      (r.payoffs || []).forEach((p, k) => {
        if (k < totals.length) totals[k] += p;
      });
      totals.forEach((t, k) => paths[k].push([r.round, t]));
      return [
        r.round,
        ...seats.map((k) => fmt(r.actions[k])),
        ...seats.map((k) => fmt(r.payoffs ? r.payoffs[k] : null)),
        r.valid ? "yes" : "no",
      ];
    });
    const heads = [
      "Round",
      ...seats.map((k) => `seat ${k} action`),
      ...seats.map((k) => `seat ${k} payoff`),
      "valid",
    ];
    return el(
      "section",
      { class: "game-view rounds-view" },
      el("h2", {}, `Rounds so far (${results.length})`),
      results.length ? table(heads, rows, "round-table") : el("p", { class: "muted" }, "No round has ended yet."),
      el("h3", {}, "Cumulative payoff"),
      table(
        seats.map((k) => `seat ${k}`),
        [totals.map((t, seat) => el("td", { class: `total seat-${seat % 4}` }, fmt(t)))],
        "cumulative",
      ),
      plot(paths, results.length),
    );
  }

  // Each seat's cumulative payoff by round, as one polyline per seat (classes colour them).
  function plot(paths, rounds) {
    const values = paths.flat().map(([, y]) => y);
    const lo = Math.min(0, ...values), hi = Math.max(1, ...values);
    const x = (r) => PAD + ((W - PAD - RIGHT) * r) / Math.max(1, rounds);
    const y = (v) => H - PAD - ((H - 2 * PAD) * (v - lo)) / (hi - lo || 1);
    return svg(
      "svg",
      { class: "payoff-plot", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" },
      svg("title", {}, "cumulative payoff per seat by round"),
      svg("line", { class: "axis", x1: PAD, y1: y(0), x2: x(rounds), y2: y(0) }),
      svg("line", { class: "axis", x1: PAD, y1: PAD, x2: PAD, y2: H - PAD }),
      svg("text", { x: 2, y: y(hi) + 4, class: "tick" }, fmt(hi, 1)),
      svg("text", { x: 2, y: y(lo) + 4, class: "tick" }, fmt(lo, 1)),
      svg("text", { x: x(rounds) - 20, y: H - 6, class: "tick" }, `round ${rounds}`),
      paths.map((points, seat) => [
        svg("polyline", {
          class: `line seat-${seat % 4}`,
          fill: "none",
          points: points.map(([r, v]) => `${x(r)},${y(v)}`).join(" "),
        }),
        svg(
          "text",
          { class: `label seat-${seat % 4}`, x: x(points[points.length - 1][0]) + 3, y: y(points[points.length - 1][1]) },
          `seat ${seat}`,
        ),
      ]),
    );
  }

  window.StratagemViews.rounds = roundsView;
})();
