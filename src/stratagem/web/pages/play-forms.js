// stratagem play: the controls of each kind of move (web/play/forms.py describes them). Each
// builder returns {node, enable(on)} and calls send(line) with the line a person would type in
// the terminal; inputs are checked here first (a range's ends, a text's limit, the shares' step
// and sum, the counts a hand holds), and the engine checks the line again whatever is sent.
"use strict";

(() => {
  function el(tag, props, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else if (key === "on") {
        for (const [event, fn] of Object.entries(value)) node.addEventListener(event, fn);
      } else node[key] = value;
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid !== null && kid !== undefined) node.append(kid instanceof Node ? kid : String(kid));
    }
    return node;
  }

  // A form: its controls, a line for what is wrong, and enable() over every input and button.
  function form(...kids) {
    const problem = el("div", { class: "problem", role: "alert" });
    const node = el("div", { class: "controls-box" }, ...kids, problem);
    return {
      node,
      problem: (text) => (problem.textContent = text || ""),
      enable(on) {
        for (const c of node.querySelectorAll("button, input, textarea, select")) c.disabled = !on;
      },
    };
  }

  function row(...kids) {
    return el("div", { class: "controls" }, ...kids);
  }

  function choice(spec, send) {
    const buttons = spec.labels.map((label) =>
      el("button", { type: "button", class: "choice", on: { click: () => send(label) } }, label),
    );
    return form(row(buttons));
  }

  function integer(spec, send) {
    const input = el("input", { type: "number", min: spec.low, max: spec.high, step: 1,
                                name: "amount", required: true });
    const f = form(row(el("label", {}, `A whole number from ${spec.low} to ${spec.high}: `, input),
                       el("button", { type: "button", on: { click: go } }, "Send")));
    function go() {
      const text = input.value.trim();
      const n = Number(text);
      if (!/^[+-]?\d+$/.test(text) || n < spec.low || n > spec.high) {
        f.problem(`Type a whole number from ${spec.low} to ${spec.high}.`);
        return;
      }
      f.problem("");
      send(String(n));
    }
    input.addEventListener("keydown", (e) => e.key === "Enter" && go());
    return f;
  }

  function shares(spec, send) {
    const inputs = spec.parties.map(() =>
      el("input", { type: "number", min: 0, max: spec.total, step: spec.step, class: "share" }),
    );
    const f = form(
      row(spec.parties.map((party, k) => el("label", {}, `${party}: `, inputs[k]))),
      row(el("span", { class: "muted" },
             `Multiples of ${spec.step}, together exactly ${spec.total}.`),
          el("button", { type: "button", on: { click: go } }, "Propose")),
    );
    function go() {
      const values = inputs.map((i) => i.value.trim());
      if (values.some((v) => !/^\d+$/.test(v) || Number(v) % spec.step)) {
        f.problem(`Each share is a whole multiple of ${spec.step}.`);
        return;
      }
      const sum = values.reduce((a, v) => a + Number(v), 0);
      if (sum !== spec.total) {
        f.problem(`The shares add up to ${sum}, not ${spec.total}.`);
        return;
      }
      f.problem("");
      send(values.map(Number).join("/"));
    }
    return f;
  }

  // A text area with its limit shown as the person types.
  function limitedText(max, placeholder) {
    const area = el("textarea", { name: "text", placeholder: placeholder || "" });
    if (max) area.maxLength = max;
    const count = el("span", { class: "muted count" }, max ? `0 / ${max}` : "");
    area.addEventListener("input", () => {
      if (max) count.textContent = `${area.value.length} / ${max}`;
    });
    return { area, count };
  }

  function text(spec, send) {
    const { area, count } = limitedText(spec.max_chars);
    const f = form(area, row(count, el("button", { type: "button", on: { click: go } }, "Send")));
    function go() {
      if (spec.max_chars && area.value.length > spec.max_chars) {
        f.problem(`At most ${spec.max_chars} characters.`);
        return;
      }
      f.problem("");
      send(area.value);
    }
    return f;
  }

  // ---- TradeCraft (seed-002 §2.5-2.6) --------------------------------------------------------
  // Items picked from a hand, each with an amount; `whole` refuses fractions.
  function picker(title, hand, whole) {
    const rows = el("div", { class: "picks" });
    const box = el("fieldset", {}, el("legend", {}, title), rows,
                   el("button", { type: "button", class: "add", on: { click: () => add() } },
                      "Add an item"));
    function add() {
      const select = el("select", { class: "item" },
                        hand.map(([item, n]) => el("option", { value: item }, `${item} (${n})`)));
      const amount = el("input", { type: "text", class: "amount", value: "1", size: 5 });
      const remove = el("button", { type: "button", on: { click: () => line.remove() } }, "×");
      const line = row(select, amount, remove);
      rows.append(line);
    }
    // {item: amount} or a message saying what is wrong.
    function value() {
      const held = Object.fromEntries(hand.map(([item, n]) => [item, Number(n)]));
      const out = {};
      for (const line of rows.children) {
        const item = line.querySelector("select").value;
        const text = line.querySelector("input").value.trim();
        const ok = whole ? /^\d+$/.test(text) : /^\d+(\/\d+)?$/.test(text);
        if (!ok || Number(amountOf(text)) <= 0) return `${title}: ${item}'s amount '${text}' is not allowed`;
        if (item in out) return `${title}: ${item} is listed twice`;
        if (amountOf(text) > held[item]) return `${title}: ${held[item]} ${item} held, not ${text}`;
        out[item] = whole ? Number(text) : text;
      }
      return out;
    }
    return { box, value, add };
  }

  // "a/b" or "n" as a number, without eval.
  function amountOf(text) {
    const [a, b] = text.split("/");
    return b === undefined ? Number(a) : Number(a) / Number(b);
  }

  function tools(send) {
    const name = el("input", { type: "text", name: "item", placeholder: "an item, e.g. stick" });
    return el("div", { class: "tools" }, row(
      el("label", {}, "Look up: ", name),
      el("button", { type: "button", class: "lookup",
                     on: { click: () => name.value.trim() && send(`?item ${name.value.trim()}`) } },
         "Item info"),
      el("button", { type: "button", class: "recipes", on: { click: () => send("?recipes") } },
         "What can my hand craft?"),
    ));
  }

  function proposal(spec, send) {
    const offer = picker("You give", spec.own, !spec.fractional);
    const ask = picker("You ask for", spec.partner, !spec.fractional);
    const { area, count } = limitedText(null, "a message to your partner (optional)");
    const f = form(offer.box, ask.box, area, count,
                   row(el("button", { type: "button", class: "propose", on: { click: go } },
                          "Propose"),
                       el("button", { type: "button", on: { click: () => send("") } },
                          "Propose nothing")),
                   tools(send));
    function go() {
      const give = offer.value(), want = ask.value();
      const wrong = [give, want].find((v) => typeof v === "string");
      if (wrong) {
        f.problem(wrong);
        return;
      }
      f.problem("");
      send(JSON.stringify({ offer: give, request: want, message: area.value }));
    }
    return f;
  }

  function decision(spec, send) {
    const { area } = limitedText(null, "a reply to the proposer (optional)");
    const decide = (word) => () =>
      send(area.value.trim() ? JSON.stringify({ decision: word, message: area.value }) : word);
    return form(area, row(
      el("button", { type: "button", class: "accept", on: { click: decide("accept") } }, "Accept"),
      el("button", { type: "button", class: "reject", on: { click: decide("reject") } }, "Reject"),
    ), tools(send));
  }

  function craft(spec, send) {
    const inputs = picker("Inputs", spec.hand, false);
    const listId = `items-${Math.random().toString(36).slice(2)}`;
    const output = el("input", { type: "text", class: "output", placeholder: "an item to make" });
    output.setAttribute("list", listId);
    const made = el("input", { type: "number", min: 1, step: 1, value: 1, class: "made" });
    const f = form(
      inputs.box,
      row(el("label", {}, "Output: ", output), el("label", {}, " count ", made),
          el("datalist", { id: listId }, spec.items.map((item) => el("option", { value: item })))),
      row(el("button", { type: "button", class: "check", on: { click: check } }, "Check"),
          el("button", { type: "button", class: "apply", on: { click: () => send("apply") } },
             "Apply"),
          el("button", { type: "button", class: "done", on: { click: () => send("done") } },
             "Done crafting")),
      tools(send),
    );
    function check() {
      const given = inputs.value();
      if (typeof given === "string") {
        f.problem(given);
        return;
      }
      if (!output.value.trim() || !/^\d+$/.test(made.value) || Number(made.value) < 1) {
        f.problem("Name the item to make and a whole count of at least 1.");
        return;
      }
      f.problem("");
      send(`check ${JSON.stringify({ input: given, output: { [output.value.trim()]: Number(made.value) } })}`);
    }
    return f;
  }

  window.StratagemPlayForms = { choice, integer, shares, text, proposal, decision, craft };
  window.StratagemPlayKit = { el };
})();
