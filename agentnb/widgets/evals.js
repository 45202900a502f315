// agentnb front end, part 8: evaluations — the live matrix, the trajectory diff, the playground.
// Same rules as the session view: every string from a model, a tool or a task is a text node.

// Ask the kernel and wait for its reply (a run to open, a step's diffs).
function asker(model) {
  const replies = new Map();
  const onMsg = (msg) => {
    if (msg && msg.op === "reply" && replies.has(msg.id)) {
      const resolve = replies.get(msg.id);
      replies.delete(msg.id);
      resolve(msg.data);
    }
  };
  model.on("msg:custom", onMsg);
  const ask = (content) => new Promise((resolve) => {
    const id = Math.random().toString(36).slice(2);
    replies.set(id, resolve);
    model.send({ ...content, id });
  });
  ask.close = () => model.off("msg:custom", onMsg);
  return ask;
}

function pct(x) {
  return x == null ? "" : `${(100 * x).toFixed(0)}%`;
}

// A spend in USD; null is a price nobody set: "unknown", never 0.
function usd(x) {
  if (x == null) return "unknown";
  if (x === 0) return "$0";
  return x < 1 ? `$${x.toFixed(4)}` : `$${x.toFixed(2)}`;
}

function cellState(c, repeats, ended) {
  if (!c) return { cls: ended ? "anb-m-todo anb-m-partial" : "anb-m-todo", text: ended ? "—" : "·" };
  const [p, f, e] = c;
  const done = p + f + e;
  const cls = p === done ? "anb-m-pass" : e === done ? "anb-m-error" : p === 0 ? "anb-m-fail" : "anb-m-mixed";
  const text = repeats > 1 ? `${p}/${done}` : p ? "pass" : e ? "error" : "fail";
  if (done >= repeats) return { cls, text };
  // still running: an ellipsis; stopped: what ran, marked partial
  return ended ? { cls: `${cls} anb-m-partial`, text: `${text} of ${repeats}` } : { cls, text: `${text}…` };
}

// A highlighted line diff (agentnb.models.differ.line_diff rows): removed lines red, added
// green, the words that changed inside them marked.
function lineDiff(rows) {
  const box = h("div", { class: "anb-linediff" });
  for (const row of rows || []) {
    const line = h("div", { class: `anb-ld anb-ld-${row.op}` }, h("span", { class: "anb-ld-sign", text: row.op === "removed" ? "−" : row.op === "added" ? "+" : " " }));
    let at = 0;
    for (const [a, b] of row.spans || []) {
      if (a > at) line.append(document.createTextNode(row.text.slice(at, a)));
      line.append(h("mark", { text: row.text.slice(a, b) }));
      at = b;
    }
    line.append(document.createTextNode(row.text.slice(at)));
    box.append(line);
  }
  return box;
}

function promptDiff(diff, before, after) {
  const box = h("div", { class: "anb-pg-promptdiff" });
  if (!diff || (!diff.instructions && !diff.tools)) return box;
  box.append(h("div", { class: "anb-sub", text: `what changed from ${before} to ${after}` }));
  if (diff.instructions) box.append(h("div", { class: "anb-muted", text: "instructions" }), lineDiff(diff.instructions));
  for (const [name, rows] of Object.entries(diff.tools || {})) box.append(h("div", { class: "anb-muted", text: `tool ${name}: description` }), lineDiff(rows));
  return box;
}

function summaryTable(rows, caption) {
  if (!rows || !rows.length) return h("div", { class: "anb-muted", text: "no finished runs yet" });
  const cols = Object.keys(rows[0]).filter((k) => k !== "variant");
  const fmt = (k, v) => (/^spend/.test(k) ? usd(v) : v == null ? "" : /rate|ci_|pass[@^]/.test(k) ? pct(v) : String(v));
  return h("table", { class: "anb-m-summary" },
    caption ? h("caption", { text: caption }) : null,
    h("tr", {}, h("th", { text: "variant" }), cols.map((c) => h("th", { text: c }))),
    rows.map((r) => h("tr", {}, h("th", { text: r.variant }), cols.map((c) => h("td", { text: fmt(c, r[c]) })))));
}

