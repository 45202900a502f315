// agentnb front end, part 7: the anywidget entry point.
// initialize() runs once per widget model: the session store listens there, so every view
// of the same widget (a session displayed twice) shares one copy of the messages.

const STORES = (globalThis.__agentnbStores = globalThis.__agentnbStores || new Map());

function guarded(el, draw) {
  try {
    return draw();
  } catch (err) {
    el.append(h("pre", { class: "anb-error", text: `agentnb view failed: ${err && err.stack ? err.stack : err}` }));
    return undefined;
  }
}

function storeFor(model) {
  const uid = model.get("uid");
  let store = STORES.get(uid);
  if (!store) {
    store = new Store(model);
    STORES.set(uid, store);
  }
  return store;
}

export default {
  initialize({ model }) {
    if (model.get("kind") !== "session") return undefined;
    storeFor(model);
    return () => STORES.delete(model.get("uid"));
  },
  render({ model, el, host }) {
    el.classList.add("anb-root");
    const kind = model.get("kind");
    return guarded(el, () => {
      if (kind === "session") return renderSession(model, el, storeFor(model));
      if (kind === "proxy") return renderProxy(model, el, host);
      if (kind === "queue") return renderQueue(model, el, host);
      if (kind === "matrix") return renderMatrix(model, el);
      if (kind === "playground") return renderPlayground(model, el);
      if (kind === "optimise") return renderOptimise(model, el);
      if (kind === "outputs") return renderOutputs(model, el);
      if (kind === "experiments") return renderExperiments(model, el);
      if (kind === "trajectory") {
        const ask = asker(model);
        renderTrajectory(model.get("data"), el, (row, a, b) => ask({ op: "step", row, a, b }));
        return () => ask.close();
      }
      const box = h("div", { class: `anb anb-${kind}` });
      el.append(box);
      const draw = () => {
        box.replaceChildren();
        guarded(box, () => {
          if (kind === "request") renderRequest(model.get("data"), box, (k) => model.send({ op: "goto", args: [k] }));
          else if (kind === "diff") renderDiff(model.get("data"), box);
          else if (kind === "timeline") renderTimeline(model.get("rows"), box);
        });
      };
      draw();
      model.on("change:data", draw);
      model.on("change:rows", draw);
      return () => {
        model.off("change:data", draw);
        model.off("change:rows", draw);
      };
    });
  },
};
