// agentnb front end, part 2: pairing analysis and message cards.

// Walk the messages once: pair each tool result with its call by tool_call_id, and state
// every problem in words (the same rules as agentnb.session.pairing). Returns per-index facts.
// `live`: a run holds the session, so calls still open at the end are in flight, not problems.
function analyse(msgs, toolStats, live) {
  const n = msgs.length;
  const parent = new Int32Array(n).fill(-1); // tool index -> assistant index
  const names = new Map(); // tool index -> the name of the call it answers
  const results = new Map(); // assistant index -> Map(call id -> tool index)
  const warn = new Map(); // index -> [text]
  const answered = new Set();
  const add = (i, text) => {
    if (!warn.has(i)) warn.set(i, []);
    warn.get(i).push(text);
  };
  let open = new Map(); // call id -> assistant index
  const called = new Map(); // call id -> tool name (a tool message need not repeat it)
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
        if (called.has(id)) names.set(i, called.get(id));
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
          called.set(id, (c.function || {}).name);
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
  let inflight = 0;
  if (open.size && live) inflight = open.size;
  else if (open.size) add(openAt, `calls ${[...open.keys()].join(", ")} have no tool result yet`);
  if (final >= 0 && final !== n - 1) final = -1; // only the last message is the answer
  return { parent, names, results, warn, final, inflight, steering: steering(msgs) };
}

// A message's JSON as the raw view shows it: what it keeps for its provider (a thinking
// block's signature, a reasoning item's encrypted_content, redacted thinking) named and
// measured as the reasoning fold says it, never verbatim (opaque, and long).
function shownWire(wire) {
  const data = wire && wire.provider_data;
  if (!data || typeof data !== "object" || !Array.isArray(data.reasoning)) return wire;
  const reasoning = data.reasoning.map((b) => {
    if (!b || typeof b !== "object") return b;
    const out = { ...b };
    for (const k of ["signature", "encrypted_content", "data"]) {
      if (k === "data" && b.type !== "redacted_thinking") continue;
      if (typeof out[k] === "string" && out[k]) out[k] = `kept for the provider (${fmtInt(out[k].length)} chars)`;
    }
    return out;
  });
  return { ...wire, provider_data: { ...data, reasoning } };
}

function rawToggle(wire, ed) {
  let raw = null;
  return h("button", {
    class: "anb-btn anb-raw-btn",
    type: "button",
    title: "show this message exactly as sent (OpenAI JSON)",
    text: "{ }",
    onclick: (ev) => {
      if (!raw) {
        raw = h("div", { class: "anb-raw-box" }, h("pre", { class: "anb-raw", text: JSON.stringify(shownWire(wire), null, 2) }));
        if (ed) {
          raw.append(h("div", { class: "anb-edited-note", text: `✎ edited (event #${ed.seq}, ${ed.how}): ${ed.changed.length ? "changed " + ed.changed.join(", ") : "no field changed"}` }));
          if (ed.before) raw.append(h("div", { class: "anb-muted", text: "before the edit:" }), h("pre", { class: "anb-raw anb-old", text: JSON.stringify(shownWire(ed.before), null, 2) }));
        }
        ev.currentTarget.closest(".anb-card").append(raw);
      } else raw.hidden = !raw.hidden;
    },
  });
}

// The "edited" mark of a hand-edited message, and a line saying what changed.
function editedBadge(ed) {
  return ed ? h("span", { class: "anb-edited", title: ed.text, text: "✎ edited" }) : null;
}

function editedNote(ed, wire) {
  if (!ed) return null;
  const what = ed.changed.length ? ed.changed.slice(0, 6).join(", ") + (ed.changed.length > 6 ? " …" : "") : "nothing";
  const box = h("details", { class: "anb-edited-note" },
    h("summary", { text: `✎ edited by hand (${ed.how}, event #${ed.seq}): changed ${what}` }));
  if (ed.before)
    box.append(h("div", { class: "anb-muted", text: "before the edit (what the tool or model produced):" }), jsonView(displayed(ed.before), new Set(ed.changed), "anb-old"),
      h("div", { class: "anb-muted", text: "now:" }), jsonView(displayed(wire), new Set(ed.changed), "anb-now"));
  return box;
}