function renderRun(d, box) {
  box.replaceChildren();
  box.append(h("div", { class: "anb-toolbar" },
    h("b", { text: `${d.variant} · ${d.task} · repeat ${d.repeat}: ${d.outcome}` }),
    h("span", { class: "anb-muted", text: d.stop_reason ? `stop_reason=${d.stop_reason}` : "" })));
  if (d.error) box.append(h("pre", { class: "anb-error", text: d.error }));
  box.append(h("ul", { class: "anb-m-checks" },
    d.checks.map((c) => h("li", { class: c.passed ? "anb-good" : "anb-bad", title: c.flag ? `flagged: ${c.flag}` : "", text: `${c.passed ? "✓" : "✗"} ${c.name}${c.flag ? " ⚑ (flagged: " + c.flag + ")" : ""}${c.reason ? ": " + c.reason : ""}` }))));
  const msgs = d.messages.map((m) => ((m.r = 0), m));
  const facts = analyse(msgs, {});
  const ctx = { ...facts, tools: {}, newSince: null, running: false };
  const list = h("div", { class: "anb-m-run" });
  for (let i = 0; i < msgs.length; i++) {
    if ((msgs[i].w || {}).role === "tool" && facts.parent[i] >= 0) continue;
    list.append(messageCard(i, msgs, ctx, false));
  }
  box.append(list);
}

function renderMatrix(model, el) {
  const ask = asker(model);
  let data = model.get("data");
  const head = h("div", { class: "anb-toolbar" });
  const grid = h("div", { class: "anb-m-grid" });
  const summary = h("div", {});
  const detail = h("div", { class: "anb-m-detail" });
  const stop = h("button", { class: "anb-btn anb-ctl", type: "button", text: "■ Stop", onclick: () => model.send({ op: "stop" }) });
  el.append(head, grid, summary, detail);
  const cells = new Map(); // "task\0variant" -> td

  const drawHead = () => {
    head.replaceChildren(
      h("b", { text: `Evaluation: ${data.variants.length} variants × ${data.tasks.length} tasks × ${data.repeats} repeat${data.repeats === 1 ? "" : "s"}` }),
      h("progress", { class: "anb-progress", max: data.total || 1, value: data.finished }),
      h("span", { class: data.stopped ? "anb-m-count anb-bad" : "anb-m-count", text: data.stopped ? `stopped · ${data.finished}/${data.total} runs (partial)` : `${data.finished}/${data.total} runs${data.done ? " · done" : " · running"}` }),
      ...(data.done ? [] : [stop]));
  };
  const drawSummary = () => summary.replaceChildren(summaryTable(data.summary, data.caption));
  const drawGrid = () => {
    cells.clear();
    const table = h("table", { class: "anb-m-table" },
      h("tr", {}, h("th", { text: "task" }), data.variants.map((v) => h("th", { text: v }))));
    for (const t of data.tasks) {
      const row = h("tr", {}, h("td", { class: "anb-m-task", text: t }));
      for (const v of data.variants) {
        const td = h("td", { class: "anb-m-cell", title: `${v} · ${t}: click to open the run` });
        td.addEventListener("click", () => openRun(t, v));
        paint(td, ((data.cells || {})[t] || {})[v]);
        cells.set(`${t}\u0000${v}`, td);
        row.append(td);
      }
      table.append(row);
    }
    grid.replaceChildren(table);
  };
  const paint = (td, c) => {
    const s = cellState(c, data.repeats, data.done);
    td.className = `anb-m-cell ${s.cls}`;
    td.textContent = s.text;
  };
  const repaint = () => {
    for (const [key, td] of cells) { const [t, v] = key.split("\u0000"); paint(td, ((data.cells || {})[t] || {})[v]); }
  };
  const openRun = async (task, variant) => {
    const c = ((data.cells || {})[task] || {})[variant];
    if (!c) return;
    detail.replaceChildren(h("div", { class: "anb-muted", text: "opening the run…" }));
    const repeats = [];
    for (let r = 0; r < c[0] + c[1] + c[2]; r++) repeats.push(r);
    const chooser = h("div", { class: "anb-toolbar" }, h("span", { text: "repeat:" }));
    const body = h("div", {});
    const show = async (r) => renderRun(await ask({ op: "open", task, variant, repeat: r }), body);
    for (const r of repeats) chooser.append(h("button", { class: "anb-btn", type: "button", text: String(r), onclick: () => show(r) }));
    const diffBtn = h("button", { class: "anb-btn", type: "button", text: "trajectory diff of the variants", onclick: async () => {
      const d = await ask({ op: "diff", task, repeat: 0 });
      body.replaceChildren();
      renderTrajectory(d, body, (row, a, b) => ask({ op: "step", task, repeat: 0, row, a, b }));
    } });
    chooser.append(diffBtn);
    detail.replaceChildren(chooser, body);
    await show(0);
    // the run opens below the grid and the summary, often past the bottom of the notebook's
    // view: bring it in (its top, when it is taller than the view), as a click expects
    detail.scrollIntoView({ block: "nearest" });
  };
  const onMsg = (msg) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.op === "state") {
      // the answer to hello: the same tasks and variants keep their cells (a click on one is
      // not lost to a table drawn again), painted afresh
      const shape = (d) => JSON.stringify([d.tasks, d.variants]);
      const same = shape(msg.data) === shape(data);
      data = msg.data;
      if (same) repaint();
      else drawGrid();
      drawHead(); drawSummary();
    } else if (msg.op === "cells") {
      for (const [key, c] of Object.entries(msg.cells || {})) {
        const [t, v] = key.split("\u0000");
        ((data.cells[t] = data.cells[t] || {}))[v] = c;
        const td = cells.get(key);
        if (td) paint(td, c);
      }
      data.finished = msg.finished;
      data.done = msg.done;
      data.stopped = msg.stopped;
      if (msg.summary) { data.summary = msg.summary; data.caption = msg.caption; drawSummary(); }
      if (msg.done) repaint();
      drawHead();
    } else if (msg.op === "error") {
      detail.replaceChildren(h("pre", { class: "anb-error", text: msg.text }));
    }
  };
  model.on("msg:custom", onMsg);
  drawHead(); drawGrid(); drawSummary();
  model.send({ op: "hello" }); // a late view: the kernel answers with the current state
  return () => { model.off("msg:custom", onMsg); ask.close(); };
}

