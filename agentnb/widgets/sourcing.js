// agentnb front end, part 2b: provenance marks (instructions found in data, steered calls,
// where each argument came from). Offsets are code points of the string at a JSON path.

// Which calls each flagged result steered, and the results each call was steered by.
function steering(msgs) {
  const steers = new Map(); // tool message index -> [{at, call, arg, tool}]
  const steeredBy = new Map(); // call id -> [{i, from, arg, path, why}]
  let flags = 0;
  msgs.forEach((m, at) => {
    const pv = m.pv || {};
    flags += (pv.flags || []).length;
    const names = new Map((((m.w || {}).tool_calls) || []).map((c) => [String(c.id), (c.function || {}).name]));
    for (const [call, byArg] of Object.entries(pv.args || {})) {
      for (const [arg, a] of Object.entries(byArg)) {
        if (!a.s) continue;
        for (const s of a.src) {
          if (s.i == null) continue;
          if (!steers.has(s.i)) steers.set(s.i, []);
          steers.get(s.i).push({ at, call, arg, tool: names.get(call) });
          if (!steeredBy.has(call)) steeredBy.set(call, []);
          steeredBy.get(call).push({ i: s.i, from: s.call, arg, path: s.p, why: s.why });
        }
      }
    }
  });
  return { steers, steeredBy, flags };
}

// Scroll to a card (a message by index, or a call by id) and flash it. A windowed list draws
// only the rows near the view: one not drawn is asked for first ("anb-reveal", the message's
// index), then found.
function jump(from, index, call) {
  const root = from.closest(".anb-session") || document;
  const find = () => call != null
    ? root.querySelector(`.anb-call[data-call="${CSS.escape(String(call))}"]`)
    : root.querySelector(`.anb-card[data-index="${Number(index)}"]`);
  let target = find();
  if (!target) {
    root.dispatchEvent(new CustomEvent("anb-reveal", { detail: { index: Number(index) } }));
    target = find();
  }
  if (!target) return;
  // a result: its flagged span in view (a long result's middle may not hold it)
  (target.querySelector("mark.anb-injection") || target).scrollIntoView({ block: "center" });
  target.classList.add("anb-flash");
  setTimeout(() => target.classList.remove("anb-flash"), 1600);
}

function flagNotes(flags) {
  return h("div", { class: "anb-flag-notes" }, flags.map((f) =>
    h("div", { class: "anb-injection-note", title: `rules: ${(f.rules || []).join(", ")}`,
      text: `⚑ instruction found in data${f.path ? " at " + f.path : ""}: ${f.why}` })));
}

function steersNote(list) {
  return h("div", { class: "anb-steers" }, h("span", { text: "⚑ this result steered: " }),
    list.map((s) => h("button", { class: "anb-btn anb-link anb-steer-link", type: "button", title: "go to the call",
      text: `${s.tool || "?"}(${s.arg}) #${s.call}`, onclick: (ev) => jump(ev.currentTarget, s.at, s.call) })));
}