// JSON held in strings (tool results, call arguments) parsed, for structural display.
function displayed(value) {
  if (typeof value === "string") {
    const v = tryJSON(value);
    return v === undefined ? value : displayed(v);
  }
  if (Array.isArray(value)) return value.map(displayed);
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = displayed(v);
    return out;
  }
  return value;
}

// Pretty-printed JSON, one line per value; lines at a changed path (or under it) are marked.
// With changes, unchanged stretches longer than a few lines fold to "… N unchanged lines"
// (click to show them), as a diff does.
const CONTEXT = 3;
function jsonView(value, changed, cls) {
  const pre = h("pre", { class: "anb-text anb-json anb-jsonview " + (cls || "") });
  const marked = (path) => {
    for (let p = path; p; p = p.replace(/(\.[^.[\]]*|\[\d+\])$/, "")) {
      if (changed.has(p)) return true;
      if (!/(\.[^.[\]]*|\[\d+\])$/.test(p)) break;
    }
    return false;
  };
  const lines = []; // [text, marked]
  const line = (text, path) => lines.push([text, Boolean(path && marked(path))]);
  const walk = (v, path, depth, key, last) => {
    const pad = "  ".repeat(depth);
    const label = key == null ? "" : JSON.stringify(key) + ": ";
    const comma = last ? "" : ",";
    if (v && typeof v === "object") {
      const arr = Array.isArray(v);
      const entries = arr ? v.map((x, i) => [i, x]) : Object.entries(v);
      if (!entries.length) return line(pad + label + (arr ? "[]" : "{}") + comma, path);
      line(pad + label + (arr ? "[" : "{"), path);
      entries.forEach(([k, x], j) => walk(x, arr ? `${path}[${k}]` : path ? `${path}.${k}` : String(k), depth + 1, arr ? null : k, j === entries.length - 1));
      line(pad + (arr ? "]" : "}") + comma, path);
    } else line(pad + label + JSON.stringify(v) + comma, path);
  };
  walk(value, "", 0, null, true);
  const near = new Uint8Array(lines.length);
  const any = lines.some((l) => l[1]);
  lines.forEach((l, i) => {
    if (!any || l[1]) for (let j = Math.max(0, i - CONTEXT); j <= Math.min(lines.length - 1, i + CONTEXT); j++) near[j] = 1;
  });
  const put = (into, [text, mark]) => into.append(mark ? h("span", { class: "anb-changed", text: text + "\n" }) : text + "\n");
  for (let i = 0; i < lines.length; ) {
    if (near[i]) {
      put(pre, lines[i++]);
      continue;
    }
    let j = i;
    while (j < lines.length && !near[j]) j++;
    const hidden = lines.slice(i, j);
    if (hidden.length <= 2) hidden.forEach((l) => put(pre, l));
    else {
      const gap = h("span", { class: "anb-gap", title: "click to show them", text: `  … ${hidden.length} unchanged lines\n` });
      gap.addEventListener("click", () => {
        const box = h("span");
        hidden.forEach((l) => put(box, l));
        gap.replaceWith(box);
      });
      pre.append(gap);
    }
    i = j;
  }
  return pre;
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
  const out = [h("span", { class: "anb-idx", text: `#${i}` }), editedBadge(m.ed)];
  if (m.it != null) {
    const wrap = ctx.maxIt && m.it > ctx.maxIt; // the wrap-up call after the last iteration
    out.push(h("span", { class: "anb-it", title: wrap ? `the wrap-up call after ${ctx.maxIt} iterations (tools disabled)` : "iteration: the model call this message belongs to", text: wrap ? `wrap-up after ${ctx.maxIt}` : `it ${m.it}` }));
  }
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
  const card = h("div", { class: "anb-card anb-result " + (failed ? "anb-failed" : "anb-ok") + (m.ed ? " anb-was-edited" : ""), "data-index": i });
  // An edited result is no longer what the tool returned: the mark leads, the tool's own
  // outcome follows as what it was.
  const outcome = failed ? `error: ${kind}` : "ok";
  const head = h("div", { class: "anb-head" },
    standalone ? badges(i, m, ctx) : [h("span", { class: "anb-idx", text: `#${i}` }), editedBadge(m.ed)],
    h("span", { class: "anb-role " + roleClass("tool"), text: "tool" }),
    h("span", { class: "anb-name", text: `← ${w.name || (ctx.names && ctx.names.get(i)) || "?"}` }),
    h("span", { class: "anb-id", text: `#${id}` }),
    m.ed
      ? h("span", { class: "anb-status anb-muted", title: "what the tool returned before the edit", text: `tool said: ${outcome}` })
      : h("span", { class: failed ? "anb-status anb-bad" : "anb-status anb-good", text: outcome }),
    stat.ms != null ? h("span", { class: "anb-lat", title: "tool latency", text: `${stat.ms} ms` }) : null,
    !standalone && m.tok != null ? h("span", { class: "anb-tok", text: `~${fmtInt(m.tok)} tok` }) : null,
    standalone && ctx.parent[i] >= 0 ? h("span", { class: "anb-ref", text: `answers message #${ctx.parent[i]}` }) : null,
    h("span", { class: "anb-spacer" }),
    rawToggle(w, m.ed),
    copyButton(w),
  );
  card.append(head);
  const wl = warnings(ctx.warn.get(i));
  if (wl) card.append(wl);
  const en = editedNote(m.ed, w);
  if (en) card.append(en);
  const flags = (m.pv && m.pv.flags) || [];
  if (flags.length) {
    card.classList.add("anb-has-injection");
    card.append(flagNotes(flags));
    const steered = ctx.steering && ctx.steering.steers.get(i);
    if (steered) card.append(steersNote(steered));
    card.append(markedContent(asText(w.content), flags));
  } else card.append(fold(pretty(asText(w.content)), "anb-json"));
  if (stat.note) card.append(h("div", { class: "anb-muted anb-tool-note", text: `note: ${stat.note}` }));
  if (stat.tb) {
    const lines = String(stat.tb).trimEnd().split("\n");
    card.append(h("details", { class: "anb-traceback" },
      h("summary", { text: `traceback (${lines.length} lines; the developer's copy, the model got the result above): ${lines[lines.length - 1]}` }),
      h("pre", { class: "anb-text", text: stat.tb })));
  }
  if (stat.sub) card.append(subsessionBox(stat.sub, ctx));
  return card;
}