const STEP_TEXT = { same: "same step", changed: "different calls", partial: "only some runs" };
const USER_TEXT = { same: "the users said the same", changed: "the users said different things", partial: "only some runs reached this turn" };

function renderTrajectory(d, el, askStep) {
  const n = d.labels.length;
  // A conversation's rows: a user row opens each turn; steps are numbered apart from them.
  const number = [];
  let steps = 0;
  for (const row of d.rows) number.push(row.user ? null : ++steps);
  const turns = d.rows.filter((r) => r.user).length;
  const first = d.first == null ? "the runs never part" : d.first >= d.rows.length ? `first divergence at step ${steps + 1}`
    : d.rows[d.first].user ? `first divergence at turn ${d.rows[d.first].turn}, in what the user said` : `first divergence at step ${number[d.first]}`;
  el.append(h("div", { class: "anb-toolbar" },
    h("b", { text: `Trajectory diff: ${n} runs, ${steps} steps` + (turns ? ` over ${turns} turns` : "") }),
    h("span", { class: d.first == null ? "anb-good" : "anb-bad", text: first })));
  const metricKeys = ["stop_reason", "steps", "model_calls", "tool_calls", "tool_errors", "tokens"];
  const table = h("table", { class: "anb-t-table" },
    h("tr", {}, h("th", { text: "step" }), d.labels.map((l) => h("th", { text: l }))),
    metricKeys.map((k) => h("tr", { class: "anb-t-metric" }, h("td", { text: k }), d.metrics.map((m) => h("td", { text: m[k] == null ? "" : String(m[k]) })))));
  const detail = h("div", { class: "anb-t-detail" });
  d.rows.forEach((row, i) => {
    if (row.user) { // a conversation's turn opens with what each run's user said
      table.append(h("tr", { class: `anb-t-row anb-t-user anb-t-${row.status}` + (i === d.first ? " anb-t-first" : ""), title: USER_TEXT[row.status] },
        h("td", { class: "anb-t-step", text: `turn ${row.turn}${i === d.first ? " ⚑" : ""}` }),
        row.user.map((t) => h("td", { class: t == null ? "anb-t-none" : "anb-t-said", text: t == null ? "—" : `user: ${t}` }))));
      return;
    }
    const tr = h("tr", { class: `anb-t-row anb-t-${row.status}` + (i === d.first ? " anb-t-first" : ""), title: STEP_TEXT[row.status] });
    tr.append(h("td", { class: "anb-t-step", text: `${number[i]}${i === d.first ? " ⚑" : ""}` }));
    for (const c of row.cells) {
      if (!c) { tr.append(h("td", { class: "anb-t-none", text: "—" })); continue; }
      tr.append(h("td", {}, c.calls.map((call) => h("div", { class: call.kind ? "anb-t-call anb-bad" : "anb-t-call" },
        h("span", { class: "anb-name", text: call.name }),
        h("span", { class: "anb-muted", text: `(${call.args})` }),
        call.kind ? h("span", { text: ` → ${call.kind}` }) : null)),
        h("span", { class: "anb-ref", text: `model call ${c.k}` })));
    }
    if (askStep && n >= 2) tr.addEventListener("click", async () => {
      detail.replaceChildren(h("div", { class: "anb-muted", text: "comparing the step…" }));
      drawStep(await askStep(i, 0, 1), detail, d.labels);
    });
    table.append(tr);
  });
  table.append(h("tr", { class: "anb-t-metric" }, h("td", { text: "answer" }), d.metrics.map((m) => h("td", {}, fold(m.output || "", "", 400)))));
  el.append(table, detail);
}

