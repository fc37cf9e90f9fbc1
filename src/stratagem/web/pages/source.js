// stratagem view: where the pages' data comes from (issue 25 item 7). Served, the JSON API of
// `stratagem view` (fetch); in a static export (stratagem.web.export), its data files, which are
// scripts because browsers refuse fetch() of file:// URLs. Both give the same answers: the export
// writes what the API's data layer returns, and pages, filters and searches the episode list here.
"use strict";

window.StratagemSource = (() => {
  // An export's index.html names its perspective in this meta tag (stratagem.web.export).
  const EXPORT = document.querySelector('meta[name="stratagem-export"]');
  const exported = EXPORT ? EXPORT.content : null; // "all", "seat:K", or null when served
  const PER_PAGE = 50;
  const loading = {};

  function api(path, params) {
    return exported === null ? fetchJSON(path, params) : fromExport(path, params || {});
  }

  // `api(path)` asked again at most every `ms`, one request at a time: for a part of a page the
  // page's polling redraws (the Analysis and Charts parts), whose answer is slow to compute.
  const kept = {};
  function apiAtMostEvery(ms, path) {
    const last = kept[path];
    if (last && (last.pending || Date.now() - last.at < ms)) return last.answer;
    const entry = { at: Date.now(), pending: true };
    entry.answer = api(path).finally(() => { entry.pending = false; entry.at = Date.now(); });
    entry.answer.catch(() => { if (kept[path] === entry) delete kept[path]; });
    kept[path] = entry;
    return entry.answer;
  }

  // An export's data file is a script setting window.STRATAGEM_DATA[its path] (browsers refuse
  // fetch() of file:// URLs); it is added once, on demand.
  function dataFile(file) {
    if (!loading[file]) {
      loading[file] = new Promise((resolve, reject) => {
        const tag = document.createElement("script");
        tag.src = file;
        tag.onload = () => {
          const found = (window.STRATAGEM_DATA || {})[file];
          if (found === undefined) reject(new Error(`${file} holds no data`));
          else resolve(found);
        };
        tag.onerror = () => {
          delete loading[file];
          reject(new Error("not in this export: " + file));
        };
        document.head.append(tag);
      });
    }
    return loading[file];
  }

  // Ids as hex of their UTF-8 bytes: how an API path carries an experiment's or episode's id
  // (any id is then one segment: a "/", "%", "?", "#" or ".." in it too), and how
  // stratagem.web.export names the files.
  function hex(text) {
    return Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  async function fromExport(path, params) {
    const parts = path.split("/").slice(2).map(decodeURIComponent); // ids are hex already
    if (parts[0] === "sources" && parts.length === 1) return dataFile("data/sources.js");
    if (parts[0] === "experiments" && parts.length === 1) return dataFile("data/experiments.js");
    if (parts[0] === "experiments" && parts.length === 4) {
      const folder = `data/x/${hex(parts[1])}/${parts[2]}`;
      if (parts[3] === "cells") return dataFile(folder + "/cells.js");
      if (parts[3] === "analysis") return dataFile(folder + "/analysis.js");
      if (parts[3] === "charts") return dataFile(folder + "/charts.js");
      if (parts[3] === "episodes") return exportedPage(folder, params);
    }
    if (parts[0] === "episodes" && parts.length === 3) {
      const seen = params.perspective || "all";
      if (exported !== "all" && seen !== exported) {
        throw new Error(`this export holds only the ${exported} perspective`);
      }
      const name = seen === "all" ? "all" : seen.replace(":", "-");
      return dataFile(`data/e/${hex(parts[1])}/${parts[2]}/${name}.js`);
    }
    if (parts[0] === "pairs" && parts.length === 3) return dataFile(`data/p/${hex(parts[1])}/${parts[2]}.js`);
    if (parts[0] === "compare" && parts.length === 1) return exportedComparison(params);
    if (parts[0] === "diffs" && parts.length === 1) return dataFile("data/diffs.js"); // export only
    if (parts[0] === "diff" && parts.length === 1) return dataFile(`data/d/${twoRefs(params)}.js`);
    throw new Error("not in this export: " + path);
  }

  // A source's name and an id as the API's `a=`/`b=` carry them: the name URL-encoded (it may
  // hold "/", an id too), so the first "/" ends it.
  function ref(source, id) {
    return `${encodeURIComponent(source)}/${id}`;
  }

  // "<source>/<id>" twice as the export's folder names: "<hex sa>/<hex a>/<hex sb>/<hex b>".
  function twoRefs(params) {
    const part = (ref) => {
      const [source, ...rest] = String(ref || "").split("/");
      return `${hex(decodeURIComponent(source))}/${hex(rest.join("/"))}`;
    };
    return `${part(params.a)}/${part(params.b)}`;
  }

  // What /api/compare answers: both exported episodes and the export's alignment of their steps.
  async function exportedComparison(params) {
    const seen = params.perspective || "all";
    const name = seen === "all" ? "all" : seen.replace(":", "-");
    const episode = (ref) => {
      const [source, ...rest] = String(ref || "").split("/");
      return fromExport(`/api/episodes/${source}/${hex(rest.join("/"))}`, { perspective: seen });
    };
    const [a, b, aligned] = await Promise.all([
      episode(params.a),
      episode(params.b),
      dataFile(`data/c/${twoRefs(params)}/${name}.js`),
    ]);
    return { a, b, ...aligned };
  }

  // The episodes page the API would answer, filtered and searched here over the exported list:
  // each filter by the export's index of matching episodes (the data layer's own filters).
  async function exportedPage(folder, params) {
    const { items, index } = await dataFile(folder + "/episodes.js");
    let kept = items.map((_, k) => k);
    for (const key of Object.keys(index)) {
      if (!params[key]) continue;
      if (key === "group" && !Object.hasOwn(index.group, params.group)) {
        throw new Error(`filter group='${params.group}': no leaderboard row of this experiment has it`);
      }
      const matching = new Set(index[key][params[key]] || []);
      kept = kept.filter((k) => matching.has(k));
    }
    if (params.q) {
      const texts = await dataFile(folder + "/search.js");
      const q = params.q.toLowerCase();
      kept = kept.filter((k) => texts[k].includes(q));
    }
    const page = Math.max(0, parseInt(params.page || "0", 10) || 0);
    const shown = kept.slice(page * PER_PAGE, (page + 1) * PER_PAGE).map((k) => items[k]);
    return { total: kept.length, page, per_page: PER_PAGE, items: shown };
  }

  async function fetchJSON(path, params) {
    const query = params ? new URLSearchParams(params).toString() : "";
    const response = await fetch(query ? path + "?" + query : path, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    const body = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  return Object.freeze({ api, apiAtMostEvery, exported, id: hex, ref });
})();
