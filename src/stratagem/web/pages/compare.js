// stratagem view: two episodes side by side (issue 25 item 6). app.js routes "#/compare/..."
// here and hands over its helpers (text-only DOM, in-page routes, the API). The pairs are asked
// for one episode (the server finds them by a query on its store); a static export holds those
// within its episodes, up to a bound it states (stratagem.web.export).
"use strict";

window.StratagemCompare = (() => {
  const enc = encodeURIComponent;

  // Each seat's action at a step as "seat k: action" lines; "—" where a side has no such step.
  function actions(kit, acts) {
    if (acts === null || acts === undefined) return kit.el("span", { class: "muted" }, "—");
    const seats = Object.keys(acts).sort((x, y) => Number(x) - Number(y));
    return seats.map((s) => kit.el("div", {}, `seat ${s}: ${kit.fmt(acts[s])}`));
  }

  // "#/compare/<source>/<episode>": the pairs offered for this episode, and a form for any other.
  async function choose(kit, source, id) {
    const offered = await kit.api(`/api/pairs/${enc(source)}/${kit.pathId(id)}`);
    // A source's name may hold "/": the longest name the text starts with is its source.
    const names = (await kit.api("/api/sources")).map((s) => s.id).sort((x, y) => y.length - x.length);
    const mine = offered.pairs.map((p) => [p.kind, p.b]);
    // An export says how many of the episode's pairs it holds no alignment for.
    const left = offered.left_out
      ? kit.el("p", { class: "pairs-left-out muted" }, `This export leaves out ${offered.left_out} more ${offered.left_out === 1 ? "pair" : "pairs"} of this episode (the other episode is not exported, or past its bound of ${offered.bound} pairs an experiment).`)
      : null;
    const other = kit.el("input", { name: "other", size: 40, placeholder: "<source>/<episode>" });
    const form = kit.el(
      "form",
      {
        on: {
          submit: (e) => {
            e.preventDefault();
            const text = other.value.trim();
            const s = names.find((n) => text.startsWith(n + "/")) ?? text.split("/")[0];
            location.hash = kit.route(["compare", source, id, s, text.slice(s.length + 1)]);
          },
        },
      },
      kit.el("label", {}, "compare with ", other),
      kit.el("button", { type: "submit" }, "Compare"),
    );
    kit.show(
      kit.el("h1", {}, `Compare episode ${id} with…`),
      mine.length
        ? kit.table(
            ["Why", "Source", "Episode", "Game", "Models", "Agents"],
            mine.map(([kind, b]) => [
              kind,
              b.source,
              kit.el("a", { href: ["compare", source, id, b.source, b.episode], class: "pair" }, b.episode),
              b.game,
              kit.fmt(b.models),
              kit.fmt(b.agents),
            ]),
          )
        : kit.el("p", { class: "muted" }, "No pair offered for this episode."),
      left,
      form,
    );
    return { sources: [source], refresh: () => choose(kit, source, id) };
  }

  // "#/compare/<sa>/<a>/<sb>/<b>?perspective=...": the aligned steps, the first difference marked.
  async function page(kit, sa, a, sb, b, query) {
    const only = kit.exported && kit.exported !== "all" ? kit.exported : null; // a seat's export
    const perspective = query.get("perspective") || only || "all";
    const got = await kit.api("/api/compare", { a: kit.ref(sa, a), b: kit.ref(sb, b), perspective });
    const first = got.first_difference;
    const unit = got.by === "round" ? "round" : "step"; // repeated games align by round
    const seats = Math.min(got.a.seats.length, got.b.seats.length);
    const chooser = kit.el(
      "select",
      {
        on: {
          change: (e) => {
            location.hash = kit.route({ path: ["compare", sa, a, sb, b], query: { perspective: e.target.value } });
          },
        },
      },
      [["all", "everything"], ...Array.from({ length: seats }, (_, k) => [`seat:${k}`, `seat ${k}`])]
        .filter(([v]) => only === null || v === only)
        .map(([v, label]) => kit.el("option", { value: v }, label)),
    );
    chooser.value = perspective;
    const side = (label, source, ep) =>
      kit.el(
        "div",
        {},
        kit.el("b", {}, label + " "),
        kit.el("a", { href: { path: ["e", source, ep.id], query: { perspective } } }, `${source}/${ep.id}`),
        ` · ${ep.game} · ${ep.status} · payoffs ${kit.fmt(ep.payoffs)}`,
      );
    const rows = got.steps.map((r) => {
      const row = kit.el(
        "tr",
        { class: r.index === first ? "first-diff" : r.same ? "same" : "differs" },
        kit.el("td", {}, String(unit === "round" ? r.round_a : r.index + 1) + (r.index === first ? " ◆ first difference" : "")),
        kit.el("td", {}, kit.fmt(r.round_a)),
        kit.el("td", {}, actions(kit, r.a)),
        kit.el("td", {}, kit.fmt(r.round_b)),
        kit.el("td", {}, actions(kit, r.b)),
      );
      return row;
    });
    kit.setCrumbs(kit.el("a", { href: ["compare", sa, a] }, "compare"));
    kit.show(
      kit.el("h1", {}, "Compare two episodes"),
      side("A", sa, got.a),
      side("B", sb, got.b),
      kit.el("p", {}, kit.el("label", {}, "perspective (both sides) ", chooser)),
      kit.el(
        "p",
        { class: "first-note" },
        first === null
          ? `The actions are the same at every ${unit}.`
          : `First difference at ${unit} ${unit === "round" ? got.steps[first].round_a : first + 1}.`,
      ),
      kit.el(
        "table",
        { class: "compare" },
        kit.el("thead", {}, kit.el("tr", {}, [unit === "round" ? "Round" : "Step", "Round A", "Actions A", "Round B", "Actions B"].map((h) => kit.el("th", {}, h)))),
        kit.el("tbody", {}, rows),
      ),
    );
    return { sources: [...new Set([sa, sb])], refresh: () => page(kit, sa, a, sb, b, query) };
  }

  return { choose, page };
})();
