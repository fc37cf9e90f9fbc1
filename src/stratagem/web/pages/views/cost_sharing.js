// stratagem view: MAgIC's Cost Sharing (games/magic/cost_sharing.py, seed-004 §3.3; issue 25 item 3).
// Up to the step shown, per negotiation round: each seat's proposal as shares per airline (the
// "a/b/c" action, in party order) and the seat it voted for; proposals and votes are public
// (§2). The outcome record (success, agreed proposal, shares) is kept from the seats, so it is
// drawn only where the step's data holds it.
"use strict";

(() => {
  const { el, fmt, table, eventsUpTo } = window.StratagemViewKit;
  const PARTIES = ["Airline A", "Airline B", "Airline C"]; // seed-004 §3.3 (games/magic/cost_sharing.py)

  const shares = (proposal) => (typeof proposal === "string" ? proposal.split("/") : []);
  const party = (k) => PARTIES[k] || `party ${k + 1}`;
  const player = (seat) => (typeof seat === "number" ? `Player ${seat + 1} (seat ${seat})` : "abstained");

  function costSharingView(step, episode) {
    const byRound = new Map();
    for (const e of eventsUpTo(step, episode, "proposal", "vote")) {
      const d = e.data || {};
      if (!byRound.has(d.round)) byRound.set(d.round, new Map());
      const row = byRound.get(d.round).get(d.player) || {};
      if (e.kind === "proposal") row.proposal = d.proposal;
      else row.vote = d.vote;
      byRound.get(d.round).set(d.player, row);
    }
    const width = Math.max(PARTIES.length, ...[...byRound.values()].flatMap((m) => [...m.values()].map((r) => shares(r.proposal).length)));
    const parties = [...Array(width).keys()];
    const rows = [...byRound.entries()].flatMap(([round, seats]) =>
      [...seats.entries()].sort(([a], [b]) => a - b).map(([seat, r]) => [
        round,
        player(seat),
        ...parties.map((k) => (r.proposal == null ? "—" : fmt(shares(r.proposal)[k]))),
        "vote" in r ? player(r.vote) : "not yet",
      ]),
    );
    const [outcome] = eventsUpTo(step, episode, "outcome").slice(-1);
    return el(
      "section",
      { class: "game-view cost-sharing-view" },
      el("h2", {}, "Proposals and votes"),
      rows.length
        ? table(["Round", "Seat", ...parties.map((k) => `${party(k)} pays %`), "Voted for"], rows, "proposals")
        : el("p", { class: "muted" }, "No proposal yet."),
      outcome ? outcomeView(outcome.data || {}) : null,
    );
  }

  function outcomeView(d) {
    return el(
      "p",
      { class: "outcome" },
      (d.success ? "Agreed" : "No agreement") +
        ` after ${fmt(d.rounds)} rounds` +
        (d.agreed_with == null ? "" : ` on ${player(d.agreed_with)}'s proposal`) +
        (d.shares ? `; shares ${d.shares.map((s, k) => `${party(k)} ${fmt(s)}`).join(", ")}` : ""),
    );
  }

  window.StratagemViews["cost-sharing"] = costSharingView;
})();
