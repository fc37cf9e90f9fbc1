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
      kit.el("select", { name }, experiments.map((x) => kit.el("option", { value: `${x.source}/${x.id}` }, label(`${x.source}/${x.id}`))));
    const a = pick("a");
    const b = pick("b");
    if (experiments.length > 1) b.selectedIndex = 1;
    const go = (e) => {
      e.preventDefault();
      const [sa, ...ea] = a.value.split("/");
      const [sb, ...eb] = b.value.split("/");
      location.hash = kit.route(["diff", sa, ea.join("/"), sb, eb.join("/")]);
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

  // "#/diff/<sa>/<ea>/<sb>/<eb>": each shared cell's metrics, A, B, B - A, its interval, its p-value
  // and the p-value Holm-adjusted across the table.
  async function page(kit, sa, ea, sb, eb) {
    const got = await kit.api("/api/diff", { a: `${sa}/${ea}`, b: `${sb}/${eb}` });
    kit.setCrumbs(kit.el("a", { href: ["diff"] }, "diff"));
    const rows = got.cells.flatMap((c) => {
      const unpaired = c.unpaired_a || c.unpaired_b ? ` (unpaired: A ${c.unpaired_a}, B ${c.unpaired_b})` : "";
      return c.metrics.map((m) => [
        cellName(kit, c) + unpaired,
        m.metric,
        kit.fmt(m.a),
        kit.fmt(m.b),
        kit.fmt(m.diff),
        m.ci_low === null ? "—" : `[${kit.fmt(m.ci_low)}, ${kit.fmt(m.ci_high)}]`,
        pValue(m.p),
        pValue(m.p_adjusted),
        pairs(kit, m),
      ]);
    });
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
      rows.length
        ? kit.table(["Cell", "Metric", "A", "B", "B − A", "Interval", "p", "Holm p", "n pairs"], rows)
        : kit.el("p", { class: "muted" }, "The two experiments share no cell."),
      rows.length && got.correction ? kit.el("p", { class: "muted diff-correction" }, got.correction) : null,
      alone(kit, "Cells only in A", got.only_a),
      alone(kit, "Cells only in B", got.only_b),
    ];
    kit.show(...nodes.flat().filter((n) => n !== null));
    return { sources: [...new Set([sa, sb])], refresh: () => page(kit, sa, ea, sb, eb) };
  }

  return (kit, parts) => (parts.length === 4 ? page(kit, ...parts) : choose(kit));
})();
