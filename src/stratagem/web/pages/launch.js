// stratagem view: start a game from the viewer (issue 25 item 8, "From the viewer"), registered
// as the "#/launch" route in window.StratagemPages; served only by `stratagem view --play OUT`
// (a link "play a game" appears in the header then). The person picks the game and who sits in
// each seat (the seat strings of `stratagem play --seat`), asks for the plan (what the game will
// call and cost), and starts it; the answer's links, one per human seat, are shown only here.
// A game with no human seat is watched: the page opens its episode, which follows it as it is
// played (a pause of "pace" seconds after each step). A game being played can be abandoned here
// (a seat's page closed for good would hold the launcher until its idle time): its episode is
// left unfinished, and another can start. Every text enters the page as a text node.
"use strict";

window.StratagemPages = window.StratagemPages || {};

window.StratagemPages.launch = (() => {
  const POLL_MS = 2000;

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    const got = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(got.error || response.statusText);
    return got;
  }

  function outerLink(kit, url, cls) {
    const link = kit.el("a", { class: cls }, url);
    link.setAttribute("href", url); // the seat's page: same origin, its token after "#"
    link.setAttribute("rel", "noreferrer");
    return link;
  }

  function ending(last) {
    if (last.running) return "Playing…";
    if (last.result) return `Game over. ${last.result}`;
    return (last.end && last.end.error) || "The game ended.";
  }

  async function page(kit) {
    kit.setCrumbs(); // the header's own link names this page
    if (kit.exported !== null) {
      kit.show(kit.el("h1", {}, "Play a game"), kit.el("p", { class: "muted" }, "A static export plays nothing."));
      return { sources: [], refresh: () => page(kit) };
    }
    const info = await kit.api("/api/play");
    if (!info.enabled) {
      kit.show(kit.el("h1", {}, "Play a game"), kit.el("p", { class: "muted" }, "Start the viewer with --play OUT to play games from it."));
      return { sources: [], refresh: () => page(kit) };
    }
    const by = Object.fromEntries(info.games.map((g) => [g.name, g]));
    const whoList = kit.el("datalist", { id: "launch-who" },
      ["human", ...info.architectures, ...info.strategies, "scripted:"].map((w) => kit.el("option", { value: w })));
    const game = kit.el("select", { name: "game", id: "launch-game" },
      info.games.map((g) => kit.el("option", { value: g.name }, `${g.name} (${g.seats} seats)`)));
    const seats = kit.el("div", { id: "launch-seats" });
    const model = kit.el("input", { name: "model", id: "launch-model", value: info.model, size: 32 });
    const rounds = kit.el("input", { name: "rounds", id: "launch-rounds", type: "number", min: 1, placeholder: "the game's own" });
    const seed = kit.el("input", { name: "seed", id: "launch-seed", type: "number", min: 0, placeholder: "a new one" });
    const pace = kit.el("input", { name: "pace", id: "launch-pace", type: "number", min: 0, step: "any", placeholder: "1" });
    const options = kit.el("input", { name: "set", id: "launch-set", size: 32, placeholder: "magic.probes=false, …" });
    const plan = kit.el("p", { id: "launch-plan", class: "muted" });
    const confirm = kit.el("input", { type: "checkbox", id: "launch-confirm" });
    const confirmRow = kit.el("label", { id: "launch-confirm-row", hidden: true }, confirm, " I agree to pay for these model calls");
    const start = kit.el("button", { type: "button", id: "launch-start", disabled: true }, "Start the game");
    const problem = kit.el("p", { id: "launch-error", class: "error" });
    const started = kit.el("section", { id: "launch-started" });
    let planned = null; // the plan's answer, while the form is unchanged
    let shown = null; // the game started from this page: its episode id

    function drawSeats() {
      const n = (by[game.value] || { seats: 2 }).seats;
      seats.replaceChildren(...Array.from({ length: n }, (_, k) =>
        kit.el("label", { class: "launch-seat" }, `seat ${k} `,
          kit.el("input", { name: `seat-${k}`, value: k === 0 ? "human" : "plain", size: 24 }), " ")));
      for (const input of seats.querySelectorAll("input")) input.setAttribute("list", "launch-who");
    }

    function request() {
      const number = (input) => (input.value.trim() === "" ? null : Number(input.value));
      return {
        game: game.value,
        seats: Array.from(seats.querySelectorAll("input"), (i) => i.value.trim()),
        model: model.value.trim(),
        rounds: number(rounds),
        seed: number(seed),
        pace: number(pace),
        set: options.value.split(",").map((s) => s.trim()).filter((s) => s),
      };
    }

    function changed() {
      planned = null;
      plan.textContent = "";
      start.disabled = true;
      confirmRow.hidden = true;
      confirm.checked = false;
    }

    function edited(e) {
      if (e.target !== confirm) changed(); // ticking the box keeps the plan
    }

    async function showPlan(e) {
      e.preventDefault();
      problem.textContent = "";
      try {
        planned = await post("/api/play/plan", request());
      } catch (error) {
        changed();
        problem.textContent = error.message;
        return;
      }
      plan.textContent = `Plan: ${planned.plan}` + (planned.paid.length ? ` (paid models: ${planned.paid.join(", ")})` : "");
      confirmRow.hidden = !planned.paid.length;
      start.disabled = false;
    }

    async function go() {
      if (!planned) return;
      if (planned.paid.length && !confirm.checked) {
        problem.textContent = "This game calls paid models: tick the box to agree to pay for them.";
        return;
      }
      problem.textContent = "";
      start.disabled = true;
      const body = { ...request(), seed: planned.seed, confirm: planned.paid.length > 0 && confirm.checked };
      let got;
      try {
        got = await post("/api/play", body);
      } catch (error) {
        problem.textContent = error.message;
        start.disabled = false;
        await offerAbandon();
        return;
      }
      shown = got.episode.id;
      const links = Object.entries(got.links).map(([k, url]) =>
        kit.el("li", {}, `seat ${k}: `, outerLink(kit, url, "seat-link")));
      const watched = got.humans.length === 0;
      started.replaceChildren(
        kit.el("h2", {}, `${got.game}, seed ${got.seed}`),
        kit.el("p", { class: "muted" }, `Plan: ${got.plan}`),
        ...(watched
          ? [kit.el("p", {}, `No seat is played by a person: the game plays itself, a pause of ${got.pace} s after each step.`)]
          : [kit.el("p", {}, "Each human seat has its own link; open yours, and send each other person theirs:"),
             kit.el("ul", { id: "launch-links" }, links)]),
        episodeLink(got),
        statusLine(got),
      );
      changed();
      // Watched: its episode page, which follows the game as it is played.
      if (watched && got.episode.source !== null) location.hash = kit.route(["e", got.episode.source, got.episode.id]);
    }

    // A start refused because a game is being played: that game, with its button, in view.
    async function offerAbandon() {
      const now = await kit.api("/api/play").catch(() => ({}));
      if (!now.last || !now.last.running || document.getElementById("launch-abandon")) return;
      shown = now.last.episode.id;
      started.replaceChildren(
        kit.el("h2", {}, `Being played: ${now.last.game}, seed ${now.last.seed}`),
        episodeLink(now.last),
        statusLine(now.last),
      );
    }

    function episodeLink(last) {
      if (last.episode.source === null) return kit.el("p", { class: "muted" }, `episode ${last.episode.id}`);
      return kit.el("p", {}, kit.el("a", { href: ["e", last.episode.source, last.episode.id], id: "launch-episode" }, "the episode in the viewer"));
    }

    // The game's state, and while it is played a button to abandon it.
    function statusLine(last) {
      const line = kit.el("p", { id: "launch-state" }, kit.el("span", { id: "launch-status" }, ending(last)));
      if (last.running) {
        const button = kit.el("button", { type: "button", id: "launch-abandon" }, "Abandon this game");
        button.addEventListener("click", () => abandon(last.episode.id, button));
        line.append(" ", button);
      }
      return line;
    }

    function showStatus(last) {
      const state = document.getElementById("launch-state");
      if (state && last.episode.id === shown) state.replaceWith(statusLine(last));
    }

    async function abandon(id, button) {
      button.disabled = true;
      try {
        showStatus(await post("/api/play/abandon", { episode: id }));
        problem.textContent = "";
      } catch (error) {
        problem.textContent = error.message;
        button.disabled = false;
      }
    }

    async function poll() {
      if (shown === null) return;
      try {
        const now = await kit.api("/api/play");
        const status = document.getElementById("launch-status");
        if (now.last && status && status.textContent !== ending(now.last)) showStatus(now.last);
      } catch (error) {
        // The server stopped: keep the page.
      }
    }

    game.addEventListener("change", drawSeats);
    drawSeats();
    const form = kit.el("form", { class: "launch-form", id: "launch-form", on: { submit: showPlan, input: edited, change: edited } },
      kit.el("p", {}, kit.el("label", {}, "Game ", game)),
      seats,
      whoList,
      kit.el("p", { class: "muted" }, "Each seat: human, an architecture (plain, or plain@provider/model), a strategy, or scripted:<actions>. With no human seat you watch the game, at the pace chosen (seconds after each step)."),
      kit.el("p", {}, kit.el("label", {}, "Model ", model), " ", kit.el("label", {}, "Rounds ", rounds), " ", kit.el("label", {}, "Seed ", seed), " ", kit.el("label", {}, "Pace ", pace)),
      kit.el("p", {}, kit.el("label", {}, "Options ", options)),
      kit.el("p", {}, kit.el("button", { type: "submit", id: "launch-plan-button" }, "Show the plan"), " ", start),
      plan,
      confirmRow,
      problem,
    );
    start.addEventListener("click", go);
    const nodes = [
      kit.el("h1", {}, "Play a game"),
      kit.el("p", { class: "muted" }, `Played into ${info.out}, stored like any other episode.`),
      form,
      started,
    ];
    if (info.last) {
      // The last game started here (its seats' links went to whoever started it).
      shown = info.last.episode.id;
      started.append(
        kit.el("h2", {}, `The last game: ${info.last.game}, seed ${info.last.seed}`),
        episodeLink(info.last),
        statusLine(info.last),
      );
    }
    kit.show(...nodes);
    const timer = setInterval(poll, POLL_MS);
    return { sources: [], refresh: () => {}, stop: () => clearInterval(timer) };
  }

  // The header's link, only where the server plays games (`--play`).
  if (window.StratagemSource && window.StratagemSource.exported === null) {
    fetch("/api/play", { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : {}))
      .then((got) => {
        if (!got.enabled) return;
        const link = document.createElement("a");
        link.id = "launch-link";
        link.className = "launch-link";
        link.setAttribute("href", "#/launch");
        link.textContent = "play a game";
        document.querySelector("header").append(link);
      })
      .catch(() => {});
  }

  return (kit) => page(kit);
})();
