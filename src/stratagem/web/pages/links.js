// stratagem view: links that last (issue 36 item 8). An episode's URL follows the step shown
// (1-based, as the page counts), names its experiment, and keeps the search it was opened from:
// such a link opens at the first step holding the searched text, marked. Marks are <mark>
// elements around text nodes split in place: no HTML is parsed from data.
"use strict";

window.StratagemLinks = (() => {
  // Every text of a step (events, replies, messages, tools), as the export's search reads it.
  function texts(value, into) {
    if (typeof value === "string") into.push(value);
    else if (Array.isArray(value)) value.forEach((v) => texts(v, into));
    else if (value && typeof value === "object") Object.values(value).forEach((v) => texts(v, into));
    return into;
  }

  // The index of the first step holding `q` (any case), or -1.
  function matchingStep(steps, q) {
    const wanted = q.toLowerCase();
    return steps.findIndex((step) => texts(step, []).some((t) => t.toLowerCase().includes(wanted)));
  }

  // Each occurrence of `q` under `root` wrapped in <mark class="hit">; the <details> holding
  // one are opened, so a hit in a request's messages shows. Returns the marks.
  function mark(root, q) {
    const wanted = q.toLowerCase();
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    const marks = [];
    for (let node of nodes) {
      let at = node.data.toLowerCase().indexOf(wanted);
      while (wanted && at >= 0) {
        const hit = node.splitText(at);
        node = hit.splitText(wanted.length);
        const wrap = document.createElement("mark");
        wrap.className = "hit";
        hit.replaceWith(wrap);
        wrap.append(hit);
        marks.push(wrap);
        at = node.data.toLowerCase().indexOf(wanted);
      }
    }
    for (const m of marks) for (let d = m.closest("details"); d; d = d.parentElement.closest("details")) d.open = true;
    return marks;
  }

  // The episode's URL for the step shown, its other parameters kept; replaced, not pushed, so
  // moving through steps adds no history entries and fires no hashchange.
  function followStep(route, source, id, query, step) {
    const next = Object.fromEntries(query);
    next.step = String(step + 1);
    history.replaceState(history.state, "", route({ path: ["e", source, id], query: next }));
  }

  // The step a URL asks for: `step` is 1-based; without one, a search's first matching step.
  function askedStep(query, steps) {
    const asked = parseInt(query.get("step") || "", 10);
    if (asked >= 1) return asked - 1;
    const q = query.get("q");
    return q ? matchingStep(steps, q) : -1;
  }

  // An episode's link: its experiment named (`x`), and the search it was found by (`q`).
  function episodeLink(source, id, experiment, q) {
    return { path: ["e", source, id], query: { x: experiment, ...(q ? { q } : {}) } };
  }

  // The episode a link names. Where its results directory does not hold it (a directory named
  // otherwise, or an old link's number from before sources were named by their folders), the
  // directory holding its experiment `x` is tried.
  async function locate(kit, source, id, query, perspective) {
    const path = (s) => `/api/episodes/${encodeURIComponent(s)}/${kit.pathId(id)}`;
    const x = query.get("x");
    try {
      const episode = await kit.api(path(source), { perspective });
      if (x && episode.experiment !== x) {
        throw new Error(`episode '${id}' of results '${source}' is in experiment '${episode.experiment}', not '${x}'`);
      }
      return { source, episode };
    } catch (error) {
      if (!x) throw error;
      const holding = (await kit.api("/api/experiments")).filter((e) => e.id === x && e.source !== source);
      for (const e of holding) {
        try {
          return { source: e.source, episode: await kit.api(path(e.source), { perspective }) };
        } catch (_) {
          // not in this one either
        }
      }
      throw error;
    }
  }

  return Object.freeze({ askedStep, episodeLink, followStep, locate, mark, matchingStep });
})();
