// stratagem view: a single-page app over the JSON API of `stratagem view` (issue 25).
// Every stored text (models, people, servers) enters the page as a text node (append of a
// string, textContent): no HTML is ever parsed from data. Links are in-page routes ("#/...").
"use strict";

(() => {
  const POLL_MS = 2000;
  const main = document.getElementById("main");
  const crumbs = document.getElementById("crumbs");
  // Game-specific step views (views/*.js, and plugins' views, which index.html loads before this
  // file) register here by game name or family ("chameleon" for "chameleon/0", a plugin's
  // "highcard:high-card"), or as "rounds" for any game that stores round results; the generic
  // view is always drawn below, so a game without a view of its own still shows.
  const GAME_VIEWS = window.StratagemViews || {};
  let current = null; // the page shown: {refresh(), sources: [ids], stop()}
  let versions = {};

  // ---- DOM helpers: text only --------------------------------------------------------------
  function el(tag, props, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else if (key === "on") {
        for (const [event, fn] of Object.entries(value)) node.addEventListener(event, fn);
      } else if (key === "href") node.setAttribute("href", route(value));
      else node[key] = value; // DOM properties (value, type, checked, title...), never innerHTML
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid !== null && kid !== undefined) node.append(kid instanceof Node ? kid : String(kid));
    }
    return node;
  }

  // An in-page link from route parts: always "#/...", each part URI-encoded.
  function route(parts) {
    const [path, query] = Array.isArray(parts) ? [parts, null] : [parts.path, parts.query];
    let text = "#/" + path.map((p) => encodeURIComponent(String(p))).join("/");
    const q = query ? new URLSearchParams(query).toString() : "";
    return q ? text + "?" + q : text;
  }

  function parseRoute() {
    const hash = location.hash.replace(/^#\/?/, "");
    const [path, query] = hash.split("?", 2);
    const parts = path ? path.split("/").map(decodeURIComponent) : [];
    return { parts, query: new URLSearchParams(query || "") };
  }

  function fmt(value, digits = 3) {
    if (value === null || value === undefined) return "—";
    if (typeof value === "number") {
      if (Number.isInteger(value)) return String(value);
      // A number toFixed would show as 0.000 keeps its significant digits (issue 36 item 5).
      return Math.abs(value) >= 10 ** -digits ? value.toFixed(digits) : String(Number(value.toPrecision(digits)));
    }
    if (Array.isArray(value)) return value.map((v) => fmt(v, digits)).join(", ");
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  // Episodes by status, the empty ones left out: "finished 9, running 1".
  function counts(byStatus) {
    const shown = Object.entries(byStatus || {}).filter(([, n]) => n);
    return shown.length ? shown.map(([k, n]) => `${k} ${n}`).join(", ") : "none";
  }

  // Dollars to the cent, or to 3 significant digits under a dollar: $0.000312, never $0.0003.
  function money(value) {
    if (value === null || value === undefined) return "—";
    const n = Number(value);
    const digits = Math.abs(n) >= 1 ? { minimumFractionDigits: 2, maximumFractionDigits: 2 } : { maximumSignificantDigits: 3 };
    return "$" + n.toLocaleString("en-US", digits);
  }

  function table(headers, rows) {
    return el(
      "table",
      {},
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c) => el("td", {}, c))))),
    );
  }

  // Any stored value as nested key/values, so any game's events show without new code.
  function value(v) {
    if (v === null || v === undefined) return el("span", { class: "muted" }, "—");
    if (Array.isArray(v)) {
      if (v.every((x) => x === null || typeof x !== "object")) return el("span", {}, fmt(v));
      return el("ol", { class: "kv" }, v.map((x) => el("li", {}, value(x))));
    }
    if (typeof v === "object") {
      return el(
        "dl",
        { class: "kv" },
        Object.entries(v).map(([k, x]) => [el("dt", {}, k), el("dd", {}, value(x))]),
      );
    }
    if (typeof v === "string" && v.includes("\n")) return el("pre", {}, v);
    return el("span", {}, fmt(v));
  }

  // Where the pages' data comes from (the API, or an export's files), and an id in an API path.
  const { api, exported, id: pathId, ref } = window.StratagemSource;

  function show(...nodes) { // a part a page leaves out (null) is left out, not shown as "null"
    main.replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined));
  }

  function failed(error) {
    show(el("p", { class: "error" }, "Error: " + error.message));
  }

  function setCrumbs(...items) {
    crumbs.replaceChildren(...items.flatMap((item) => [" › ", item]));
  }

  // ---- experiments list --------------------------------------------------------------------
  async function experimentsPage() {
    setCrumbs();
    const [sources, experiments] = await Promise.all([
      api("/api/sources"),
      api("/api/experiments"),
    ]);
    const paths = Object.fromEntries(sources.map((s) => [s.id, s.path]));
    show(
      el("h1", {}, "Experiments"),
      experiments.length > 1 ? el("p", {}, el("a", { href: ["diff"], class: "diff-link" }, "diff two experiments…")) : null,
      experiments.length === 0
        ? el("p", { class: "muted" }, "No experiments in these results directories.")
        : table(
            ["Results", "Experiment", "Games", "Models", "Episodes", "Calls", "Tokens", "Cost"],
            experiments.map((x) => [
              paths[x.source] ?? x.source,
              el("a", { href: ["x", x.source, x.id] }, x.name || x.id),
              fmt(x.games),
              fmt(x.models),
              counts(x.status),
              fmt(x.calls),
              fmt(x.tokens),
              money(x.cost_usd),
            ]),
          ),
    );
    return { sources: sources.map((s) => s.id), refresh: experimentsPage };
  }

  // The study sections of the experiment's HTML report (`stratagem report` wrote it), as links.
  function reportLinks(report) {
    const link = (hash, text) => {
      const a = el("a", {}, text);
      a.setAttribute("href", report.url + hash); // a file of the site, not an in-page route
      return a;
    };
    const parts = report.sections.map((s) => [" · ", link("#" + encodeURIComponent(s.id), s.title)]);
    return el("p", { class: "report-links" }, link("", "HTML report"), parts);
  }

  // ---- one experiment: cells, episodes with filters, search and paging --------------------
  const FILTERS = ["game", "model", "agent", "seat_kind", "status", "outcome"];
  const STATUSES = ["", "pending", "running", "finished", "failed"];

  async function experimentPage(source, experiment, query) {
    setCrumbs(el("a", { href: ["x", source, experiment] }, experiment));
    const params = Object.fromEntries(query.entries());
    const base = `/api/experiments/${encodeURIComponent(source)}/${pathId(experiment)}`;
    // The cells counted over the episodes the list's filters keep (cells.js), and all of them
    // for the filters' choices.
    const counting = window.StratagemCells.countedBy(params);
    const [cells, counted, episodes, all] = await Promise.all([
      api(base + "/cells"),
      Object.keys(counting).length ? api(base + "/cells", counting) : null,
      api(base + "/episodes", params),
      api("/api/experiments"),
    ]);
    const report = (all.find((x) => x.source === source && x.id === experiment) || {}).report;
    const choices = (key) => [...new Set(cells.map((c) => c[key]).filter((v) => v != null))];
    const inputs = {};
    const select = (key, options) => {
      inputs[key] = el("select", { name: key }, options.map((o) => el("option", { value: o }, o || "any")));
      inputs[key].value = params[key] || "";
      return el("label", {}, key.replace("_", " ") + " ", inputs[key]);
    };
    inputs.seat_kind = el("input", { name: "seat_kind", value: params.seat_kind || "", size: 8 });
    inputs.invalid = el("input", { type: "checkbox", checked: params.invalid === "1" });
    inputs.q = el("input", { type: "search", value: params.q || "", placeholder: "search replies and messages" });
    const go = (page) => {
      const next = { page: String(page) };
      for (const key of FILTERS) if (inputs[key].value) next[key] = inputs[key].value;
      if (inputs.invalid.checked) next.invalid = "1";
      if (inputs.q.value) next.q = inputs.q.value;
      if (params.group) next.group = params.group; // a leaderboard row's episodes (analysis.js)
      if (params.cell) next.cell = params.cell; // a cell's episodes (cells.js)
      location.hash = route({ path: ["x", source, experiment], query: next });
    };
    // The outcomes that apply to the cells' games (web.data.applies: no "spy won" in a PD).
    const byLength = (a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
    const seatsWon = (o) => o.startsWith("seat ");
    const offered = [...new Set(cells.flatMap((c) => c.outcomes || []))];
    const outcomes = [...offered.filter(seatsWon).sort(byLength), ...offered.filter((o) => !seatsWon(o))];
    const form = el(
      "form",
      { class: "filters", on: { submit: (e) => { e.preventDefault(); go(0); } } },
      select("game", ["", ...choices("game")]),
      select("model", ["", ...choices("model")]),
      select("agent", ["", ...choices("agent")]),
      el("label", {}, "seat kind ", inputs.seat_kind),
      select("status", STATUSES),
      select("outcome", ["", ...outcomes]),
      el("label", {}, inputs.invalid, " invalid > 0"),
      inputs.q,
      el("button", { type: "submit" }, "Apply"),
    );
    const pages = Math.max(1, Math.ceil(episodes.total / episodes.per_page));
    const page = episodes.page;
    show(
      el("h1", {}, experiment),
      ANALYSIS.part(compareKit, source, experiment, params.group),
      window.StratagemCharts.part(compareKit, source, experiment),
      el("h2", {}, "Cells"),
      report ? reportLinks(report) : null,
      window.StratagemCells.part(compareKit, source, experiment, counted || cells, params),
      el("h2", {}, `Episodes (${episodes.total})`),
      params.group ? ANALYSIS.groupNote(compareKit, source, experiment, params.group) : null,
      form,
      window.StratagemCells.listDownload(compareKit, source, experiment, params),
      table(
        ["Episode", "Game", "Model", "Agent", "Seats", "Status", "Payoffs", "Invalid"],
        episodes.items.map((e) => [
          el("a", { href: LINKS.episodeLink(source, e.id, experiment, params.q) }, e.id),
          e.game, e.model, e.agent, fmt(e.seats), e.status, fmt(e.payoffs), fmt(e.invalid),
        ]),
      ),
      el(
        "p",
        { class: "pager" },
        el("button", { disabled: page <= 0, on: { click: () => go(page - 1) } }, "‹ Previous"),
        ` page ${page + 1} of ${pages} `,
        el("button", { disabled: page + 1 >= pages, on: { click: () => go(page + 1) } }, "Next ›"),
      ),
    );
    return { sources: [source], refresh: () => experimentPage(source, experiment, query) };
  }

  // ---- episode replay ----------------------------------------------------------------------
  const SPEEDS = [0.5, 1, 2, 4];
  let replay = null; // {source, id, perspective, episode, step, timer, speed}

  async function episodePage(asked, id, query) {
    const perspective = query.get("perspective") || (exported && exported !== "all" ? exported : "all");
    const { source, episode } = await LINKS.locate(compareKit, asked, id, query, perspective);
    const same = replay && replay.source === source && replay.id === id;
    const last = Math.max(0, episode.steps.length - 1);
    // Watching the end of a running episode follows its new steps as they arrive; one opened
    // while it is played opens at its latest step (a game watched live).
    const following = same ? replay.step >= replay.episode.steps.length - 1 : episode.status === "running";
    const kept = following ? last : same ? replay.step : 0;
    const wanted = same && !query.has("step") ? -1 : LINKS.askedStep(query, episode.steps); // links.js
    const step = Math.min(wanted >= 0 ? wanted : kept, last);
    if (replay && !same) stopPlaying();
    replay = { ...(same ? replay : { timer: null, speed: 1 }), source, id, perspective, episode, step, query };
    setCrumbs(
      el("a", { href: ["x", source, episode.experiment] }, episode.experiment),
      el("a", { href: LINKS.episodeLink(source, id, episode.experiment) }, id),
    );
    drawEpisode();
    const again = new URLSearchParams(query);
    again.delete("step"); // a refresh keeps the step shown
    return { sources: [source], refresh: () => episodePage(source, id, again), stop: stopPlaying };
  }

  function stopPlaying() {
    if (replay && replay.timer) clearInterval(replay.timer);
    if (replay) replay.timer = null;
  }

  function goStep(n) {
    const last = Math.max(0, replay.episode.steps.length - 1);
    replay.step = Math.max(0, Math.min(n, last));
    drawStep();
  }

  function togglePlay() {
    if (replay.timer) {
      stopPlaying();
    } else {
      replay.timer = setInterval(() => {
        if (replay.step + 1 >= replay.episode.steps.length) stopPlaying();
        else replay.step += 1;
        drawStep();
      }, 1000 / replay.speed);
    }
    drawStep();
  }

  // The page around the timeline, drawn once per load; `drawStep` redraws what a step changes.
  function drawEpisode() {
    const { episode, source, id, perspective } = replay;
    const steps = episode.steps;
    const perspectives = [
      ["all", "everything"],
      ...episode.seats.map((s) => [`seat:${s.seat}`, `seat ${s.seat} (${s.label})`]),
    ].filter(([v]) => exported === null || exported === "all" || v === exported);
    const chooser = el(
      "select",
      {
        on: {
          change: (e) => {
            const query = { ...Object.fromEntries(replay.query), perspective: e.target.value, step: String(replay.step + 1) };
            location.hash = route({ path: ["e", source, id], query });
          },
        },
      },
      perspectives.map(([v, label]) => el("option", { value: v }, label)),
    );
    chooser.value = perspective;
    const speed = el(
      "select",
      {
        on: {
          change: (e) => {
            replay.speed = Number(e.target.value);
            if (replay.timer) {
              stopPlaying();
              togglePlay();
            }
          },
        },
      },
      SPEEDS.map((s) => el("option", { value: String(s) }, `${s}×`)),
    );
    speed.value = String(replay.speed);
    replay.slider = el("input", {
      type: "range",
      min: "0",
      max: String(Math.max(0, steps.length - 1)),
      on: { input: (e) => goStep(Number(e.target.value)) },
    });
    replay.counter = el("span", { class: "counter" });
    replay.play = el("button", { title: "play/pause (space)", on: { click: togglePlay } });
    replay.box = el("div", { class: "step-box" });
    const controls = el(
      "div",
      { class: "timeline" },
      el("button", { title: "first (Home)", on: { click: () => goStep(0) } }, "« first"),
      el("button", { title: "previous (←)", on: { click: () => goStep(replay.step - 1) } }, "◀ prev"),
      replay.play,
      el("button", { title: "next (→)", on: { click: () => goStep(replay.step + 1) } }, "next ▶"),
      el("button", { title: "last (End)", on: { click: () => goStep(steps.length - 1) } }, "last »"),
      replay.slider,
      replay.counter,
      el("label", {}, "speed ", speed),
      el("label", {}, " perspective ", chooser),
    );
    show(
      el("h1", {}, `Episode ${episode.id}`),
      el(
        "p",
        { class: "facts" },
        `game ${episode.game} · status ${episode.status} · seed ${fmt(episode.seed)}`,
        ` · payoffs ${fmt(episode.payoffs)}`,
        " · ",
        el("a", { href: ["compare", source, id], class: "compare-link" }, "compare with…"),
        [" · ", window.StratagemCells.episodeDownload(compareKit, source, id)],
      ),
      table(
        ["Seat", "Label", "Kind", "Model"],
        episode.seats.map((s) => [s.seat, s.label, s.kind, s.model]),
      ),
      controls,
      replay.box,
    );
    drawStep();
  }

  function drawStep() {
    const { episode, step } = replay;
    const steps = episode.steps;
    replay.slider.value = String(step);
    replay.counter.textContent = steps.length
      ? ` step ${step + 1} of ${steps.length} `
      : " no steps yet ";
    replay.play.textContent = replay.timer ? "pause" : "▶ play";
    const here = steps[step];
    const game = here && gameView(episode);
    replay.box.replaceChildren(
      ...(here
        ? [game ? game(here, episode) : "", stepView(here)]
        : [el("p", { class: "muted" }, "This episode has no steps yet.")]),
    );
    if (replay.query.get("q")) LINKS.mark(replay.box, replay.query.get("q"));
    if (steps.length) LINKS.followStep(route, replay.source, replay.id, replay.query, step);
  }

  function gameView(episode) {
    const family = episode.game.split("/")[0];
    const rounds = episode.steps.some((s) => s.results && s.results.length);
    return GAME_VIEWS[episode.game] || GAME_VIEWS[family] || (rounds && GAME_VIEWS.rounds) || null;
  }

  function stepView(step) {
    return el(
      "section",
      { class: "step" },
      el("h2", {}, `Step ${step.index + 1}` + (step.round == null ? "" : ` · round ${step.round}`)),
      el("h3", {}, "Events"),
      step.events.length ? el("ol", { class: "events" }, step.events.map(eventView)) : el("p", { class: "muted" }, "none"),
      el("h3", {}, "Model calls"),
      step.calls.length ? step.calls.map((c) => CALLS.call(callKit, c)) : el("p", { class: "muted" }, "none"),
    );
  }

  function eventView(event) {
    const who = event.player == null ? "" : ` · seat ${event.player}`;
    const seen =
      event.visible_to == null
        ? "public"
        : event.visible_to.length
          ? `visible to ${event.visible_to.length > 1 ? "seats" : "seat"} ${fmt(event.visible_to)}`
          : event.player != null
            ? `seat ${event.player}'s own record` // its decision: no other seat sees it
            : "the record only (no seat)";
    return el(
      "li",
      { class: event.visible_to == null ? "event" : "event hidden" },
      el("div", { class: "head" }, el("b", {}, event.kind), who, ` · #${event.seq} · ${seen}`),
      value(event.data),
    );
  }

  document.addEventListener("keydown", (e) => {
    if (!replay || !location.hash.startsWith("#/e/")) return;
    if (["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName)) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1 };
    if (e.key in moves) goStep(replay.step + moves[e.key]);
    else if (e.key === "Home") goStep(0);
    else if (e.key === "End") goStep(replay.episode.steps.length - 1);
    else if (e.key === " ") togglePlay();
    else return;
    e.preventDefault();
  });

  // ---- compare (compare.js), and pages registered in window.StratagemPages (diff.js) ----------
  const COMPARE = window.StratagemCompare;
  const ANALYSIS = window.StratagemAnalysis;
  const PAGES = window.StratagemPages || {};
  const compareKit = { el, route, api, pathId, ref, fmt, money, table, show, setCrumbs, exported };
  const CALLS = window.StratagemCalls; // the model-call inspector (calls.js)
  const LINKS = window.StratagemLinks; // links that last (links.js)
  const callKit = { el, fmt, value, money };

  // ---- routing and live refresh --------------------------------------------------------------
  async function render() {
    if (current && current.stop) current.stop();
    const { parts, query } = parseRoute();
    try {
      if (parts[0] === "x" && parts.length === 3) current = await experimentPage(parts[1], parts[2], query);
      else if (parts[0] === "e" && parts.length === 3) current = await episodePage(parts[1], parts[2], query);
      else if (parts[0] === "compare" && parts.length === 3) current = await COMPARE.choose(compareKit, parts[1], parts[2]);
      else if (parts[0] === "compare" && parts.length === 5) current = await COMPARE.page(compareKit, ...parts.slice(1), query);
      else if (Object.hasOwn(PAGES, parts[0])) current = await PAGES[parts[0]](compareKit, parts.slice(1), query);
      else current = await experimentsPage();
      versions = {};
      if (exported !== null) return; // an export is a snapshot: no versions, no polling
      for (const source of current.sources) versions[source] = (await api(`/api/version/${encodeURIComponent(source)}`)).version;
    } catch (error) {
      current = null;
      failed(error);
    }
  }

  // New episodes and the steps of a running episode appear without a reload.
  async function poll() {
    if (!current || document.hidden || exported !== null) return;
    const page = current;
    try {
      for (const source of page.sources) {
        const { version } = await api(`/api/version/${encodeURIComponent(source)}`);
        if (versions[source] !== version) {
          versions[source] = version;
          if (current === page) await page.refresh();
        }
      }
    } catch (error) {
      // The server stopped or a store is busy: keep the page, try again next time.
    }
  }

  window.addEventListener("hashchange", render);
  setInterval(poll, POLL_MS);
  render();
})();