function drawStep(s, el, labels) {
  el.replaceChildren(h("div", { class: "anb-sub", text: `Step ${s.row + 1}: the request ${labels[1]} sent here, against ${labels[0]}'s` }));
  if (!s.request.some((r) => r.op !== "kept")) el.append(h("div", { class: "anb-muted", text: "the same messages" }));
  for (const row of s.request) {
    if (row.op === "kept") {
      el.append(h("div", { class: "anb-diff anb-diff-kept", text: `${row.count} unchanged message${row.count === 1 ? "" : "s"}` }));
      continue;
    }
    const w = row.w || {};
    const item = h("div", { class: `anb-diff anb-diff-${row.op}` },
      h("span", { class: "anb-diff-op", text: row.op === "added" ? `only in ${labels[1]}` : row.op === "dropped" ? `only in ${labels[0]}` : "differs" }),
      h("span", { class: "anb-role " + roleClass(w.role), text: String(w.role) }));
    if (row.op === "edited" && row.lines && row.lines.length) {
      item.append(h("div", { class: "anb-muted", text: `${labels[0]} → ${labels[1]}, line by line:` }), lineDiff(row.lines));
      el.append(item);
      continue;
    }
    if (row.op === "edited") item.append(h("div", { class: "anb-muted", text: `${labels[0]}:` }), fold(asText(row.old.content) || JSON.stringify(row.old), "anb-old"), h("div", { class: "anb-muted", text: `${labels[1]}:` }));
    item.append(fold(asText(w.content) || JSON.stringify(w), ""));
    for (const c of row.changes || []) item.append(h("div", { class: "anb-name", text: `${c.path}: ${JSON.stringify(c.old)} → ${JSON.stringify(c.new)}` }));
    el.append(item);
  }
  for (const r of s.results) {
    el.append(h("div", { class: "anb-sub", text: `tool result of ${r.name}: ${r.changes.length ? r.changes.length + " keys differ" : "the same"}` }));
    for (const c of r.changes)
      el.append(h("div", { class: "anb-diff anb-diff-edited" },
        h("span", { class: "anb-name", text: c.path }),
        h("span", { class: "anb-old", text: ` ${"old" in c ? JSON.stringify(c.old) : "(absent)"}` }),
        h("span", { text: ` → ${"new" in c ? JSON.stringify(c.new) : "(absent)"}` })));
  }
}

