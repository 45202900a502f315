// agentnb front end, part 6: the inspectors (request of model call k, diff j -> k, timeline).

const BUDGET_PARTS = [
  ["instructions", "instructions"],
  ["tools", "tool schemas"],
  ["output", "answer format"],
  ["history", "history (messages)"],
  ["reply_reserve", "reserved for the reply"],
];

function budgetBar(b) {
  const window = b.context_window || 0;
  const scale = Math.max(window, b.total + (b.reply_reserve || 0), 1);
  const bar = h("div", { class: "anb-budget-bar" });
  const legend = h("div", { class: "anb-budget-legend" });
  for (const [key, label] of BUDGET_PARTS) {
    const v = b[key] || 0;
    if (!v && (key === "reply_reserve" || key === "output")) continue;
    const seg = h("div", { class: `anb-seg anb-seg-${key}`, title: `${label}: ~${fmtInt(v)} tok` });
    seg.style.width = `${(100 * v) / scale}%`;
    bar.append(seg);
    legend.append(h("span", { class: `anb-key anb-seg-${key}` }), h("span", { text: ` ${label} ~${fmtInt(v)}  ` }));
  }
  const head = window
    ? `context window ${fmtInt(window)} tok: ${fmtInt(b.total)} used by the prompt, ${fmtInt(b.reply_reserve || 0)} reserved for the reply, ${fmtInt(b.available)} free`
    : `prompt ~${fmtInt(b.total)} tok (the agent sets no context_window, so the bar is the prompt itself)`;
  const policy = b.policy ? h("div", { class: "anb-muted anb-policy", text: `context policy: ${b.policy}${b.note ? " — " + b.note : ""}` }) : null;
  return h("div", { class: "anb-budget" }, h("div", { class: "anb-sub", text: head }), bar, legend, policy);
}

// What the model understood from this request (a model that can say, as the stand-in does):
// the knobs a line set, with that line; the defaults folded; the lines it did not understand.
function understoodTable(u) {
  const box = h("div", { class: "anb-understood" }, h("div", { class: "anb-sub", text: u.title || "what the model understood" }));
  const row = (r) => h("tr", {}, h("td", { class: "anb-name", text: r.knob }), h("td", { text: r.value }), h("td", { text: r["set by"] }), h("td", { class: "anb-muted", text: r.where }));
  const head = h("tr", {}, ...["knob", "value", "set by", "where"].map((t) => h("th", { text: t })));
  const set = u.rows.filter((r) => r.where);
  const unset = u.rows.filter((r) => !r.where);
  box.append(h("table", {}, head, ...set.map(row)));
  if (unset.length) box.append(h("details", {}, h("summary", { text: `${unset.length} knobs at their default` }), h("table", {}, ...unset.map(row))));
  const missed = u.not_understood || [];
  box.append(h("div", { class: missed.length ? "anb-not-understood" : "anb-muted", text: `not understood (${missed.length})${missed.length ? ":" : ""}` }));
  for (const m of missed) box.append(h("div", { class: "anb-not-understood", text: `[${m.where}] ${m.line}` }));
  return box;
}

function renderRequest(d, el, goto, compare) {
  const nav = h("div", { class: "anb-toolbar" },
    h("b", { text: `Request of model call ${d.k} of ${d.n}` }),
    goto && d.k > 1 ? h("button", { class: "anb-btn", type: "button", text: "◀ previous", onclick: () => goto(d.k - 1) }) : null,
    goto && d.k < d.n ? h("button", { class: "anb-btn", type: "button", text: "next ▶", onclick: () => goto(d.k + 1) }) : null,
    compare && d.k > 1 ? h("button", { class: "anb-btn anb-diff-prev", type: "button", text: `diff ${d.k - 1} → ${d.k}`, onclick: () => compare(d.k - 1, d.k) }) : null);
  el.append(nav, budgetBar({ ...d.budget, policy: d.policy, note: d.note }));
  if (d.understood) el.append(understoodTable(d.understood));
  const msgs = d.messages.map((m) => ((m.r = 0), m));
  const facts = analyse(msgs, {}, false);
  const ctx = { ...facts, tools: {}, newSince: null, running: false, ground: null };
  el.append(h("div", { class: "anb-sub", text: `messages (${msgs.length}, exactly as sent)` }));
  const box = h("div", { class: "anb-req-msgs" });
  for (let i = 0; i < msgs.length; i++) {
    if ((msgs[i].w || {}).role === "tool" && facts.parent[i] >= 0) continue;
    box.append(messageCard(i, msgs, ctx, false));
  }
  el.append(box);
  el.append(h("div", { class: "anb-sub", text: `tools (${d.tools.length})` }));
  for (const t of d.tools)
    el.append(h("details", { class: "anb-tool" },
      h("summary", {}, h("span", { class: "anb-name", text: t.name }), ` ~${fmtInt(t.tok)} tok`),
      fold(JSON.stringify(t.schema, null, 2), "anb-json")));
  if (d.output) el.append(h("div", { class: "anb-sub", text: "answer format (response_format)" }), outputFormat(d.output));
  el.append(h("div", { class: "anb-sub", text: "parameters" }), h("pre", { class: "anb-text anb-json", text: JSON.stringify(d.params, null, 2) }));
}