function callBlock(call, i, m, ctx, msgs, seen) {
  const fn = call.function || {};
  const id = String(call.id);
  const key = ctx.keys && ctx.keys[id];
  const block = h("div", { class: "anb-call", "data-call": id },
    h("div", { class: "anb-call-head" },
      h("span", { class: "anb-arrow", text: "→ " }),
      h("span", { class: "anb-name", text: String(fn.name) }),
      h("span", { class: "anb-id", text: `#${id}` }),
      key ? h("span", { class: "anb-muted anb-idem", title: "idempotency key: the same for this call in every retry and recovery", text: ` key ${key}` }) : null),
    fold(pretty(fn.arguments || ""), "anb-json anb-args"),
    sourcesRow(call, m, ctx));
  const res = ctx.results.get(i);
  const j = res ? res.get(id) : undefined;
  if (seen.has(id)) block.append(h("div", { class: "anb-pending anb-bad", text: "shares its id with a call above: its result cannot be told apart" }));
  else if (j !== undefined) block.append(resultCard(j, msgs[j], ctx, false));
  else if (ctx.waiting && ctx.waiting[id]) block.append(waitingBox(id, ctx.waiting[id], ctx));
  else {
    const text = ctx.running ? "waiting for its result…" : ctx.paused ? `not run yet: the run is paused (next: ${ctx.next || "?"})` : "no result for this call";
    block.append(h("div", { class: "anb-pending", text }));
  }
  return block;
}

// A call that waits for a person: what was asked, when it lapses, and (with an approver)
// Approve / Deny, sent with the digest of the arguments shown.
function waitingBox(id, w, ctx) {
  const lapses = w.expires ? ` · lapses at ${new Date(w.expires * 1000).toLocaleTimeString()}` : "";
  const box = h("div", { class: "anb-pending anb-waiting", "data-call": id },
    h("span", { class: "anb-waiting-badge", text: "awaiting approval" }),
    h("span", { class: "anb-muted", title: w.digest, text: ` digest ${String(w.digest).slice(0, 12)}…${lapses}` }));
  if (w.can && ctx.decide) {
    box.append(
      h("button", { class: "anb-btn anb-approve", type: "button", text: "Approve", onclick: () => ctx.decide("approve", id, w.digest) }),
      h("button", { class: "anb-btn anb-deny", type: "button", text: "Deny", onclick: () => ctx.decide("deny", id, w.digest) }));
  } else box.append(h("span", { class: "anb-muted", text: " (approve with rt.approve(task_id, call_id, digest=…))" }));
  return box;
}