// The content of a result, pretty-printed, with each flagged span marked (text nodes only).
function markedContent(text, flags) {
  const pre = h("pre", { class: "anb-text anb-json anb-marked" });
  const byPath = new Map();
  for (const f of flags) {
    if (!byPath.has(f.path)) byPath.set(f.path, []);
    byPath.get(f.path).push(f);
  }
  const esc = (s, quoted) => (quoted ? JSON.stringify(s).slice(1, -1) : s);
  const pieces = (s, path, quoted) => {
    const found = byPath.get(path);
    if (!found) return [quoted ? JSON.stringify(s) : s];
    const cps = Array.from(s);
    const out = quoted ? ['"'] : [];
    let at = 0;
    for (const f of found.slice().sort((a, b) => a.start - b.start)) {
      if (f.start > at) out.push(esc(cps.slice(at, f.start).join(""), quoted));
      out.push(h("mark", { class: "anb-injection", title: `instruction found in data: ${f.why}`, text: esc(cps.slice(Math.max(at, f.start), f.end).join(""), quoted) }));
      at = Math.max(at, f.end);
    }
    if (at < cps.length) out.push(esc(cps.slice(at).join(""), quoted));
    if (quoted) out.push('"');
    return out;
  };
  const value = tryJSON(text);
  if (value === undefined) {
    pre.append(...pieces(asText(text), "", false));
    return pre;
  }
  const walk = (v, path, depth, key, last) => {
    const pad = "  ".repeat(depth);
    const label = key == null ? "" : JSON.stringify(key) + ": ";
    const comma = last ? "" : ",";
    if (v && typeof v === "object") {
      const arr = Array.isArray(v);
      const entries = arr ? v.map((x, i) => [i, x]) : Object.entries(v);
      if (!entries.length) return pre.append(pad + label + (arr ? "[]" : "{}") + comma + "\n");
      pre.append(pad + label + (arr ? "[" : "{") + "\n");
      entries.forEach(([k, x], j) => walk(x, arr ? `${path}[${k}]` : path ? `${path}.${k}` : String(k), depth + 1, arr ? null : k, j === entries.length - 1));
      pre.append(pad + (arr ? "]" : "}") + comma + "\n");
    } else if (typeof v === "string") pre.append(pad + label, ...pieces(v, path, true), comma + "\n");
    else pre.append(pad + label + JSON.stringify(v) + comma + "\n");
  };
  walk(value, "", 0, null, true);
  return pre;
}

// Under a call: each argument's provenance as a chip; a click shows its sources. A steered
// call says so first, with a link to the result it came from.
function sourcesRow(call, m, ctx) {
  const id = String(call.id);
  const args = m.pv && m.pv.args && m.pv.args[id];
  if (!args) return null;
  const box = h("div", { class: "anb-prov" });
  const by = ctx.steering && ctx.steering.steeredBy.get(id);
  if (by) box.append(h("div", { class: "anb-steered-note" }, h("span", { text: "⚑ steered by an instruction found in data: " }),
    by.map((b) => h("button", { class: "anb-btn anb-link anb-steered-link", type: "button", title: b.why || "",
      text: `${b.arg} ← tool_result[${b.from}] ${b.path} (#${b.i})`, onclick: (ev) => jump(ev.currentTarget, b.i) }))));
  const detail = h("div", { class: "anb-prov-detail", hidden: true });
  const chips = Object.entries(args).map(([arg, a]) => {
    const kind = a.s ? "steered" : (a.k[0] || "invented");
    return h("button", { class: `anb-btn anb-chip anb-src-${kind}`, type: "button", "data-arg": arg, title: "where this value came from (click)",
      text: `${arg} ← ${a.s ? "⚑ " : ""}${a.k.join("+")}`, onclick: () => showSources(detail, arg, a) });
  });
  box.append(h("div", { class: "anb-chips" }, h("span", { class: "anb-muted", text: "provenance: " }), chips), detail);
  return box;
}

function showSources(detail, arg, a) {
  detail.hidden = false;
  detail.replaceChildren(h("div", { class: "anb-sub", text: `${arg}: ${a.s ? "steered — every source is an instruction found in data" : a.k.join(", ")}` }));
  if (!a.src.length) detail.append(h("div", { class: "anb-muted", text: "invented: found in nothing the model was given" }));
  for (const s of a.src)
    detail.append(h("div", { class: "anb-src" + (s.why ? " anb-src-flagged" : "") },
      h("b", { text: s.l }), s.p ? ` ${s.p}` : "", s.i != null ? ` (#${s.i})` : "", ` ${JSON.stringify(s.t)}`,
      s.c < 1 ? ` · confidence ${s.c}` : "", s.why ? h("div", { class: "anb-muted", text: `⚑ ${s.why}` }) : null));
}
