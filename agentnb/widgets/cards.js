// agentnb front end, part 2: pairing analysis and message cards.

// Walk the messages once: pair each tool result with its call by tool_call_id, and state
// every problem in words (the same rules as agentnb.session.pairing). Returns per-index facts.
function analyse(msgs, toolStats) {
  const n = msgs.length;
  const parent = new Int32Array(n).fill(-1); // tool index -> assistant index
  const results = new Map(); // assistant index -> Map(call id -> tool index)
  const warn = new Map(); // index -> [text]
  const answered = new Set();
  const add = (i, text) => {
    if (!warn.has(i)) warn.set(i, []);
    warn.get(i).push(text);
  };
  let open = new Map(); // call id -> assistant index
  let openAt = -1;
  let final = -1;
  for (let i = 0; i < n; i++) {
    const w = msgs[i].w || {};
    const role = w.role;
    if (role === "tool") {
      const id = String(w.tool_call_id);
      if (open.has(id)) {
        const at = open.get(id);
        parent[i] = at;
        results.get(at).set(id, i);
        open.delete(id);
        answered.add(id);
      } else {
        const why = answered.has(id) ? "was already answered" : "matches no open call";
        add(i, `orphan: tool result for call ${JSON.stringify(id)} ${why}`);
      }
      const body = tryJSON(asText(w.content));
      if (body && typeof body === "object" && body.ok === false) {
        const stat = toolStats[id] || {};
        const kind = stat.kind || body.kind || "error";
        add(i, `error result (${kind}): ${asText(body.error)}`);
      }
      continue;
    }
    if (open.size) {
      add(openAt, `calls ${[...open.keys()].join(", ")} have no tool result before message #${i}`);
      open = new Map();
    }
    if (role === "assistant") {
      const calls = w.tool_calls || [];
      if (calls.length) {
        openAt = i;
        results.set(i, new Map());
        for (const c of calls) {
          const id = String(c.id);
          if (open.has(id)) add(i, `mismatched ids: two tool calls share the id ${JSON.stringify(id)}`);
          open.set(id, i);
          const args = (c.function || {}).arguments;
          if (args && tryJSON(args) === undefined && args.trim() !== "")
            add(i, `arguments of ${(c.function || {}).name} (#${id}) are not valid JSON`);
        }
      } else if (asText(w.content).trim()) {
        final = i;
      }
    } else {
      final = -1;
    }
  }
  if (open.size) add(openAt, `calls ${[...open.keys()].join(", ")} have no tool result yet`);
  if (final >= 0 && final !== n - 1) final = -1; // only the last message is the answer
  return { parent, results, warn, final };
}

function rawToggle(wire) {
  let raw = null;
  return h("button", {
    class: "anb-btn anb-raw-btn",
    type: "button",
    title: "show this message exactly as sent (OpenAI JSON)",
    text: "{ }",
    onclick: (ev) => {
      if (!raw) {
        raw = h("pre", { class: "anb-raw", text: JSON.stringify(wire, null, 2) });
        ev.currentTarget.closest(".anb-card").append(raw);
      } else raw.hidden = !raw.hidden;
    },
  });
}

function copyButton(wire) {
  const b = h("button", {
    class: "anb-btn anb-copy",
    type: "button",
    title: "copy this message as JSON",
    text: "copy",
  });
  b.addEventListener("click", () => copyText(JSON.stringify(wire, null, 2), b));
  return b;
}

function warnings(list) {
  if (!list || !list.length) return null;
  return h("ul", { class: "anb-warnings" }, list.map((t) => h("li", { text: "⚠ " + t })));
}

function badges(i, m, ctx) {
  const out = [h("span", { class: "anb-idx", text: `#${i}` })];
  if (m.it != null) out.push(h("span", { class: "anb-it", title: "iteration: the model call this message belongs to", text: `it ${m.it}` }));
  if (m.tok != null) out.push(h("span", { class: "anb-tok", title: "estimated prompt tokens of this message", text: `~${fmtInt(m.tok)} tok` }));
  if (ctx.newSince != null && i >= ctx.newSince) out.push(h("span", { class: "anb-new", title: "not yet seen by a model call", text: "new" }));
  return out;
}

// A tool result: nested under its call, or standalone (filters, orphans).
function resultCard(i, m, ctx, standalone) {
  const w = m.w || {};
  const id = String(w.tool_call_id);
  const stat = ctx.tools[id] || {};
  const body = tryJSON(asText(w.content));
  const failed = (body && typeof body === "object" && body.ok === false) || stat.ok === false;
  const kind = stat.kind || (body && body.kind) || (failed ? "error" : null);
  const card = h("div", { class: "anb-card anb-result " + (failed ? "anb-failed" : "anb-ok"), "data-index": i });
  const head = h("div", { class: "anb-head" },
    standalone ? badges(i, m, ctx) : h("span", { class: "anb-idx", text: `#${i}` }),
    h("span", { class: "anb-role " + roleClass("tool"), text: "tool" }),
    h("span", { class: "anb-name", text: `← ${w.name || "?"}` }),
    h("span", { class: "anb-id", text: `#${id}` }),
    h("span", { class: failed ? "anb-status anb-bad" : "anb-status anb-good", text: failed ? `error: ${kind}` : "ok" }),
    stat.ms != null ? h("span", { class: "anb-lat", title: "tool latency", text: `${stat.ms} ms` }) : null,
    !standalone && m.tok != null ? h("span", { class: "anb-tok", text: `~${fmtInt(m.tok)} tok` }) : null,
    standalone && ctx.parent[i] >= 0 ? h("span", { class: "anb-ref", text: `answers message #${ctx.parent[i]}` }) : null,
    h("span", { class: "anb-spacer" }),
    rawToggle(w),
    copyButton(w),
  );
  card.append(head);
  const wl = warnings(ctx.warn.get(i));
  if (wl) card.append(wl);
  card.append(fold(pretty(asText(w.content)), "anb-json"));
  return card;
}

