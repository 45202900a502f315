// agentnb front end, part 10: the experiment log — every experiment, filtered, and any two
// opened side by side (the prompt diff, the paired verdict, the output grid of both).

const LOG_COLUMNS = ["id", "created", "kind", "variants", "success", "note", "tasks", "tasks_digest", "spend", "commit"];

function logCell(k, v, r) {
  if (k === "spend") return usd(v);
  if (k === "commit") return v ? `${String(v).slice(0, 8)}${r.dirty ? " (dirty)" : ""}` : "—";
  if (k === "kind" && r.source) return `${v} of ${r.source}`;
  return v == null ? "" : String(v);
}

function renderExperiments(model, el) {
  const ask = asker(model);
  let d = model.get("data");
  const chosen = []; // ids ticked, at most two
  const filter = h("input", { class: "anb-log-filter", type: "text", placeholder: "filter: id, variant, note, commit" });
  filter.addEventListener("keydown", (e) => e.stopPropagation());
  const kinds = h("select", { class: "anb-log-kind" });
  const table = h("div", { class: "anb-log-scroll" });
  const pick = h("div", { class: "anb-toolbar" });
  const side = h("div", { class: "anb-log-side" });
  const head = h("div", { class: "anb-toolbar" });
  el.append(head, h("div", { class: "anb-toolbar" }, filter, kinds), table, pick, side);

  const drawHead = () => head.replaceChildren(
    h("b", { text: `Experiment log: ${d.rows.length} experiments` }),
    h("span", { class: "anb-muted", text: d.where }),
    h("button", { class: "anb-btn", type: "button", text: "↻ refresh", onclick: async () => { d = await ask({ op: "refresh" }); draw(); } }));
  const drawKinds = () => {
    const seen = [...new Set(d.rows.map((r) => r.kind))];
    const was = kinds.value;
    kinds.replaceChildren(h("option", { value: "", text: "every kind" }), seen.map((k) => h("option", { value: k, text: k })));
    kinds.value = seen.includes(was) ? was : "";
  };
  const visible = () => {
    const text = filter.value.trim().toLowerCase();
    return d.rows.filter((r) => (!kinds.value || r.kind === kinds.value) &&
      (!text || [r.id, r.variants, r.note, r.commit, r.kind].join(" ").toLowerCase().includes(text)));
  };
  const drawTable = () => {
    const rows = visible();
    table.replaceChildren(h("table", { class: "anb-m-summary anb-log-table" },
      h("tr", {}, h("th", { text: "" }), LOG_COLUMNS.map((c) => h("th", { text: c }))),
      rows.map((r) => {
        const box = h("input", { type: "checkbox", class: "anb-log-pick", "data-id": r.id });
        box.checked = chosen.includes(r.id);
        box.addEventListener("change", () => {
          if (box.checked) { chosen.push(r.id); while (chosen.length > 2) chosen.shift(); }
          else chosen.splice(chosen.indexOf(r.id), 1);
          drawTable(); drawPick();
        });
        return h("tr", { class: chosen.includes(r.id) ? "anb-log-row anb-log-chosen" : "anb-log-row" }, h("td", {}, box), LOG_COLUMNS.map((c) => h("td", { text: logCell(c, r[c], r) })));
      })));
  };
  const drawPick = () => {
    if (chosen.length < 2) { pick.replaceChildren(h("span", { class: "anb-muted", text: "tick two experiments to open them side by side" })); return; }
    const rowOf = (id) => d.rows.find((r) => r.id === id);
    const selects = chosen.map((id) => {
      const s = h("select", { class: "anb-log-variant", "data-id": id });
      for (const v of String(rowOf(id).variants || "").split(", ").filter(Boolean)) s.append(h("option", { value: v, text: `${id}: ${v}` }));
      return s;
    });
    const open = h("button", { class: "anb-btn anb-ctl anb-log-open", type: "button", text: "Open side by side", onclick: async () => {
      side.replaceChildren(h("div", { class: "anb-muted", text: "opening…" }));
      const r = await ask({ op: "open", a: chosen[0], b: chosen[1], va: selects[0].value, vb: selects[1].value });
      drawSide(r);
    } });
    pick.replaceChildren(h("span", { text: "baseline" }), selects[0], h("span", { text: "against" }), selects[1], open);
  };
  const drawSide = (r) => {
    if (!r || r.error) { side.replaceChildren(h("pre", { class: "anb-error", text: r ? r.error : "no reply" })); return; }
    side.replaceChildren(
      h("div", { class: "anb-sub", text: `${r.other} (${r.b}) against ${r.baseline} (${r.a})` }),
      h("div", { class: "anb-log-verdict", text: r.verdict }),
      h("div", { class: "anb-muted", text: r.detail }),
      promptDiff(r.prompt_diff, r.baseline, r.other),
      gridTable(r.grid, null, "human"));
  };
  const draw = () => { drawHead(); drawKinds(); drawTable(); drawPick(); };
  filter.addEventListener("input", drawTable);
  kinds.addEventListener("change", drawTable);
  draw();
  const onMsg = (msg) => { if (msg && msg.op === "error") side.replaceChildren(h("pre", { class: "anb-error", text: msg.text })); };
  model.on("msg:custom", onMsg);
  return () => { model.off("msg:custom", onMsg); ask.close(); };
}
