// Small DOM helpers shared by the views' result renderers.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null && v !== false)
      node.setAttribute(k, v === true ? "" : String(v));
  }
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
}

/** Fill <dl> `list` with [term, value] pairs. */
export function figures(list, pairs) {
  list.replaceChildren(
    ...pairs.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]),
  );
}

/** Fill <table> `table` with `headers` and `rows` (cells as text); `numeric[i]` right-aligns
 * column i; `marked(row index)` names a class for a row. */
export function fillTable(table, headers, rows, numeric = [], marked = () => null) {
  const head = el(
    "thead",
    {},
    el(
      "tr",
      {},
      ...headers.map((h, i) => el("th", { scope: "col", class: numeric[i] ? "num" : null }, h)),
    ),
  );
  const body = el(
    "tbody",
    {},
    ...rows.map((row, r) =>
      el(
        "tr",
        { class: marked(r) },
        ...row.map((cell, i) =>
          el(
            i === 0 ? "th" : "td",
            { class: numeric[i] ? "num" : null, scope: i === 0 ? "row" : null },
            cell,
          ),
        ),
      ),
    ),
  );
  const caption = table.querySelector("caption");
  table.replaceChildren(...[caption, head, body].filter(Boolean));
}

const SEVERITY = { error: 0, warning: 1, info: 2 };

/** Fill <ul> `list` with the result's warnings, most severe first. */
export function warnings(list, items) {
  const sorted = [...items].sort(
    (a, b) => (SEVERITY[a.severity] ?? 3) - (SEVERITY[b.severity] ?? 3),
  );
  list.replaceChildren(
    ...sorted.map((w) =>
      el(
        "li",
        { class: `warning sev-${w.severity}` },
        el("span", { class: "badge" }, w.severity),
        " ",
        w.message,
      ),
    ),
  );
  list.closest("section").hidden = !sorted.length;
}

const drawn = new WeakMap();

/** Draw `chart(width)` into `slot` now and again whenever the slot's width changes; the slot's
 * data-width is the width the chart shown was drawn at. */
export function drawChart(slot, chart) {
  const draw = (state) => {
    const width = Math.max(280, Math.floor(slot.clientWidth));
    slot.replaceChildren(state.chart(width));
    slot.dataset.width = String(width);
  };
  let state = drawn.get(slot);
  if (!state) {
    state = { chart, width: 0 };
    const observer = new ResizeObserver(() => {
      const width = Math.floor(slot.clientWidth);
      if (width && width !== state.width) {
        state.width = width;
        requestAnimationFrame(() => draw(state));
      }
    });
    observer.observe(slot);
    drawn.set(slot, state);
  }
  state.chart = chart;
  draw(state);
}
