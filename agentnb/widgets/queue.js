// agentnb front end: the queue view (a Runtime's tasks). dom.js comes first (h, fmtMs, fmtInt).
// Rows are keyed by task id and updated in place; every text from a task enters as text.

const QUEUE_COLUMNS = [
  ["session", "session"], ["status", "status"], ["attempt", "attempt"], ["iteration", "iter"],
  ["latency", "latency"], ["tokens", "tokens"], ["stop", "stop reason"], ["text", "message"],
];
const QUEUE_COUNTS = ["pending", "running", "paused", "done", "error", "cancelled"];

function queueCell(key, row) {
  if (key === "latency") return fmtMs(row.latency);
  if (key === "tokens") return fmtInt(row.tokens);
  if (key === "status") return row.status + (row.error && row.status === "error" ? " ⚠" : "");
  return row[key] == null ? "" : String(row[key]);
}

function renderQueue(model, el) {
  const height = (model.get("data") || {}).height || 360;
  const header = h("div", { class: "anb-toolbar anb-queue-head" });
  const thead = h("tr", {}, QUEUE_COLUMNS.map(([, label]) => h("th", { text: label })), h("th", { text: "" }));
  const tbody = h("tbody");
  const scroll = h("div", { class: "anb-queue-scroll" }, h("table", { class: "anb-queue" }, h("thead", {}, thead), tbody));
  scroll.style.maxHeight = `${height}px`;
  el.append(h("div", { class: "anb anb-queue-view" }, header, scroll));
  const rows = new Map();

  function drawHeader(counts) {
    header.replaceChildren(h("b", { text: "tasks" }),
      ...QUEUE_COUNTS.map((k) => h("span", { class: `anb-count anb-q-${k}`, text: ` ${k} ${fmtInt(counts[k] || 0)}` })),
      h("span", { class: "anb-count anb-q-depth", text: ` · queue depth ${fmtInt(counts.queued || 0)}` }));
  }

  function draw(row) {
    let tr = rows.get(row.id);
    if (!tr) {
      tr = h("tr", { class: "anb-q-row", "data-task": row.id, onclick: () => model.send({ op: "open", task: row.id }) });
      rows.set(row.id, tr);
      tbody.append(tr);
    }
    const final = ["done", "error", "cancelled"].includes(row.status);
    const cancel = final ? null : h("button", {
      class: "anb-btn anb-q-cancel", type: "button", text: "Cancel", title: `cancel ${row.id}`,
      onclick: (ev) => { ev.stopPropagation(); model.send({ op: "cancel", task: row.id }); },
    });
    tr.className = `anb-q-row anb-q-${row.status}` + (model.get("selected") === row.id ? " anb-q-selected" : "");
    tr.title = row.error ? `${row.id}: ${row.error}` : row.id;
    tr.replaceChildren(...QUEUE_COLUMNS.map(([key]) => h("td", { class: `anb-q-${key}`, text: queueCell(key, row) })), h("td", {}, cancel));
  }

  const onMsg = (msg) => {
    if (!msg || msg.op !== "rows") return;
    if (msg.reset) { rows.clear(); tbody.replaceChildren(); }
    for (const row of msg.rows) draw(row);
    drawHeader(msg.counts || {});
  };
  const onSelect = () => {
    for (const [id, tr] of rows) tr.classList.toggle("anb-q-selected", id === model.get("selected"));
  };
  model.on("msg:custom", onMsg);
  model.on("change:selected", onSelect);
  drawHeader({});
  model.send({ op: "hello" });
  return () => { model.off("msg:custom", onMsg); model.off("change:selected", onSelect); };
}

export default {
  render({ model, el }) {
    el.classList.add("anb-root");
    try {
      return renderQueue(model, el);
    } catch (err) {
      el.append(h("pre", { class: "anb-error", text: `agentnb queue view failed: ${err && err.stack ? err.stack : err}` }));
      return undefined;
    }
  },
};
