// stratagem view: the Ultimatum game (games/ultimatum.py; issue 25 item 3). Up to the step shown:
// the offer (what the responder, seat 1, would get and the proposer, seat 0, would keep), the
// response or forfeit, and the split as paid, with a bar of the pie. Both events are public.
"use strict";

(() => {
  const { el, fmt, table, eventsUpTo, bar } = window.StratagemViewKit;

  function ultimatumView(step, episode) {
    const [offer] = eventsUpTo(step, episode, "offer").slice(-1);
    const [reply] = eventsUpTo(step, episode, "response", "forfeit").slice(-1);
    const o = offer ? offer.data : null;
    const pie = o ? o.offer + o.proposer_keeps : null;
    const response = !reply
      ? "not yet"
      : reply.kind === "forfeit"
        ? `forfeited by seat ${reply.data.player}`
        : reply.data.response;
    const paid = reply && reply.data.payoffs;
    return el(
      "section",
      { class: "game-view ultimatum-view" },
      el("h2", {}, "Offer and response"),
      table(
        ["Pie", "Offer to seat 1", "Seat 0 keeps", "Response", "Seat 0 gets", "Seat 1 gets"],
        [[
          fmt(pie),
          o ? fmt(o.offer) : "not yet",
          o ? fmt(o.proposer_keeps) : "—",
          response,
          paid ? fmt(paid[0]) : "—",
          paid ? fmt(paid[1]) : "—",
        ]],
        "ultimatum",
      ),
      o ? el("p", { class: "split" }, "share offered to seat 1: ", bar(o.offer, pie, "offer")) : null,
    );
  }

  window.StratagemViews.ultimatum = ultimatumView;
})();
