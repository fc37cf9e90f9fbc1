// stratagem view: the model-call inspector of an episode's step (issue 36 items 4 and 5). A call
// is drawn with its request history, its reply, the tools it called (name, arguments and what
// each returned: a tool call's reply has no text) and its re-asks; its header gives the spend of
// every attempt, so the decision's total is what was paid. Text only, as app.js (kit.el).
"use strict";

window.StratagemCalls = (() => {
  // A tool call as "name" and its arguments, then what the tool returned.
  function toolView(kit, tool) {
    return kit.el(
      "div",
      { class: "tool-call" },
      kit.el("div", { class: "role" }, "tool call ", kit.el("b", { class: "tool-name" }, kit.fmt(tool.name))),
      kit.value(tool.arguments),
      tool.result === undefined
        ? null
        : kit.el("div", { class: "tool-result" }, kit.el("div", { class: "role" }, "result"), resultView(kit, tool.result)),
    );
  }

  function resultView(kit, result) {
    if (result === null) return kit.el("p", { class: "muted" }, "not recorded");
    return typeof result === "string" ? kit.el("pre", {}, result) : kit.value(result);
  }

  // The request history: an assistant turn's tool calls and a tool's answer (named by the call
  // it answers) are drawn, not left as empty messages.
  function messagesView(kit, messages) {
    if (!Array.isArray(messages)) return kit.value(messages);
    const names = {};
    return messages.map((m) => {
      if (!m || typeof m !== "object" || !("role" in m)) return kit.value(m);
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      for (const c of calls) if (c && c.id != null) names[c.id] = c.name;
      const answers = m.role === "tool" && m.tool_call_id != null;
      const role = answers ? `tool result (${names[m.tool_call_id] ?? m.tool_call_id})` : m.role;
      const text = typeof m.content === "string" ? m.content : null;
      return kit.el(
        "div",
        { class: "message" },
        kit.el("div", { class: "role" }, role),
        text === null ? kit.value(m.content) : text || !calls.length ? kit.el("pre", {}, text) : null,
        calls.map((c) => toolView(kit, { name: c.name, arguments: c.arguments })),
      );
    });
  }

  // What an attempt said: its text, or the tools it called.
  function replyView(kit, attempt) {
    const said = attempt.reply || !(attempt.tools || []).length;
    return [
      said ? kit.el("div", { class: "reply" }, kit.el("div", { class: "role" }, "reply"), kit.el("pre", {}, kit.fmt(attempt.reply))) : null,
      (attempt.tools || []).map((t) => toolView(kit, t)),
      attempt.error ? kit.el("p", { class: "error" }, "error: " + attempt.error) : null,
    ];
  }

  function spend(kit, attempt) {
    return `tokens ${kit.fmt(attempt.tokens)} · ${kit.money(attempt.cost_usd)} · ${kit.fmt(attempt.latency_s, 2)} s` + (attempt.cached ? " · cached" : "");
  }

  function reaskView(kit, attempt, k) {
    return kit.el(
      "div",
      { class: "reask" },
      kit.el("div", { class: "head" }, kit.el("b", {}, `re-ask ${k + 1}`), " · ", spend(kit, attempt)),
      attempt.shown == null ? null : kit.el("div", { class: "message" }, kit.el("div", { class: "role" }, "shown"), kit.el("pre", {}, kit.fmt(attempt.shown))),
      replyView(kit, attempt),
    );
  }

  // The header's spend is the decision's, over every attempt; with re-asks, each attempt's too.
  function totals(kit, call) {
    const total = `tokens ${kit.fmt(call.total_tokens)} · ${kit.money(call.total_cost_usd)}`;
    if ((call.attempts || 1) <= 1) return [total, ` · ${kit.fmt(call.latency_s, 2)} s`, call.cached ? " · cached" : ""];
    const each = [call, ...call.reasks].map((a) => kit.money(a.cost_usd)).join(" + ");
    return [`${total} over ${call.attempts} attempts (`, kit.el("span", { class: "attempts" }, each), ")"];
  }

  function call(kit, c) {
    const model = kit.el("span", { class: "model", title: c.provider || "" }, kit.fmt(c.model));
    return kit.el(
      "div",
      { class: "call" },
      kit.el("div", { class: "head" }, kit.el("b", {}, `seat ${kit.fmt(c.seat)}`), ` · ${kit.fmt(c.purpose)} · `, model, " · ", totals(kit, c)),
      kit.el("details", {}, kit.el("summary", {}, "request messages"), messagesView(kit, c.messages)),
      c.reasoning ? kit.el("details", {}, kit.el("summary", {}, "thinking"), kit.el("pre", {}, kit.fmt(c.reasoning))) : null,
      replyView(kit, c),
      c.reasks && c.reasks.length
        ? kit.el("details", { open: true }, kit.el("summary", {}, `re-asks (${c.reasks.length})`), c.reasks.map((a, k) => reaskView(kit, a, k)))
        : null,
    );
  }

  return Object.freeze({ call });
})();
