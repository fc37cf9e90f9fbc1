// stratagem view: MAgIC's social games, Chameleon and Undercover (issue 25 item 3). Up to the
// step shown: the chat in order (moderator messages, clues, votes, guesses; private ones marked),
// and the PGM seats' belief matrices as heat maps with their numbers, the latest by that step.
// In a seat's perspective the data holds only what that seat saw, so the chat is that seat's.
"use strict";

(() => {
  const { el, fmt, table, upTo } = window.StratagemViewKit;
  const SHADES = 10; // heat-0 ... heat-9 in app.css

  // A chat line: any event but a decision whose data carries the text said (games/chat.py).
  function said(event) {
    return event.kind !== "decision" && event.data && typeof event.data.text === "string";
  }

  function speaker(event) {
    const seat = event.data.player ?? event.player;
    return seat === null || seat === undefined ? "Moderator" : `Player ${seat + 1} (seat ${seat})`;
  }

  function chatView(step, episode) {
    const lines = upTo(step, episode).flatMap((s) =>
      s.events.filter(said).map((event) => ({ event, now: s.index === step.index })),
    );
    return el(
      "ol",
      { class: "chat" },
      lines.map(({ event, now }) => {
        const hidden = event.visible_to !== null && event.visible_to !== undefined;
        const to = hidden ? event.visible_to : [];
        return el(
          "li",
          { class: ["chat-line", event.kind, hidden ? "private" : "", now ? "now" : ""].join(" ").trim() },
          el("span", { class: "who" }, speaker(event)),
          el("span", { class: "what" }, event.kind),
          hidden
            ? el("span", { class: "private-mark" }, to.length ? `private to seat ${to.join(", ")}` : "private")
            : null,
          el("span", { class: "text" }, event.data.text),
        );
      }),
    );
  }

  // Belief records (kind "belief") as matrices: one per seat and analysis, row r = the stored
  // content.perspective (how player r sees everyone), column j = how suspicious player j looks.
  function matrices(beliefs) {
    const out = new Map();
    for (const b of beliefs) {
      const c = b.content;
      if (!c || c.kind !== "belief" || !Array.isArray(c.row) || typeof c.perspective !== "number") continue;
      const key = `${b.seat}\u0000${c.analysis}`;
      if (!out.has(key)) out.set(key, { seat: b.seat, analysis: c.analysis, rows: [] });
      out.get(key).rows[c.perspective] = c.row;
    }
    return [...out.values()];
  }

  function shade(v) {
    if (typeof v !== "number" || !Number.isFinite(v)) return "heat-none";
    return `heat-${Math.max(0, Math.min(SHADES - 1, Math.floor(v * SHADES)))}`;
  }

  function heatMap(m) {
    const n = Math.max(m.rows.length, ...m.rows.filter(Boolean).map((r) => r.length));
    const cols = [...Array(n).keys()];
    return el(
      "figure",
      { class: "belief" },
      el("figcaption", {}, `seat ${m.seat} · ${m.analysis ?? ""}`),
      table(
        ["as seen by", ...cols.map((j) => `Player ${j + 1}`)],
        cols.map((r) => [
          r === m.seat ? `Player ${r + 1} (own)` : `Player ${r + 1}`,
          ...cols.map((j) => {
            const v = m.rows[r] ? m.rows[r][j] : undefined;
            return el("td", { class: "cell " + shade(v), title: v === undefined ? "" : String(v) }, fmt(v));
          }),
        ]),
        "heat",
      ),
    );
  }

  function beliefsView(step, episode) {
    const steps = upTo(step, episode).filter((s) => matrices(s.beliefs).length);
    if (!steps.length) return el("p", { class: "muted" }, "No belief recorded yet.");
    const at = steps[steps.length - 1];
    return [
      at.index === step.index ? null : el("p", { class: "muted" }, `As recorded at step ${at.index + 1}.`),
      el("div", { class: "beliefs" }, matrices(at.beliefs).map(heatMap)),
    ];
  }

  function answersView(step) {
    if (!step.answers.length) return null;
    return el(
      "details",
      { class: "answers" },
      el("summary", {}, `Probe answers (${step.answers.length})`),
      table(
        ["Seat", "Question", "Answer", "Correct"],
        step.answers.map((a) => [a.seat, a.question ?? a.question_id, fmt(a.parsed ?? a.answer), fmt(a.correct)]),
      ),
    );
  }

  function socialView(step, episode) {
    return el(
      "section",
      { class: "game-view social-view" },
      el("h2", {}, "Chat so far"),
      chatView(step, episode),
      el("h3", {}, "PGM beliefs"),
      beliefsView(step, episode),
      answersView(step),
    );
  }

  window.StratagemViews.chameleon = socialView;
  window.StratagemViews.undercover = socialView;
})();
