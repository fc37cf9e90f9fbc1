// stratagem view: the cell-level diff of two experiments (issue 25 item 6), registered as the
// "#/diff" route in window.StratagemPages; app.js hands over its helpers (text-only DOM, in-page
// routes, the API). The numbers come from the data layer (stratagem.web.data.diff), served or
// exported alike; an export holds the diffs of its experiments that share a cell.
"use strict";

window.StratagemPages = window.StratagemPages || {};

window.StratagemPages.diff = (() => {
  // "#/diff": pick two experiments (served), or the diffs an export holds.
  async function choose(kit) {
    kit.setCrumbs(kit.el("a", { href: ["diff"] }, "diff"));
    const experiments = await kit.api("/api/experiments");
    const names = Object.fromEntries(experiments.map((x) => [`${x.source}/${x.id}`, x.name || x.id]));
    const label = (ref) => `${names[ref] || ref} (${ref})`;
    if (kit.exported !== null) {
      const held = await kit.api("/api/diffs");
      kit.show(
        kit.el("h1", {}, "Diff two experiments"),
        held.length
          ? kit.table(
              ["A", "B", "Shared cells"],
              held.map((d) => [
                label(`${d.a.source}/${d.a.experiment}`),
                kit.el("a", { href: ["diff", d.a.source, d.a.experiment, d.b.source, d.b.experiment], class: "diff-pair" }, label(`${d.b.source}/${d.b.experiment}`)),
                kit.fmt(d.shared),
              ]),
            )
          : kit.el("p", { class: "muted" }, "No two exported experiments share a cell."),
      );
      return { sources: [], refresh: () => choose(kit) };
    }
    const pick = (name) =>
      kit.el("select", { name }, experiments.map((x) => kit.el("option", { value: kit.ref(x.source, x.id) }, label(`${x.source}/${x.id}`))));
    const a = pick("a");
    const b = pick("b");
    if (experiments.length > 1) b.selectedIndex = 1;
    const go = (e) => {
      e.preventDefault();
      const [sa, ...ea] = a.value.split("/");
      const [sb, ...eb] = b.value.split("/");
      const name = decodeURIComponent;
      location.hash = kit.route(["diff", name(sa), ea.join("/"), name(sb), eb.join("/")]);
    };
    kit.show(
      kit.el("h1", {}, "Diff two experiments"),
      kit.el(
        "form",
        { class: "diff-form", on: { submit: go } },
        kit.el("label", {}, "A ", a),
        kit.el("label", {}, " B ", b),
        kit.el("button", { type: "submit" }, "Diff"),
      ),
    );
    return { sources: [...new Set(experiments.map((x) => x.source))], refresh: () => choose(kit) };
  }

  function cellName(kit, c) {
    return `${c.model} · ${c.agent} · ${c.game} · ${kit.fmt(c.lineup)} · rounds ${kit.fmt(c.rounds)}`;
  }

  function alone(kit, title, cells) {
    if (!cells.length) return null;
    return [
      kit.el("h2", {}, title),
      kit.table(["Cell", "Episodes"], cells.map((c) => [cellName(kit, c), kit.fmt(c.episodes)])),
    ];
  }

  // A p-value as the report prints it (analysis.comparisons.format_p): two significant digits.
  function pValue(p) {
    if (p === null || p === undefined) return "—";
    return p < 0.001 ? "<0.001" : String(Number(p.toPrecision(2)));
  }

  // "6", or "6 in 3 clusters by seed" where the pairs were clustered.
  function pairs(kit, m) {
    return m.cluster_by === null ? kit.fmt(m.n) : `${kit.fmt(m.n)} in ${m.clusters} clusters by ${m.cluster_by}`;
  }

  const CELL_FILTERS = ["game", "model", "agent"];

  // Which rule said a difference is beyond the noise (web.data.diff, "Beyond the noise").
  function beyond(kit, m) {
    const by = m.noise_by === "floor" ? `noise floor ±${kit.fmt(m.floor)}` : "interval excludes 0";
    return `${m.beyond_noise ? "yes" : "no"} (${by})`;
  }

  // "#/diff/<sa>/<ea>/<sb>/<eb>": each shared cell's metrics, A, B, B - A, its interval, its p-value
  // and the p-value Holm-adjusted across the table, paged and sortable (cells.js), filtered by the
  // cells' game, model and agent and, with `noise=1`, to the cells that differ beyond the noise.
  async function page(kit, sa, ea, sb, eb, query) {
    const got = await kit.api("/api/diff", { a: kit.ref(sa, ea), b: kit.ref(sb, eb) });
    kit.setCrumbs(kit.el("a", { href: ["diff"] }, "diff"));
    const params = Object.fromEntries(query.entries());
    const kept = got.cells.filter(
      (c) => CELL_FILTERS.every((f) => !params[f] || String(c[f]) === params[f]) &&
        (params.noise !== "1" || c.metrics.some((m) => m.beyond_noise)),
    );
    const rows = kept.flatMap((c) => c.metrics.map((m) => ({ c, m })));
    const open = (s, x, c, side) => kit.el("a", { href: { path: ["x", s, x], query: { cell: c.cell } }, class: "diff-cell-link" }, side);
    const columns = [
      { label: "Cell", value: (r) => cellName(kit, r.c), show: (r) => [cellName(kit, r.c), r.c.unpaired_a || r.c.unpaired_b ? ` (unpaired: A ${r.c.unpaired_a}, B ${r.c.unpaired_b})` : ""] },
      { label: "Metric", value: (r) => r.m.metric },
      { label: "A", value: (r) => r.m.a, num: true },
      { label: "B", value: (r) => r.m.b, num: true },
      { label: "B − A", value: (r) => r.m.diff, num: true },
      { label: "Interval", value: (r) => r.m.ci_low, show: (r) => (r.m.ci_low === null ? "—" : `[${kit.fmt(r.m.ci_low)}, ${kit.fmt(r.m.ci_high)}]`) },
      { label: "p", value: (r) => r.m.p, show: (r) => pValue(r.m.p), num: true },
      { label: "Holm p", value: (r) => r.m.p_adjusted, show: (r) => pValue(r.m.p_adjusted), num: true },
      { label: "n pairs", value: (r) => r.m.n, show: (r) => pairs(kit, r.m), num: true },
      { label: "Beyond the noise", value: (r) => r.m.beyond_noise, show: (r) => beyond(kit, r.m) },
      { label: "Episodes", value: (r) => r.c.pairs, show: (r) => [open(sa, ea, r.c, "A"), " · ", open(sb, eb, r.c, "B")] },
    ];
    const choices = (key) => [...new Set(got.cells.map((c) => c[key]).filter((v) => v != null))].sort();
    const inputs = {};
    const select = (key) => {
      inputs[key] = kit.el("select", { name: key }, ["", ...choices(key)].map((o) => kit.el("option", { value: o }, o || "any")));
      inputs[key].value = params[key] || "";
      return kit.el("label", {}, key + " ", inputs[key]);
    };
    inputs.noise = kit.el("input", { type: "checkbox", name: "noise", checked: params.noise === "1" });
    const apply = (e) => {
      e.preventDefault();
      const next = {};
      for (const key of CELL_FILTERS) if (inputs[key].value) next[key] = inputs[key].value;
      if (inputs.noise.checked) next.noise = "1";
      location.hash = kit.route({ path: ["diff", sa, ea, sb, eb], query: next });
    };
    const floors = got.noise.length
      ? `Beyond the noise: |B − A| above the noise floor of its metric where replicate cells were played (${got.noise.map((n) => `${n.metric}: ${n.text}`).join("; ")}), else the paired interval excluding 0.`
      : "Beyond the noise: the paired interval excludes 0 (neither experiment played replicate cells, so there is no noise floor).";
    const side = (name, s, x) => kit.el("div", {}, kit.el("b", {}, name + " "), kit.el("a", { href: ["x", s, x] }, `${s}/${x}`));
    const nodes = [
      kit.el("h1", {}, "Diff of two experiments"),
      side("A", sa, ea),
      side("B", sb, eb),
      kit.el(
        "p",
        { class: "muted" },
        `Paired by ${got.paired_by} within each cell; ${Math.round(got.level * 100)}% intervals and p-values of the paired t-test, cluster-robust (CR1) where a cell's pairs are clustered: by seed when it holds several seeds and a seed several pairs (docs/statistics.md).`,
      ),
      kit.el("p", { class: "muted diff-noise" }, floors),
      kit.el(
        "form",
        { class: "filters diff-filters", on: { submit: apply } },
        CELL_FILTERS.map(select),
        kit.el("label", {}, inputs.noise, " only cells that differ beyond the noise"),
        kit.el("button", { type: "submit" }, "Apply"),
      ),
      kit.el("p", { class: "caption" }, `${kept.length} of ${got.cells.length} shared cells.`),
      rows.length
        ? window.StratagemCells.grid(kit, `diff-${sa}-${ea}-${sb}-${eb}`, columns, rows, (r) => (r.m.beyond_noise ? "beyond" : ""))
        : kit.el("p", { class: "muted" }, got.cells.length ? "No shared cell matches." : "The two experiments share no cell."),
      rows.length && got.correction ? kit.el("p", { class: "muted diff-correction" }, got.correction) : null,
      window.StratagemCells.diffDownload(kit, sa, ea, sb, eb, params),
      alone(kit, "Cells only in A", got.only_a),
      alone(kit, "Cells only in B", got.only_b),
    ];
    kit.show(...nodes.flat().filter((n) => n !== null));
    return { sources: [...new Set([sa, sb])], refresh: () => page(kit, sa, ea, sb, eb, query) };
  }

  return (kit, parts, query) => (parts.length === 4 ? page(kit, ...parts, query) : choose(kit));
})();