// What an assistant message keeps for its provider (provider_data): named and measured, never
// shown as text (a signature or an encrypted item is opaque), and what the server held.
const API_LABEL = { anthropic: "Anthropic", responses: "Responses API" };
function keptNotes(w) {
  const out = [];
  const data = w.provider_data;
  if (data && typeof data === "object") {
    const api = API_LABEL[data.api] || String(data.api || "the provider");
    for (const b of Array.isArray(data.reasoning) ? data.reasoning : []) {
      if (!b || typeof b !== "object") continue;
      const opaque = b.signature ? `signature, ${fmtInt(String(b.signature).length)} chars` : b.encrypted_content ? `encrypted_content, ${fmtInt(String(b.encrypted_content).length)} chars` : b.data ? `redacted, ${fmtInt(String(b.data).length)} chars` : b.id ? `id ${b.id}` : "unsigned";
      out.push(`kept for the provider: ${api} ${String(b.type || "reasoning")} (${opaque})`);
    }
    if (data.previous_response_id)
      out.push(`server-side state: sent ${fmtInt(data.sent)} of ${fmtInt(data.held)} messages; the server held the rest (previous_response_id ${data.previous_response_id})`);
  }
  if (w.reasoning_resent_as) out.push(`the app re-sent this reasoning as a ${String(w.reasoning_resent_as)} (it came unsigned)`);
  return out;
}

// A conversation's user turn: who played it (the simulated user's rules, a model, a person,
// a recording) and the rule, with why on hover; inline below, why, what it did not
// understand, its slips.
const USER_BY = { rules: "simulated user", model: "simulated user (model)", person: "typed by a person", recording: "replayed user" };
function userBadge(su) {
  const by = USER_BY[su.by] || String(su.by);
  const text = su.by === "person" ? `✍ ${by}` : `⚙ ${by} · ${su.rule || "?"}`;
  return h("span", { class: `anb-su anb-su-${su.by}`, title: su.why || "", text });
}
function userNote(su) {
  const box = h("div", { class: "anb-su-note" });
  if (su.why) box.append(h("div", { text: `why: ${su.why}` }));
  if (su.unread && su.unread.length) box.append(h("div", { class: "anb-su-unread", text: `not understood: ${su.unread.join("; ")}` }));
  if (su.slips && su.slips.length) box.append(h("div", { text: `slips: ${su.slips.join(", ")}` }));
  return box;
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
    m.su ? userBadge(m.su) : null,
    w.name ? h("span", { class: "anb-name", text: String(w.name) }) : null,
    h("span", { class: "anb-spacer" }),
    rawToggle(w, m.ed),
    copyButton(w));
  card.append(head);
  const wl = warnings(ctx.warn.get(i));
  if (wl) card.append(wl);
  const en = editedNote(m.ed, w);
  if (en) card.append(en);
  const figures = ctx.ground && ctx.ground.i === i ? ctx.ground.figures || [] : [];
  if (figures.length)
    card.append(h("div", { class: "anb-ungrounded-note", title: "agentnb.testing.ungrounded_figures: figures of the final answer that no tool result (nor the user) gave",
      text: `⚑ ${figures.length} figure${figures.length === 1 ? "" : "s"} in no tool result: ${figures.join(", ")}` }));
  const kept = keptNotes(w);
  if (w.reasoning_content || kept.length) {
    // Short reasoning (the stand-in's few [rule] lines) stays open; a long monologue folds.
    const chars = String(w.reasoning_content || "").length;
    card.append(h("details", { class: "anb-reasoning", open: chars <= FOLD_AT },
      h("summary", { text: w.reasoning_content ? `reasoning (${fmtInt(chars)} chars)` : "reasoning (opaque)" }),
      w.reasoning_content ? fold(asText(w.reasoning_content)) : null,
      ...kept.map((note) => h("div", { class: "anb-kept", title: "sent back to the provider exactly as it came; never shown as text", text: note }))));
  }
  const text = asText(w.content);
  if (text) {
    // The final answer and other assistant/user text stay open; system text folds.
    const limit = w.role === "system" || w.role === "developer" ? FOLD_AT : isFinal ? Infinity : 20000;
    card.append(figures.length ? highlighted(text, figures) : fold(text, "", limit));
  }
  if (w.refusal) card.append(h("div", { class: "anb-warnings", text: "refusal: " + asText(w.refusal) }));
  if (m.su) card.append(userNote(m.su));
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

