// stratagem play: one seat's page (issue 25 item 8). The seat's token is the part of the link
// after "#": it is sent only in a header of this page's API requests (never in a URL, so no log
// or history holds it). The page shows what the seat was told (the same lines the terminal
// prints), and draws the move asked for as controls (play-forms.js) that compose the line a
// person would type; the server's player reads it and the engine validates it. A line is sent
// once: the controls are off from the click until the server asks again, and the request names
// the turn shown, so a retry or a second tab cannot play a round the person has not seen (the
// server refuses it, 409). Every text enters the page as a text node.
"use strict";

(() => {
  const WAIT_S = 20;
  const FORMS = window.StratagemPlayForms;
  const { el } = window.StratagemPlayKit; // play-forms.js: text-only DOM building
  const token = location.hash.slice(1);
  const told = document.getElementById("told");
  const movePane = document.getElementById("move");
  const status = document.getElementById("status");
  const who = document.getElementById("who");
  let next = 0;
  let shownTurn = null;
  let shownAsk = null; // which ask of the server the controls answer (a re-ask is a new one)
  let sentAsk = null; // the ask a line was sent for: controls stay off until the next
  let sending = false; // a move's POST in flight
  let controls = null; // {node, enable(on)}
  let latest = null; // the last state polled, drawn again when a POST ends
  const SEAT = { "x-stratagem-seat": token }; // the token's one way to the server
  // What a move's controls ask, in words; a text move shows the prompt the terminal prints (it
  // states the format and the limit).
  const ASKS = {
    choice: "Your move: choose one.",
    integer: "Your move: a whole number.",
    shares: "Your move: propose the shares.",
    proposal: "Your move: propose a trade, or nothing.",
    decision: "Your move: accept or reject the proposal.",
    craft: "Your move: craft (check a recipe, apply it, and so on), then done.",
  };

  function say(text, cls) {
    status.className = cls || "muted";
    status.textContent = text;
  }

  function addLines(state) {
    if (state.first > next) {
      told.append(el("p", { class: "line gap" }, `(${state.first - next} earlier lines dropped)`));
    }
    for (const text of state.messages) {
      const refused = text.startsWith("not a legal move:");
      told.append(el("p", { class: refused ? "line refused" : "line" }, text));
    }
    if (state.messages.length) told.scrollTop = told.scrollHeight;
    next = state.next;
  }

  async function send(line) {
    if (sending || shownAsk === sentAsk) return; // one line per ask: a second click is dropped
    sending = true;
    const ask = shownAsk;
    if (controls) controls.enable(false);
    say("Sent; waiting for the game…");
    try {
      const response = await fetch("api/seat", {
        method: "POST",
        headers: { ...SEAT, "content-type": "application/json" },
        body: JSON.stringify({ line, turn: shownTurn }),
        credentials: "same-origin",
      });
      if (response.ok) {
        sentAsk = ask;
        sending = false;
        if (latest && !latest.end) drawMove(latest); // an ask that came while the POST was out
      } else {
        const body = await response.json().catch(() => ({}));
        say(body.error || `the move was refused (${response.status})`, "error");
        if (controls && response.status !== 409) controls.enable(true);
      }
    } catch (exc) {
      say("the server cannot be reached; try again", "error");
      if (controls) controls.enable(true);
    } finally {
      sending = false;
    }
  }

  function drawMove(state) {
    const move = state.move;
    if (!move) {
      if (controls) controls.enable(false);
      if (!state.end) say("Waiting for the other players…");
      return;
    }
    shownAsk = move.ask;
    if (move.turn !== shownTurn) {
      shownTurn = move.turn;
      movePane.dataset.turn = String(move.turn); // which move this is (tests wait on it)
      const build = FORMS[move.form.kind] || FORMS.text;
      controls = build(move.form, send);
      const ask = ASKS[move.form.kind] || move.prompt;
      movePane.replaceChildren(el("div", { class: "prompt" }, ask), controls.node);
    }
    if (sending || move.ask === sentAsk) {
      controls.enable(false); // sent: wait for the server to ask again
      return;
    }
    controls.enable(true);
    say("Your move.", "your-move");
  }

  // The end: the result in this seat's words, and where to replay the game (a link where the
  // server is the viewer too, else the command that opens it).
  function drawEnd(end) {
    movePane.replaceChildren();
    controls = null;
    if (end.error) say(end.error, "error end");
    else say(`Game over. ${end.result}`, "end");
    if (end.replay) {
      const link = el("a", { id: "replay" }, "Replay the game in the viewer");
      link.setAttribute("href", end.replay);
      movePane.append(el("p", {}, link));
    } else if (end.command) {
      movePane.append(el("p", { id: "replay" }, "Replay the game: ", el("code", {}, end.command)));
    }
  }

  async function poll() {
    if (!token) {
      say("This page needs the link printed for your seat (it ends with #…).", "error");
      return;
    }
    for (;;) {
      let state;
      try {
        const url = `api/seat?after=${next}&wait=${WAIT_S}`;
        const asked = { headers: SEAT, credentials: "same-origin", cache: "no-store" };
        const response = await fetch(url, asked);
        if (response.status === 404) {
          say("No such seat: the game is over or the link is wrong.", "error");
          return;
        }
        if (!response.ok) throw new Error(String(response.status));
        state = await response.json();
      } catch (exc) {
        say("The server cannot be reached; retrying…", "error");
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      who.textContent = `— ${state.game}, seat ${state.seat} (${state.name})`;
      addLines(state);
      latest = state;
      if (state.end) {
        drawEnd(state.end);
        return;
      }
      drawMove(state);
    }
  }

  window.addEventListener("hashchange", () => location.reload());
  poll();
})();