const DIFF_TEXT = {
  kept: "unchanged",
  appended: "appended",
  inserted: "inserted",
  dropped: "dropped",
  summarised: "summary (replaces dropped messages)",
  edited: "edited",
};

function renderDiff(d, el) {
  el.append(h("div", { class: "anb-toolbar" }, h("b", { text: `What changed from model call ${d.j} to ${d.k}` })));
  const flags = [];
  if (d.instructions_changed) flags.push("instructions changed");
  if (d.tools_changed) flags.push("tool schemas changed");
  for (const [k, [a, b]] of Object.entries(d.params_changed || {})) flags.push(`parameter ${k}: ${JSON.stringify(a)} → ${JSON.stringify(b)}`);
  el.append(h("div", { class: "anb-sub", text: flags.length ? flags.join(" · ") : "instructions, tools and parameters unchanged" }));
  for (const row of d.rows) {
    if (row.op === "kept") {
      el.append(h("div", { class: "anb-diff anb-diff-kept", text: `${row.count} unchanged message${row.count === 1 ? "" : "s"}` }));
      continue;
    }
    const w = row.w || {};
    // Structural: JSON in tool results and call arguments shown as JSON, changed keys marked.
    const changed = new Set(row.changed || (row.edit && row.edit.changed) || []);
    const item = h("div", { class: `anb-diff anb-diff-${row.op}` + (row.edit ? " anb-diff-by-edit" : "") },
      h("span", { class: "anb-diff-op", text: DIFF_TEXT[row.op] || row.op }),
      h("span", { class: "anb-role " + roleClass(w.role), text: String(w.role) }),
      row.edit ? h("span", { class: "anb-edited", title: row.edit.text, text: `✎ edited by hand (${row.edit.how}, event #${row.edit.seq}) — not the tool's own output` }) : null,
      jsonView(displayed(w), changed));
    const old = row.old || (row.edit && row.edit.before);
    if (old) item.append(h("div", { class: "anb-muted", text: row.old ? "before:" : "what the tool returned, before the edit:" }), jsonView(displayed(old), changed, "anb-old"));
    el.append(item);
  }
}

const STAGE_CLASS = new Set(["restore", "assemble", "call_model", "decide", "execute_tools", "check_stop", "persist", "edit"]);

function renderTimeline(rows, el) {
  el.replaceChildren();
  if (!rows.length) {
    el.append(h("div", { class: "anb-muted", text: "no events yet" }));
    return;
  }
  let maxLat = 0;
  for (const r of rows) if (r.latency) maxLat = Math.max(maxLat, r.latency);
  const detail = h("pre", { class: "anb-text anb-event-detail", hidden: true });
  const t0 = rows[0].t;
  const table = h("div", { class: "anb-timeline" });
  const shown = rows.length > 2000 ? rows.slice(-2000) : rows;
  if (shown.length < rows.length) table.append(h("div", { class: "anb-muted", text: `${rows.length - shown.length} earlier events not shown` }));
  for (const r of shown) {
    const bar = h("span", { class: "anb-lat-bar" });
    if (r.latency) bar.style.width = `${Math.max(2, (120 * r.latency) / (maxLat || 1))}px`;
    const row = h("div", { class: "anb-ev" + (r.ok === false ? " anb-failed" : ""), "data-seq": r.seq },
      h("span", { class: "anb-ev-seq", text: r.seq }),
      h("span", { class: `anb-stage anb-stage-${STAGE_CLASS.has(r.stage) ? r.stage : "other"}`, text: r.stage }),
      h("span", { class: "anb-ev-it", text: `it ${r.it}` }),
      h("span", { class: "anb-ev-t", text: `+${((r.t - t0) * 1000).toFixed(1)} ms` }),
      h("span", { class: "anb-ev-type", text: r.type }),
      bar,
      h("span", { class: "anb-ev-lat", text: r.latency ? fmtMs(r.latency) : "" }),
      h("span", { class: "anb-ev-tok", text: r.tokens != null ? `${fmtInt(r.tokens)} tok` : "" }),
      h("span", { class: "anb-ev-sum", text: r.summary }));
    row.addEventListener("click", () => {
      detail.hidden = false;
      detail.textContent = JSON.stringify(r, null, 2);
      for (const x of table.querySelectorAll(".anb-sel")) x.classList.remove("anb-sel");
      row.classList.add("anb-sel");
    });
    table.append(row);
  }
  el.append(h("div", { class: "anb-muted", text: "stage · iteration · time since the first event · type · latency bar · tokens (usage or budget) · summary — click a row" }), table, detail);
}
