// stratagem view: TradeCraft (seed-002, games/tradecraft/game.py; issue 25 item 3). Up to the step
// shown: both hands (the latest public "hands" event), each seat's target where the step's data
// holds it (a private moderator line), the proposals with their replies, the crafts, the outcome
// record, and the ToM seats' V0/V1/V2 reports (beliefs of order 0, 1, 2, agents/tom/player.py)
// as bars per item. In a seat's perspective the data lacks the other seat's target, crafts and
// reports, so nothing of them is drawn.
"use strict";

(() => {
  const { el, fmt, table, eventsUpTo, upTo, bar } = window.StratagemViewKit;
  const SCORE_MAX = 10; // seed-002 §3.2: reports score each item 0..10
  const TARGET = "Your target is to craft "; // the private moderator line of games/tradecraft/game.py

  const item = (name) => String(name).replace(/^minecraft:/, "");
  const items = (counts) =>
    Object.entries(counts || {}).map(([name, n]) => `${fmt(n)} ${item(name)}`).join(", ") || "nothing";

  // A craft as the engine stores it ({input, output}, tradecraft_actions.Craft); else as is.
  const craft = (c) => (c && typeof c === "object" && c.input ? `${items(c.input)} → ${items(c.output)}` : fmt(c));

  function handsView(step, episode) {
    const hands = eventsUpTo(step, episode, "hands");
    if (!hands.length) return el("p", { class: "muted" }, "No hands recorded yet.");
    const latest = hands[hands.length - 1].data.hands || [];
    const targets = new Map();
    for (const e of eventsUpTo(step, episode, "moderator")) {
      const text = e.data && e.data.text;
      const to = e.visible_to;
      if (typeof text === "string" && text.startsWith(TARGET) && to && to.length === 1) {
        targets.set(to[0], text.slice(TARGET.length).replace(/\.$/, ""));
      }
    }
    return el(
      "div",
      { class: "hands" },
      latest.map((hand, seat) =>
        el(
          "figure",
          { class: `hand seat-${seat % 4}` },
          el("figcaption", {}, `seat ${seat} hand`),
          targets.has(seat) ? el("p", { class: "target" }, `target: ${targets.get(seat)}`) : null,
          el(
            "ul",
            { class: "items" },
            Object.entries(hand).map(([name, n]) =>
              el("li", {}, el("span", { class: "count" }, fmt(n)), " ", el("span", { class: "item" }, item(name))),
            ),
          ),
        ),
      ),
    );
  }

  // One row per proposal: who to whom, what for what, the message, and the reply if made.
  function tradesView(step, episode) {
    const rows = [];
    for (const e of eventsUpTo(step, episode, "proposal", "reply")) {
      const d = e.data || {};
      if (e.kind === "proposal") {
        rows.push([d.round, `seat ${d.player} → seat ${d.partner}`, items(d.offer), items(d.request), d.message || "", "—", ""]);
      } else if (rows.length) {
        const row = rows[rows.length - 1];
        row[5] = d.accept ? "accepted" : "rejected";
        row[6] = d.message || "";
      }
    }
    // A rejection is broadcast without its proposal (§2.5): shown where the proposal is not.
    const seen = new Set(rows.map((r) => r[0]));
    for (const e of eventsUpTo(step, episode, "proposal_rejected")) {
      if (!seen.has(e.data.round)) rows.push([e.data.round, `seat ${e.data.proposer}`, "(not seen)", "(not seen)", "", "rejected", ""]);
    }
    if (!rows.length) return el("p", { class: "muted" }, "No proposal yet.");
    return table(["Turn", "Proposal", "Gives", "Wants", "Message", "Reply", "Reply message"], rows, "trades");
  }

  function craftsView(step, episode) {
    const crafts = eventsUpTo(step, episode, "craft");
    if (!crafts.length) return el("p", { class: "muted" }, "No crafts seen yet.");
    return table(
      ["Turn", "Seat", "Crafts", "Lost when floored"],
      crafts.map((e) => [
        e.data.round,
        e.data.player,
        (e.data.crafts || []).length ? e.data.crafts.map(craft).join("; ") : "none",
        Object.keys(e.data.floored_away || {}).length ? items(e.data.floored_away) : "",
      ]),
      "crafts",
    );
  }

  function outcomeView(step, episode) {
    const [outcome] = eventsUpTo(step, episode, "outcome").slice(-1);
    if (!outcome) return null;
    const d = outcome.data || {};
    return el(
      "p",
      { class: "outcome" },
      `Outcome: ${d.outcome}` +
        (d.winners && d.winners.length ? `, won by seat ${d.winners.join(" and ")}` : "") +
        (d.payoffs ? `; payoffs ${d.payoffs.map((p) => fmt(p)).join(" / ")}` : "") +
        (d.targets ? `; targets ${d.targets.map(items).join(" / ")}` : ""),
    );
  }

  // Each seat's latest report of each order by the step: {seat: {order: belief}}.
  function latestReports(step, episode) {
    const out = new Map();
    for (const s of upTo(step, episode)) {
      for (const b of s.beliefs) {
        const c = b.content;
        if (!c || typeof c.values !== "object" || c.values === null) continue;
        if (!out.has(b.seat)) out.set(b.seat, new Map());
        out.get(b.seat).set(b.order, b);
      }
    }
    return out;
  }

  function reportsView(step, episode) {
    const reports = latestReports(step, episode);
    if (!reports.size) return el("p", { class: "muted" }, "No V0/V1/V2 report recorded yet.");
    return el(
      "div",
      { class: "reports" },
      [...reports.entries()].sort(([a], [b]) => a - b).map(([seat, byOrder]) => {
        const orders = [...byOrder.keys()].sort();
        const names = [...new Set(orders.flatMap((k) => Object.keys(byOrder.get(k).content.values)))].sort();
        const when = byOrder.get(orders[orders.length - 1]).content;
        return el(
          "figure",
          { class: "report" },
          el("figcaption", {}, `seat ${seat} · turn ${fmt(when.turn)} ${when.phase || ""}`.trim()),
          table(
            ["Item", ...orders.map((k) => `V${k}`)],
            names.map((name) => [
              item(name),
              ...orders.map((k) => {
                const v = byOrder.get(k).content.values[name];
                return el("td", { class: `score v${k}` }, bar(v, SCORE_MAX, `v${k}`), " ", el("span", { class: "value" }, fmt(v)));
              }),
            ]),
            "report-table",
          ),
        );
      }),
    );
  }

  function tradecraftView(step, episode) {
    return el(
      "section",
      { class: "game-view tradecraft-view" },
      el("h2", {}, "Hands"),
      handsView(step, episode),
      outcomeView(step, episode),
      el("h3", {}, "Proposals and replies"),
      tradesView(step, episode),
      el("h3", {}, "Crafts"),
      craftsView(step, episode),
      el("h3", {}, "Valuation reports (V0 own, V1 and V2 about the other seat)"),
      reportsView(step, episode),
    );
  }

  window.StratagemViews.tradecraft = tradecraftView;
})();
