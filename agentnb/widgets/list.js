// agentnb front end, part 3: a windowed list. Only the rows near the viewport exist in the
// DOM (at most MAX_ROWS), so 5,000 messages scroll like 50. Row heights are estimated, then
// measured once drawn; spacers above and below stand in for the rows not drawn.

const MAX_ROWS = 60;

class VList {
  // render(key) -> element; sig(key) -> string that changes when the row must be redrawn.
  constructor(scroller, render, sig) {
    this.sc = scroller;
    this.render = render;
    this.sig = sig;
    this.keys = [];
    this.heights = new Map();
    this.nodes = new Map(); // key -> {el, sig}
    this.est = 90;
    this.follow = true; // stick to the bottom while new rows arrive
    this.topPad = h("div", { class: "anb-pad" });
    this.body = h("div", { class: "anb-rows" });
    this.botPad = h("div", { class: "anb-pad" });
    scroller.append(this.topPad, this.body, this.botPad);
    this.pending = false;
    this.lastTop = 0;
    // Drawn before the output is attached or visible, the list has no size yet: draw again
    // once it has one (and whenever it changes).
    this.resize = new ResizeObserver(() => this.schedule());
    this.resize.observe(scroller);
    scroller.addEventListener("scroll", () => {
      const sc = this.sc;
      const atBottom = sc.scrollTop + sc.clientHeight >= sc.scrollHeight - 40;
      if (sc.scrollTop < this.lastTop - 2) this.follow = atBottom;
      else if (atBottom) this.follow = true;
      this.lastTop = sc.scrollTop;
      this.schedule();
    });
  }

  // Called from the view's own animation frame: draw now, with the data it just read.
  setKeys(keys) {
    this.keys = keys;
    this.draw();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  }

  toBottom() {
    this.follow = true;
    this.draw();
  }

  draw() {
    const sc = this.sc;
    const keys = this.keys;
    const view = sc.clientHeight || 500;
    const H = (k) => this.heights.get(k) ?? this.est;
    let total = 0;
    for (const k of keys) total += H(k);
    let top = this.follow ? Math.max(0, total - view) : sc.scrollTop;
    const lo = top - view;
    const hi = top + 2 * view;
    let first = keys.length;
    let last = -1;
    let y = 0;
    let yFirst = 0;
    for (let i = 0; i < keys.length; i++) {
      const hh = H(keys[i]);
      if (first === keys.length && y + hh >= lo) {
        first = i;
        yFirst = y;
      }
      if (y <= hi) last = i;
      else break;
      y += hh;
    }
    if (last - first + 1 > MAX_ROWS) {
      if (this.follow) {
        for (let i = first; i < last - MAX_ROWS + 1; i++) yFirst += H(keys[i]);
        first = last - MAX_ROWS + 1;
      } else last = first + MAX_ROWS - 1;
    }
    // Draw rows first..last, reusing nodes whose signature did not change.
    const keep = new Set();
    const frag = [];
    for (let i = first; i <= last; i++) {
      const k = keys[i];
      const sig = this.sig(k);
      let node = this.nodes.get(k);
      if (!node || node.sig !== sig) {
        let el;
        try {
          el = this.render(k);
        } catch (err) {
          el = h("pre", { class: "anb-error", text: `could not draw row ${k}: ${err}` });
        }
        el.dataset.key = String(k);
        node = { el, sig };
        this.nodes.set(k, node);
      }
      keep.add(k);
      frag.push(node.el);
    }
    for (const [k, node] of this.nodes) {
      if (!keep.has(k)) {
        node.el.remove();
        this.nodes.delete(k);
      }
    }
    // Touch the DOM only when the drawn rows changed: re-inserting a node would detach it
    // (losing focus and hover) and make the page jump.
    const current = this.body.children;
    let same = current.length === frag.length;
    for (let i = 0; same && i < frag.length; i++) same = current[i] === frag[i];
    if (!same) this.body.replaceChildren(...frag);
    // Measure what was drawn; the spacers cover the rest.
    let drawn = 0;
    for (let i = first; i <= last; i++) {
      const k = keys[i];
      const hh = this.nodes.get(k).el.offsetHeight + 6; // + margin
      this.heights.set(k, hh);
      drawn += hh;
    }
    let after = 0;
    for (let i = last + 1; i < keys.length; i++) after += H(keys[i]);
    this.topPad.style.height = `${yFirst}px`;
    this.botPad.style.height = `${after}px`;
    if (this.follow) {
      sc.scrollTop = sc.scrollHeight;
      this.lastTop = sc.scrollTop; // so a scroll up right after is seen as one
    }
    this.range = [first, last, drawn];
  }

  // Scroll so that the row with this key is visible.
  reveal(key) {
    const i = this.keys.indexOf(key);
    if (i < 0) return;
    let y = 0;
    for (let j = 0; j < i; j++) y += this.heights.get(this.keys[j]) ?? this.est;
    this.follow = false;
    this.sc.scrollTop = y;
    this.draw();
  }
}
