// stratagem view: tables you can work with at scale (issue 36 item 7): paged, sortable by any
// column (click a heading; again to reverse), for the cells of an experiment (here) and the diff
// (diff.js). Each cell row opens its episodes: the episode list filtered to the cell (`cell=<key>`,
// web.data.listing) with the list's other filters kept. Cells are filtered by the list's game,
// model and agent (what a cell is made of), and counted over the finished episodes the list's
// other filters keep (status, outcome, invalid moves, seat kind, a leaderboard row, the search;
// issue 36 item 7): a row's count is the length of the list it opens. An export holds every
// cell counted once, so there those filters apply to the episodes a row opens only, as the page
// says. Text enters as text nodes only.
"use strict";

window.StratagemCells = (() => {
  const PER_PAGE = 50;
  const CELL_FILTERS = ["game", "model", "agent"];
  // The list's filters the cells are counted under (web.data.sources.CELL_FOLLOWS) and its search.
  const COUNTED_BY = ["seat_kind", "status", "invalid", "outcome", "group", "q"];
  const NAMES = { seat_kind: "seat kind", invalid: "invalid > 0", q: "search", group: "leaderboard row" };

  // The cells API's parameters for the list's `params`: those the cells are counted under.
  function countedBy(params) {
    return Object.fromEntries(COUNTED_BY.filter((k) => params[k]).map((k) => [k, params[k]]));
  }

  // One line saying which of the list's filters the counts follow, or, in an export (its cells
  // counted once), that they do not.
  function countNote(kit, params) {
    const set = COUNTED_BY.filter((k) => params[k]);
    if (!set.length) return null;
    const named = set.map((k) => (k === "invalid" || k === "group" ? NAMES[k] : `${NAMES[k] || k} ${params[k]}`)).join(", ");
    const text = kit.exported === null
      ? `Counted over the finished episodes the list's filters keep (${named}).`
      : `This export counts every finished episode in its cells: the list's ${named} filters apply to the episodes a row opens, not to these counts.`;
    return kit.el("p", { class: "muted cells-counted" }, text);
  }
  const states = {}; // a table's id -> {sort, desc, page}: kept while the page refreshes

  // Nulls last, numbers as numbers, text in the reader's collation.
  function compare(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;
    if (b === null || b === undefined) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  // A table of `rows` under `columns` ({label, value(row), show(row)?, num?}), paged and sorted;
  // `rowClass(row)` an optional class per row. Redraws itself in place.
  function grid(kit, id, columns, rows, rowClass) {
    const state = (states[id] = states[id] || { sort: null, desc: false, page: 0 });
    const box = kit.el("div", { class: "grid", id });
    const draw = () => {
      const order = rows.map((r, k) => k);
      if (state.sort !== null && state.sort < columns.length) {
        const value = columns[state.sort].value;
        order.sort((x, y) => compare(value(rows[x]), value(rows[y])) * (state.desc ? -1 : 1) || x - y);
      }
      const pages = Math.max(1, Math.ceil(rows.length / PER_PAGE));
      state.page = Math.min(state.page, pages - 1);
      const shown = order.slice(state.page * PER_PAGE, (state.page + 1) * PER_PAGE).map((k) => rows[k]);
      const head = columns.map((c, k) => {
        const mark = state.sort === k ? (state.desc ? " ▼" : " ▲") : "";
        const sort = () => {
          state.desc = state.sort === k ? !state.desc : false;
          state.sort = k;
          state.page = 0;
          draw();
        };
        const sorted = state.sort === k ? (state.desc ? "descending" : "ascending") : "none";
        const button = kit.el("button", { type: "button", class: "sort", on: { click: sort } }, c.label + mark);
        const th = kit.el("th", {}, button);
        th.setAttribute("aria-sort", sorted);
        return th;
      });
      const body = shown.map((r) =>
        kit.el(
          "tr",
          { class: rowClass ? rowClass(r) : "" },
          columns.map((c) => kit.el("td", { class: c.num ? "num" : "" }, c.show ? c.show(r) : kit.fmt(c.value(r)))),
        ),
      );
      const move = (page) => () => { state.page = page; draw(); };
      box.replaceChildren(
        kit.el("table", {}, kit.el("thead", {}, kit.el("tr", {}, head)), kit.el("tbody", {}, body)),
        pages > 1
          ? kit.el(
              "p",
              { class: "pager grid-pager" },
              kit.el("button", { type: "button", disabled: state.page <= 0, on: { click: move(state.page - 1) } }, "‹ Previous"),
              ` rows ${state.page * PER_PAGE + 1}–${state.page * PER_PAGE + shown.length} of ${rows.length} · page ${state.page + 1} of ${pages} `,
              kit.el("button", { type: "button", disabled: state.page + 1 >= pages, on: { click: move(state.page + 1) } }, "Next ›"),
            )
          : null,
      );
    };
    draw();
    return box;
  }

  // The cells part of an experiment's page: the table, the filters it follows, and, when the list
  // shows one cell's episodes, which one.
  function part(kit, source, experiment, cells, params) {
    const kept = cells.filter((c) => CELL_FILTERS.every((f) => !params[f] || String(c[f]) === params[f]));
    const seats = Math.max(0, ...cells.map((c) => c.score.length));
    const open = (c) => {
      const query = { ...params, cell: c.cell };
      delete query.page; // the list's filters kept: the count is the list's length
      return kit.el("a", { href: { path: ["x", source, experiment], query }, class: "cell-link" }, kit.fmt(c.episodes));
    };
    const columns = [
      { label: "Model", value: (c) => c.model },
      { label: "Agent", value: (c) => c.agent },
      { label: "Game", value: (c) => c.game },
      { label: "Line-up", value: (c) => kit.fmt(c.lineup) },
      { label: "Rounds", value: (c) => c.rounds, num: true },
      { label: "Episodes", value: (c) => c.episodes, show: open, num: true },
      ...Array.from({ length: seats }, (_, k) => ({ label: `Score seat ${k}`, value: (c) => c.score[k], num: true })),
      ...(cells.some((c) => (c.metrics || []).includes("cooperation"))
        ? [{ label: "Cooperation", value: (c) => c.cooperation, num: true }]
        : []),
      { label: "Invalid (LLM seats)", value: (c) => c.llm_invalid_rate, num: true },
      { label: "Cost", value: (c) => c.cost_usd, show: (c) => kit.money(c.cost_usd), num: true },
    ];
    const applied = CELL_FILTERS.filter((f) => params[f]).map((f) => `${f} ${params[f]}`);
    const chosen = cells.find((c) => c.cell === params.cell);
    return [
      kit.el(
        "p",
        { class: "caption" },
        `${kept.length} of ${cells.length} cells` + (applied.length ? ` (${applied.join(", ")})` : "") +
          ". Click a heading to sort; a cell's episode count opens its episodes with the list's filters.",
      ),
      countNote(kit, params),
      kept.length
        ? grid(kit, `cells-${source}-${experiment}`, columns, kept, (c) => (c.cell === params.cell ? "cell-row chosen" : "cell-row"))
        : kit.el("p", { class: "muted" }, "No cell matches these filters."),
      cellsDownload(kit, source, experiment, params),
      params.cell ? chosenNote(kit, source, experiment, chosen, params) : null,
    ];
  }

  function chosenNote(kit, source, experiment, chosen, params) {
    const query = { ...params };
    delete query.cell;
    delete query.page;
    const name = chosen ? `${chosen.model} · ${chosen.agent} · ${chosen.game} · ${kit.fmt(chosen.lineup)} · rounds ${kit.fmt(chosen.rounds)}` : params.cell;
    return kit.el(
      "p",
      { class: "cell-note" },
      "The episode list below shows the cell ",
      kit.el("b", {}, name),
      " · ",
      kit.el("a", { href: { path: ["x", source, experiment], query } }, "every cell's episodes"),
    );
  }

  // ---- downloads (issue 36 item 9, web.data.downloads) ------------------------------------------
  const FORMATS = ["csv", "jsonl", "parquet"];
  const TABLES = ["episodes", "seats", "rounds", "events", "calls", "beliefs", "answers"];
  const EXPORTED_TABLES = ["episodes", "seats", "rounds"]; // what an export writes (export.py)

  // A link to a file (the API's, or the export's written beside its data): not an in-page route.
  function fileLink(kit, href, text, cls) {
    const a = kit.el("a", { class: cls || "download" }, text);
    a.setAttribute("href", href);
    a.setAttribute("download", "");
    return a;
  }

  // "Download as CSV · JSONL · Parquet": `where(fmt)` the file's address.
  function formats(kit, label, where, note) {
    return kit.el(
      "p",
      { class: "downloads" },
      label + " ",
      FORMATS.map((f, k) => [k ? " · " : "", fileLink(kit, where(f), f.toUpperCase())]),
      note ? kit.el("span", { class: "muted" }, " " + note) : null,
    );
  }

  function query(params, keep) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v && keep(k)) q.set(k, v);
    const text = q.toString();
    return text ? "?" + text : "";
  }

  const withheld = (kit) => kit.el("p", { class: "muted downloads" }, "A seat's export holds no downloads: they hold what every seat saw.");
  const folder = (kit, source, experiment) => `data/x/${kit.pathId(source)}/${kit.pathId(experiment)}/download`;

  // The cells table as a file, its rows kept by the page's cell filters.
  function cellsDownload(kit, source, experiment, params) {
    if (kit.exported !== null) {
      if (kit.exported !== "all") return withheld(kit);
      return formats(kit, "Download the cells:", (f) => `${folder(kit, source, experiment)}/cells.${f}`, "(every cell of the experiment)");
    }
    const base = `/api/download/${encodeURIComponent(source)}/${kit.pathId(experiment)}/cells`;
    const kept = (k) => CELL_FILTERS.includes(k) || COUNTED_BY.includes(k);
    return formats(kit, "Download the cells:", (f) => `${base}.${f}${query(params, kept)}`);
  }

  // The filtered episode list as a table of stratagem.open (docs/dataframes.md), picked here.
  function listDownload(kit, source, experiment, params) {
    if (kit.exported !== null && kit.exported !== "all") return withheld(kit);
    const tables = kit.exported === null ? TABLES : EXPORTED_TABLES;
    const picked = kit.el("select", { name: "table", class: "download-table" }, tables.map((t) => kit.el("option", { value: t }, t)));
    const box = kit.el("span", {});
    const draw = () => {
      const table = picked.value;
      const where = kit.exported === null
        ? (f) => `/api/download/${encodeURIComponent(source)}/${kit.pathId(experiment)}/${table}.${f}${query(params, (k) => k !== "page")}`
        : (f) => `${folder(kit, source, experiment)}/${table}.${f}`;
      const note = kit.exported === null ? "(the listed episodes, every page)" : "(every exported episode: an export's files are not filtered)";
      box.replaceChildren(formats(kit, "", where, note));
    };
    picked.addEventListener("change", draw);
    draw();
    return kit.el("div", { class: "list-downloads" }, "Download the list's ", picked, " table:", box);
  }

  // A diff as a file: its rows kept by the page's filters and "beyond the noise" (server only).
  function diffDownload(kit, sa, ea, sb, eb, params) {
    if (kit.exported !== null) {
      const where = (f) => `data/d/${kit.pathId(sa)}/${kit.pathId(ea)}/${kit.pathId(sb)}/${kit.pathId(eb)}/download.${f}`;
      return formats(kit, "Download the diff:", where, "(every shared cell)");
    }
    const keep = (k) => CELL_FILTERS.includes(k) || k === "noise";
    const q = query({ ...params, a: kit.ref(sa, ea), b: kit.ref(sb, eb) }, (k) => keep(k) || k === "a" || k === "b");
    return formats(kit, "Download the diff:", (f) => `/api/download-diff/${f}${q}`);
  }

  // One episode in the documented episode format (docs/episode-format.md): every seat's record.
  function episodeDownload(kit, source, id) {
    if (kit.exported !== null && kit.exported !== "all") return null;
    const where = kit.exported === null
      ? `/api/download-episode/${encodeURIComponent(source)}/${kit.pathId(id)}.jsonl`
      : `data/e/${kit.pathId(source)}/${kit.pathId(id)}/episode.jsonl`;
    return fileLink(kit, where, "download as JSONL", "download episode-download");
  }

  return Object.freeze({ grid, part, countedBy, cellsDownload, listDownload, diffDownload, episodeDownload });
})();
