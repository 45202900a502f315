// agentnb front end, part 9: the output grid — every answer, task × variant, with a person's
// label on each (✓ / ✗ and a note). Every answer, check and note is a text node.

const FIRST_LINES = 3;
const MARK = { pass: ["✓", "#16a34a"], fail: ["✗", "#dc2626"], error: ["!", "#6b7280"] };

function answerBody(run) {
  const text = run.output || "";
  if (!text) return h("i", { class: "anb-muted", text: "(no answer)" });
  const lines = text.split("\n");
  const head = lines.slice(0, FIRST_LINES).join("\n");
  const cut = head.length > 240;
  if (lines.length <= FIRST_LINES && !cut) return h("span", { class: "anb-grid-text", text });
  const rest = cut ? text : lines.slice(FIRST_LINES).join("\n");
  return h("details", {},
    h("summary", { class: "anb-grid-text", text: head.slice(0, 240) + (cut ? "…" : "") }),
    h("div", { class: "anb-grid-text", text: rest + (run.cut ? "\n… (cut: the whole answer is in ev.record(...).output)" : "") }));
}

// A conversation's turns, folded: each user turn (who played it, its rule) and the answer to it.
function gridTurns(talk) {
  const items = [];
  talk.user.forEach((t, i) => {
    items.push(h("div", { class: "anb-turn-user" }, h("b", { text: "user" }), " ",
      h("i", { class: "anb-muted", text: `[${t.by}: ${t.rule}]` }), " ", t.text));
    if (i < talk.answers.length) items.push(h("div", { class: "anb-turn-agent anb-grid-text" }, h("b", { text: "agent" }), " ", talk.answers[i]));
  });
  return h("details", { class: "anb-turns" },
    h("summary", { class: "anb-turns-head", text: `${talk.turns} turn${talk.turns === 1 ? "" : "s"} · ${talk.stop}` }), items);
}

function labelText(run, rater) {
  const l = (run.labels || {})[rater];
  if (!l) return "not labelled";
  return `${rater}: ${l.verdict === "pass" ? "✓ pass" : "✗ fail"}${l.note ? " — " + l.note : ""}`;
}

// One run in a cell; with `ask`, its label buttons and note (a click labels the run).
function gridRun(run, repeats, where, ask, rater) {
  const [mark, colour] = MARK[run.outcome] || MARK.error;
  const why = run.failed.map((c) => `${c.name}: ${c.reason}`).join("; ") || run.error || "";
  const box = h("div", { class: `anb-output anb-output-${run.outcome}` },
    h("span", { class: "anb-grid-mark", style: `color:${colour}`, title: why, text: `${mark}${repeats === 1 ? "" : " #" + run.repeat}` }),
    " ", answerBody(run));
  if (why) box.append(h("div", { class: run.failed.some((c) => c.flag) ? "anb-grid-why anb-grid-flagged" : "anb-grid-why", text: why.slice(0, 300) }));
  if (run.talk) box.append(gridTurns(run.talk));
  const shown = h("div", { class: `anb-label anb-label-${((run.labels || {})[rater] || {}).verdict || "none"}`, text: labelText(run, rater) });
  box.append(shown);
  if (!ask) return box;
  const note = h("input", { class: "anb-label-note", type: "text", placeholder: "note (why)" });
  note.value = ((run.labels || {})[rater] || {}).note || "";
  note.addEventListener("keydown", (e) => e.stopPropagation()); // keys typed here stay here
  const send = async (verdict) => {
    shown.textContent = "labelling…";
    const reply = await ask({ op: "label", ...where, repeat: run.repeat, verdict, note: note.value });
    if (!reply) return;
    Object.assign(run, reply.cell);
    shown.className = `anb-label anb-label-${((run.labels || {})[rater] || {}).verdict || "none"}`;
    shown.textContent = labelText(run, rater);
  };
  box.append(h("div", { class: "anb-label-bar" },
    h("button", { class: "anb-btn anb-label-pass", type: "button", title: "label this answer good", text: "✓ good", onclick: () => send("pass") }),
    h("button", { class: "anb-btn anb-label-fail", type: "button", title: "label this answer bad", text: "✗ bad", onclick: () => send("fail") }),
    note));
  return box;
}

function gridTable(d, ask, rater) {
  const table = h("table", { class: "agentnb-outputs anb-grid" },
    h("caption", { text: `${d.what || `every answer: ${d.runs} runs`}, ✓ pass ✗ fail ! error (hover a mark for the failed checks)${ask ? "; label an answer with ✓ good / ✗ bad and a note" : ""}${d.experiment ? " · experiment " + d.experiment : ""}` }),
    h("tr", {}, h("th", { text: "task" }), d.variants.map((v) => h("th", { text: v }))));
  for (const t of d.tasks) {
    const row = h("tr", {}, h("th", { class: "anb-grid-task", text: t }));
    for (const v of d.variants) {
      const runs = ((d.cells || {})[t] || {})[v] || [];
      row.append(h("td", { class: "anb-grid-cell" }, runs.length ? runs.map((r) => gridRun(r, d.repeats, { task: t, variant: v }, ask, rater)) : "…"));
    }
    table.append(row);
  }
  return table;
}

function renderOutputs(model, el) {
  const ask = asker(model);
  const d = model.get("data");
  const box = h("div", { class: "anb-grid-box" });
  const error = h("div", {});
  box.append(gridTable(d, d.labelling ? ask : null, "human"), error);
  el.append(box);
  const onMsg = (msg) => { if (msg && msg.op === "error") error.replaceChildren(h("pre", { class: "anb-error", text: msg.text })); };
  model.on("msg:custom", onMsg);
  return () => { model.off("msg:custom", onMsg); ask.close(); };
}