// Text with each of `figures` marked (as text nodes: nothing is parsed as markup).
function highlighted(text, figures) {
  const pre = h("pre", { class: "anb-text" });
  const esc = figures.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).sort((a, b) => b.length - a.length);
  const re = new RegExp(`(?<![A-Za-z0-9.])(${esc.join("|")})(?![A-Za-z0-9])`, "g");
  let at = 0;
  for (const mm of text.matchAll(re)) {
    if (mm.index > at) pre.append(text.slice(at, mm.index));
    pre.append(h("mark", { class: "anb-ungrounded", title: "appears in no tool result", text: mm[0] }));
    at = mm.index + mm[0].length;
  }
  if (at < text.length) pre.append(text.slice(at));
  return pre;
}

// A sub-agent's own session (an agent run as a tool), nested and collapsed under its result.
function subsessionBox(sub, ctx) {
  const msgs = (sub.messages || []).map((m) => ((m.r = m.r || 0), m));
  const box = h("details", { class: "anb-subsession" },
    h("summary", { text: `sub-session ${sub.id || ""} (${msgs.length} message${msgs.length === 1 ? "" : "s"}${sub.stop_reason ? ", " + sub.stop_reason : ""})` }));
  let drawn = false;
  box.addEventListener("toggle", () => {
    if (drawn || !box.open) return;
    drawn = true;
    const facts = analyse(msgs, sub.tools || {}, false);
    const sctx = { ...facts, tools: sub.tools || {}, newSince: null, running: false, ground: null };
    for (let i = 0; i < msgs.length; i++) {
      if ((msgs[i].w || {}).role === "tool" && facts.parent[i] >= 0) continue;
      box.append(messageCard(i, msgs, sctx, false));
    }
  });
  return box;
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
        ? ` — sent before the messages in every model call: instructions ~${fmtInt(c.tok)} tok, ${c.tools.length} tool schemas ~${fmtInt(toolTok)} tok${c.output ? `, answer format ~${fmtInt(c.output.tok)} tok` : ""}`
        : " — not known yet: it appears with the first model call (or bind an agent: SessionView(session, agent=agent))"));
  box.append(h("div", { class: "anb-sub", text: "instructions (the system message)" }));
  box.append(c.instructions ? fold(c.instructions) : h("div", { class: "anb-muted", text: "(none)" }));
  for (const t of c.tools) {
    box.append(h("details", { class: "anb-tool" },
      h("summary", {}, h("span", { class: "anb-name", text: t.name }), ` ~${fmtInt(t.tok)} tok — `, h("span", { class: "anb-muted", text: t.description.split("\n")[0] })),
      fold(JSON.stringify(t.schema, null, 2), "anb-json")));
  }
  if (c.output) box.append(outputFormat(c.output));
  return box;
}

// The answer format a request asks for (Agent(output_type=...)): the schema as sent, strict or
// not, and what the strict rewrite changed (or why strict mode could not take it).
function outputFormat(o) {
  const how = o.strict ? "strict" : "not strict";
  const box = h("details", { class: "anb-tool anb-output-format" },
    h("summary", {}, h("span", { class: "anb-name", text: `answer format: ${o.name}` }),
      ` ~${fmtInt(o.tok)} tok — json_schema, ${how}${o.notes.length ? `, ${o.notes.length} notes` : ""}`));
  for (const n of o.notes) box.append(h("div", { class: o.strict ? "anb-muted" : "anb-not-understood", text: n }));
  box.append(fold(JSON.stringify(o.schema, null, 2), "anb-json"));
  return box;
}

const LEGEND =
  "#i: position in session.messages · it k: the loop iteration (model call) that produced the " +
  "message, 0 = the user input before the first call · ~N tok: estimated prompt tokens of that " +
  "message (agentnb.tokens: ~4 ASCII or ~2 CJK characters per token, +4 per message) · new: " +
  "appended since the previous model call, not yet seen by the model · header ~tok: the whole " +
  "transcript; the request context adds instructions and tool schemas to every call.";