function renderPlayground(model, el) {
  const ask = asker(model);
  const d = model.get("data");
  const instructions = h("textarea", { rows: 8, class: "anb-pg-instructions" });
  instructions.value = d.instructions || "";
  const tools = new Map();
  const toolBox = h("div", {});
  for (const t of d.tools || []) {
    const area = h("textarea", { rows: 3, "data-tool": t.name });
    area.value = t.description || "";
    tools.set(t.name, area);
    toolBox.append(h("div", { class: "anb-sub", text: `tool ${t.name}: description` }), area);
  }
  const status = h("div", { class: "anb-statusbar" });
  const bar = h("progress", { class: "anb-progress", max: 1, value: 0 });
  const run = h("button", { class: "anb-btn anb-ctl", type: "button", text: "▶ Run", onclick: () => {
    const descriptions = {};
    for (const [name, area] of tools) descriptions[name] = area.value;
    model.send({ op: "run", instructions: instructions.value, tools: descriptions });
    status.replaceChildren(bar, h("span", { text: "starting…" }));
  } });
  const stop = h("button", { class: "anb-btn anb-ctl", type: "button", text: "■ Stop", onclick: () => model.send({ op: "stop" }) });
  const results = h("div", {});
  const detail = h("div", {});
  const understood = h("div", { class: "anb-pg-understood" });
  const side = h("div", { class: "anb-pg-side" }, understood, results, detail);
  if ((d.rules || []).length) {
    const cols = Object.keys(d.rules[0]);
    side.append(h("details", { class: "anb-pg-rules" },
      h("summary", { text: `the stand-in's rules (${d.rules.length})` }),
      h("table", { class: "anb-m-summary" }, h("tr", {}, cols.map((c) => h("th", { text: c }))),
        d.rules.map((r) => h("tr", {}, cols.map((c) => h("td", { text: r[c] })))))));
  }
  // What the model understands of the text being typed (a model that can say): debounced, and
  // only the latest answer is drawn.
  // JupyterLab takes Enter (and other keys) pressed in an output for its own shortcuts: keep
  // the keys typed into the text areas for the text areas.
  for (const area of [instructions, ...tools.values()]) area.addEventListener("keydown", (e) => e.stopPropagation());
  if (d.understands) {
    let timer = null, asked = 0;
    const refresh = async () => {
      const n = ++asked, descriptions = {};
      for (const [name, area] of tools) descriptions[name] = area.value;
      const u = await ask({ op: "understood", instructions: instructions.value, tools: descriptions });
      if (n === asked && u) understood.replaceChildren(understoodTable(u));
    };
    const later = () => { clearTimeout(timer); timer = setTimeout(refresh, 300); };
    for (const area of [instructions, ...tools.values()]) area.addEventListener("input", later);
    refresh();
  }
  el.append(h("div", { class: "anb-toolbar" }, h("b", { text: `Playground: ${d.tasks} tasks × ${d.repeats} repeat${d.repeats === 1 ? "" : "s"}` }), run, stop),
    status,
    h("div", { class: "anb-pg" },
      h("div", {}, h("div", { class: "anb-sub", text: "instructions" }), instructions, toolBox),
      side));
  // A Run started from code (`await pg.run(instructions=...)`) shows its text here, so the next
  // Run from the browser starts from what ran last, not from what the view first showed.
  const follow = (texts) => {
    if (!texts) return;
    instructions.value = texts.instructions || "";
    for (const t of texts.tools || []) if (tools.has(t.name)) tools.get(t.name).value = t.description || "";
    instructions.dispatchEvent(new Event("input")); // what the model understands, redrawn
  };
  const showResult = (m) => {
    results.replaceChildren(summaryTable(m.summary, m.caption));
    const c = m.comparison;
    if (c) {
      results.append(h("div", { class: "anb-sub", text: `${c.other} against ${c.baseline}: ${c.verdict}` }),
        h("div", { class: "anb-muted", text: `${c.wins} wins, ${c.losses} losses, ${c.ties} ties over ${c.pairs} pairs; difference ${pct(c.difference)} [${pct(c.ci_low)}, ${pct(c.ci_high)}] (${c.ci_method}); p = ${Number(c.p).toPrecision(3)} (${c.method})` }));
      results.append(promptDiff(c.prompt_diff, c.baseline, c.other));
      const flips = [...c.improved.map((t) => [t, "improved"]), ...c.regressed.map((t) => [t, "regressed"])];
      if (!flips.length) results.append(h("div", { class: "anb-muted", text: "no task flipped" }));
      const multi = (d.repeats || 1) > 1;
      for (const [task, way] of flips)
        results.append(h("div", { class: "anb-toolbar" },
          h("span", { class: way === "improved" ? "anb-good" : "anb-bad", text: `${way}: ${task}` }),
          h("button", { class: "anb-btn", type: "button", text: multi ? `trajectory diff (repeat ${(c.repeats || {})[task] ?? 0}, where it flipped)` : "trajectory diff", onclick: async () => {
            detail.replaceChildren();
            renderTrajectory(await ask({ op: "diff", task }), detail, (row, a, b) => ask({ op: "step", task, row, a, b }));
          } })));
    } else if (m.cancelled) results.append(h("div", { class: "anb-bad", text: "stopped: the sweep was cancelled" }));
    status.replaceChildren(h("span", { text: `${m.variant} ${m.cancelled ? "stopped" : "done"} · variants so far: ${m.variants.join(", ")}` }));
  };
  const onMsg = (m) => {
    if (!m || typeof m !== "object") return;
    if (m.op === "running") {
      follow(m.texts);
      bar.max = m.total || 1; bar.value = 0;
      status.replaceChildren(bar, h("span", { text: `${m.variant}: running 0/${m.total}` }));
    } else if (m.op === "progress") {
      bar.max = m.total || 1; bar.value = m.finished;
      status.replaceChildren(bar, h("span", { text: `${m.variant}: running ${m.finished}/${m.total}` }));
    } else if (m.op === "result") showResult(m);
    else if (m.op === "error") status.replaceChildren(h("pre", { class: "anb-error", text: m.text }));
  };
  model.on("msg:custom", onMsg);
  if (d.last) showResult(d.last);
  return () => { model.off("msg:custom", onMsg); ask.close(); };
}
