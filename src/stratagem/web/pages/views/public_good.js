// stratagem view: Public Good games (games/magic/public_good.py: MAgIC's moderated game of seed-004
// §3.5 and the plain one; issue 25 item 3). Up to the step shown: each round's contributions per
// seat (the public "contributions" event, so a round's moves appear once the round is over),
// each seat's total, the pot so far, and, once the game is over, the payout (pool, share,
// payoffs). Only these two public kinds are read, never the hidden moves.
"use strict";

(() => {
  const { el, fmt, table, eventsUpTo, bar } = window.StratagemViewKit;

  function publicGoodView(step, episode) {
    const rounds = eventsUpTo(step, episode, "contributions").map((e) => ({
      round: e.data.round,
      paid: Array.isArray(e.data.contributions) ? e.data.contributions : [],
    }));
    const [payout] = eventsUpTo(step, episode, "payout").slice(-1);
    const seats = episode.seats.map((s) => s.seat);
    const totals = seats.map((k) => rounds.reduce((sum, r) => sum + (r.paid[k] || 0), 0));
    const pot = totals.reduce((a, b) => a + b, 0);
    const most = Math.max(1, ...totals);
    return el(
      "section",
      { class: "game-view public-good-view" },
      el("h2", {}, `Contributions so far (${rounds.length} rounds)`),
      rounds.length
        ? table(
            ["Round", ...seats.map((k) => `seat ${k}`), "round total"],
            rounds.map((r) => [r.round, ...seats.map((k) => fmt(r.paid[k])), fmt(r.paid.reduce((a, b) => a + b, 0))]),
            "contributions",
          )
        : el("p", { class: "muted" }, "No round has ended yet."),
      el("h3", {}, `Pot so far: ${fmt(pot)}`),
      table(
        ["Seat", "contributed", ""],
        seats.map((k) => [`seat ${k}`, fmt(totals[k]), el("td", {}, bar(totals[k], most, `seat-${k % 4}`))]),
        "totals",
      ),
      payout
        ? el(
            "p",
            { class: "payout" },
            `Payout: pool ${fmt(payout.data.pool)}, share ${fmt(payout.data.share)} each; payoffs ` +
              (payout.data.payoffs || []).map((p) => fmt(p)).join(" / "),
          )
        : null,
    );
  }

  window.StratagemViews["public-good"] = publicGoodView;
})();
