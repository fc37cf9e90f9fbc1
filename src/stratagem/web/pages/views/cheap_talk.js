// stratagem view: cheap talk (games/matrix/cheap_talk.py; issue 25 item 3). Up to the step shown: each
// round's messages (the public "messages" event, sent before the round's moves) beside the moves
// that followed (the round records), then the round table and cumulative payoffs of the
// "rounds" view. Messages are text nodes: a model's words never become markup.
"use strict";

(() => {
  const { el, fmt, table, eventsUpTo, upTo } = window.StratagemViewKit;

  function talkView(step, episode) {
    const said = new Map(eventsUpTo(step, episode, "messages").map((e) => [e.data.round, e.data.messages || []]));
    const played = new Map(upTo(step, episode).flatMap((s) => s.results).map((r) => [r.round, r.actions]));
    const rounds = [...new Set([...said.keys(), ...played.keys()])].sort((a, b) => a - b);
    const seats = episode.seats.map((s) => s.seat);
    const rows = rounds.map((t) => [
      t,
      ...seats.map((k) => el("td", { class: "message" }, said.has(t) ? fmt(said.get(t)[k]) : "—")),
      ...seats.map((k) => (played.has(t) ? fmt(played.get(t)[k]) : "not yet")),
    ]);
    const rest = window.StratagemViews.rounds;
    return el(
      "section",
      { class: "game-view cheap-talk-view" },
      el("h2", {}, "Messages and the moves that followed"),
      rows.length
        ? table(["Round", ...seats.map((k) => `seat ${k} said`), ...seats.map((k) => `seat ${k} played`)], rows, "talk")
        : el("p", { class: "muted" }, "No message yet."),
      rest ? rest(step, episode) : null,
    );
  }

  // The catalog's cheap-talk game ("dilemma-talk") and its family's name.
  window.StratagemViews["dilemma-talk"] = talkView;
  window.StratagemViews["cheap-talk"] = talkView;
})();