function callBlock(call, i, m, ctx, msgs, seen) {
  const fn = call.function || {};
  const id = String(call.id);
  const block = h("div", { class: "anb-call" },
    h("div", { class: "anb-call-head" },
      h("span", { class: "anb-arrow", text: "→ " }),
      h("span", { class: "anb-name", text: String(fn.name) }),
      h("span", { class: "anb-id", text: `#${id}` })),
    fold(pretty(fn.arguments || ""), "anb-json anb-args"));
  const res = ctx.results.get(i);
  const j = res ? res.get(id) : undefined;
  if (seen.has(id)) block.append(h("div", { class: "anb-pending anb-bad", text: "shares its id with a call above: its result cannot be told apart" }));
  else if (j !== undefined) block.append(resultCard(j, msgs[j], ctx, false));
  else block.append(h("div", { class: "anb-pending", text: ctx.running ? "waiting for its result…" : "no result for this call" }));
  return block;
}

// One top-level card. `flat` shows tool results standalone (filters, search, orphans).
function messageCard(i, msgs, ctx, flat) {
  const m = msgs[i];
  const w = m.w || {};
  if (w.role === "tool") return resultCard(i, m, ctx, true);
  const isFinal = i === ctx.final;
  const card = h("div", { class: `anb-card ${roleClass(w.role)}` + (isFinal ? " anb-final" : ""), "data-index": i });
  const head = h("div", { class: "anb-head" },
    badges(i, m, ctx),
    h("span", { class: "anb-role " + roleClass(w.role), text: String(w.role) }),
    isFinal ? h("span", { class: "anb-final-badge", text: "final answer" }) : null,
    w.name ? h("span", { class: "anb-name", text: String(w.name) }) : null,
    h("span", { class: "anb-spacer" }),
    rawToggle(w),
    copyButton(w));
  card.append(head);
  const wl = warnings(ctx.warn.get(i));
  if (wl) card.append(wl);
  if (w.reasoning_content) {
    // Short reasoning (the stand-in's few [rule] lines) stays open; a long monologue folds.
    const chars = String(w.reasoning_content).length;
    card.append(h("details", { class: "anb-reasoning", open: chars <= FOLD_AT },
      h("summary", { text: `reasoning (${fmtInt(chars)} chars)` }),
      fold(asText(w.reasoning_content))));
  }
  const text = asText(w.content);
  if (text) {
    // The final answer and other assistant/user text stay open; system text folds.
    const limit = w.role === "system" || w.role === "developer" ? FOLD_AT : isFinal ? Infinity : 20000;
    card.append(fold(text, "", limit));
  }
  if (w.refusal) card.append(h("div", { class: "anb-warnings", text: "refusal: " + asText(w.refusal) }));
  const seen = new Set();
  for (const call of w.tool_calls || []) {
    if (flat) {
      const fn = call.function || {};
      card.append(h("div", { class: "anb-call" },
        h("div", { class: "anb-call-head" }, h("span", { text: "→ " }), h("span", { class: "anb-name", text: String(fn.name) }), h("span", { class: "anb-id", text: `#${call.id}` })),
        fold(pretty(fn.arguments || ""), "anb-json anb-args")));
    } else card.append(callBlock(call, i, m, ctx, msgs, seen));
    seen.add(String(call.id));
  }
  return card;
}

// The request context, first and collapsed: instructions and each tool's schema.
function contextCard(c) {
  c = c || { instructions: "", tok: 0, tools: [] };
  const toolTok = c.tools.reduce((s, t) => s + (t.tok || 0), 0);
  const known = c.instructions || c.tools.length;
  const box = h("details", { class: "anb-card anb-context" },
    h("summary", {},
      h("b", { text: "Request context" }),
      known
        ? ` — sent before the messages in every model call: instructions ~${fmtInt(c.tok)} tok, ${c.tools.length} tool schemas ~${fmtInt(toolTok)} tok`
        : " — not known yet: it appears with the first model call (or bind an agent: SessionView(session, agent=agent))"));
  box.append(h("div", { class: "anb-sub", text: "instructions (the system message)" }));
  box.append(c.instructions ? fold(c.instructions) : h("div", { class: "anb-muted", text: "(none)" }));
  for (const t of c.tools) {
    box.append(h("details", { class: "anb-tool" },
      h("summary", {}, h("span", { class: "anb-name", text: t.name }), ` ~${fmtInt(t.tok)} tok — `, h("span", { class: "anb-muted", text: t.description.split("\n")[0] })),
      fold(JSON.stringify(t.schema, null, 2), "anb-json")));
  }
  return box;
}

const LEGEND =
  "#i: position in session.messages · it k: the loop iteration (model call) that produced the " +
  "message, 0 = the user input before the first call · ~N tok: estimated prompt tokens of that " +
  "message (agentnb.tokens: ~4 ASCII or ~2 CJK characters per token, +4 per message) · new: " +
  "appended since the previous model call, not yet seen by the model · header ~tok: the whole " +
  "transcript; the request context adds instructions and tool schemas to every call.";
