// The page's charts as SVG, drawn at the pixel width they are shown at (so text stays legible on
// a phone), styled by class from app.css: the same charts as the reports' PNGs.

import {
  candidateKey,
  counted,
  fmtMonths,
  fmtNumber,
  fmtServers,
  fmtShare,
  fmtTonnes,
  fmtUsd,
  fmtUtilisation,
} from "./format.js";
import { OWNED, rivalsOf, SIDES, sidesOf, versusFigures } from "./sides.js";

const SVG = "http://www.w3.org/2000/svg"; // the SVG namespace name, not a resource

function node(tag, attrs = {}, text = "") {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  if (text) n.textContent = text;
  return n;
}

/** Axis tick money as the report charts write it: "$12k", "$62.5k", "$1.25M", thousands or
 * millions with the decimals (up to three) the value needs, so no tick is rounded. */
export function usdTick(v) {
  const a = Math.abs(v);
  const sign = v < 0 ? "-" : "";
  for (const [unit, suffix] of [
    [1e6, "M"],
    [1e3, "k"],
  ]) {
    if (a >= unit) {
      const digits = (a / unit).toLocaleString("en-US", { maximumFractionDigits: 3 });
      return `${sign}$${digits}${suffix}`;
    }
  }
  return `${sign}$${Math.round(a)}`;
}

/** About `count` round tick values covering [lo, hi]. */
export function ticks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

function frame(width, height, label) {
  const svg = node("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": label,
    class: "chart-svg",
  });
  svg.append(node("title", {}, label));
  return svg;
}

function scale(d0, d1, r0, r1) {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return (v) => r0 + (v - d0) * k;
}

function axes(svg, box, x, y, xTicks, yTicks, xFmt, yFmt, xTitle, yTitle) {
  const g = node("g", { class: "axes" });
  for (const t of yTicks) {
    const py = y(t);
    g.append(node("line", { x1: box.l, x2: box.r, y1: py, y2: py, class: "grid" }));
    g.append(node("text", { x: box.l - 6, y: py + 4, "text-anchor": "end" }, yFmt(t)));
  }
  for (const t of xTicks) {
    const px = x(t);
    g.append(node("line", { x1: px, x2: px, y1: box.b, y2: box.b + 4, class: "tick" }));
    g.append(node("text", { x: px, y: box.b + 17, "text-anchor": "middle" }, xFmt(t)));
  }
  g.append(node("line", { x1: box.l, x2: box.r, y1: box.b, y2: box.b, class: "axis" }));
  g.append(node("line", { x1: box.l, x2: box.l, y1: box.t, y2: box.b, class: "axis" }));
  g.append(
    node(
      "text",
      { x: (box.l + box.r) / 2, y: box.b + 34, "text-anchor": "middle", class: "axis-title" },
      xTitle,
    ),
  );
  const ty = (box.t + box.b) / 2;
  const titles = [yTitle].flat().filter(Boolean);
  const fits = titles.find((t) => t.length * TITLE_CHAR_PX <= box.b - box.t) || titles.at(-1);
  if (fits)
    g.append(
      node(
        "text",
        {
          x: TITLE_X,
          y: ty,
          transform: `rotate(-90 ${TITLE_X} ${ty})`,
          "text-anchor": "middle",
          class: "axis-title",
        },
        fits,
      ),
    );
  svg.append(g);
}

/** The x of the y axis's title (rotated: its glyphs reach about 10 px to the left and 3 px
 * to the right) [px], the width of one of its characters (12 px text) with a little room
 * [px], and the room between it and the y ticks' labels [px]. */
const TITLE_X = 13;
const TITLE_CHAR_PX = 6.8;
const TITLE_GAP_PX = 8;

/** Widen the left margin of `box` so that the y ticks' labels (`labels`, right-aligned 6 px
 * left of the axis) clear the y axis's title. */
function fitLeft(box, labels) {
  const widest = Math.max(0, ...labels.map((t) => t.length)) * TICK_CHAR_PX;
  box.l = Math.max(box.l, Math.ceil(TITLE_X + 3 + TITLE_GAP_PX + widest + 6));
}

function geometry(width) {
  const narrow = width < 480;
  const height = Math.round(Math.min(380, Math.max(240, width * 0.56)));
  const box = { l: narrow ? 54 : 66, r: width - 22, t: 12, b: height - 44 };
  return { height, box, count: narrow ? 4 : 6 };
}

/** The sides a break-even chart draws, bottom layer first (the owned side on top): [class,
 * its TCO bands]. */
function sides(result) {
  return sidesOf(result)
    .reverse()
    .map((s) => [s, result[`${s}_tco`]]);
}

/** "buying and of renting and of the API": how a chart's title names the `drawn` sides. */
function sidesWords(drawn) {
  return drawn.map((s) => SIDES[s].doing).join(" and of ");
}

/** The P10–P90 band and the P50 line over `xs` of each of `layers` ([class, bands]), bottom
 * layer first. */
function drawBands(svg, xs, layers, x, y) {
  for (const [side, bands] of layers) {
    const at = (q) => xs.map((v, i) => `${x(v).toFixed(1)},${y(bands[q][i]).toFixed(1)}`);
    const outline = [...at("p90"), ...at("p10").reverse()].join(" ");
    svg.append(node("polygon", { points: outline, class: `band ${side}` }));
    svg.append(node("polyline", { points: at("p50").join(" "), class: `line ${side}` }));
  }
}

/** The y ticks and range of money `values` [USD], from 0 or below: [ticks, y0, y1]. */
function moneyRange(values, count) {
  const yTicks = ticks(Math.min(0, ...values), Math.max(...values), count);
  return [
    yTicks,
    Math.min(yTicks[0], ...values),
    Math.max(yTicks[yTicks.length - 1], ...values),
  ];
}

/** A dashed break-even line at utilisation `be` [-] labelled `text`, `row` lines down. */
function breakevenLine(svg, box, x, be, cls, text, row) {
  const px = x(be);
  svg.append(node("line", { x1: px, x2: px, y1: box.t, y2: box.b, class: cls }));
  const right = px < (box.l + box.r) / 2;
  svg.append(
    node(
      "text",
      {
        x: right ? px + 6 : px - 6,
        y: box.t + 14 + 16 * row,
        "text-anchor": right ? "start" : "end",
        class: "be-label",
      },
      text,
    ),
  );
}

/**
 * Total cost of buying and of renting (and of a hosted API) against utilisation: P10–P90
 * bands and P50 lines, the break-even P50 with renting (dashed) and its P10–P90 span
 * (shaded), and the break-even P50 with the API (dotted).
 */
export function breakevenChart(result, width) {
  const { height, box, count } = geometry(width);
  const u = result.utilisation;
  const be = result.breakeven_utilisation;
  // the break-evens with the rivals after renting (a hosted API), each dotted
  const [first, ...further] = rivalsOf(result);
  const more = further.map((s) => [s, versusFigures(result, s)[0]]);
  const label =
    `Total cost of ${sidesWords(sidesOf(result))} against utilisation;` +
    ` break-even${more.length ? ` with ${SIDES[first].doing}` : ""} P50 ${fmtUtilisation(be.p50)}` +
    ` (P10 ${fmtUtilisation(be.p10)}, P90 ${fmtUtilisation(be.p90)})` +
    more
      .map(([s, b]) => `; break-even with ${SIDES[s].doing} P50 ${fmtUtilisation(b.p50)}`)
      .join("");
  const svg = frame(width, height, label);
  let x0 = Math.min(...u);
  let x1 = Math.max(...u);
  if (x1 === x0) [x0, x1] = [Math.max(0, x0 - 0.05), Math.min(1, x1 + 0.05)];
  const all = sides(result).flatMap(([, bands]) => [...bands.p10, ...bands.p90]);
  const [yTicks, y0, y1] = moneyRange(all, count);
  fitLeft(box, yTicks.map(usdTick));
  const x = scale(x0, x1, box.l, box.r);
  const y = scale(y0, y1, box.b, box.t);
  const xTicks = ticks(x0, x1, count).filter((t) => t >= x0 - 1e-9 && t <= x1 + 1e-9);
  axes(
    svg,
    box,
    x,
    y,
    xTicks,
    yTicks,
    (t) => fmtUtilisation(t),
    usdTick,
    "Utilisation",
    "TCO [USD, present value]",
  );

  const shown = (v) => v !== null && v !== undefined && v >= x0 && v <= x1;
  if (be.p50 !== null && be.p50 !== undefined) {
    const lo = Math.max(x0, be.p10 ?? x0);
    const hi = Math.min(x1, be.p90 ?? x1);
    if (hi > lo)
      svg.append(
        node("rect", {
          x: x(lo),
          y: box.t,
          width: x(hi) - x(lo),
          height: box.b - box.t,
          class: "be-span",
        }),
      );
  }
  drawBands(svg, u, sides(result), x, y);
  const words = more.length ? `vs ${SIDES[first].option}` : "break-even";
  if (shown(be.p50))
    breakevenLine(svg, box, x, be.p50, "be-line", `${words} ${fmtUtilisation(be.p50)}`, 0);
  for (const [row, [s, b]] of more.entries())
    if (shown(b.p50)) {
      const text = `vs ${SIDES[s].option} ${fmtUtilisation(b.p50)}`;
      breakevenLine(svg, box, x, b.p50, `be-line ${s}`, text, row + 1);
    }
  return svg;
}

/** Index of the utilisation level of `result` nearest `u`. */
export function nearestLevel(result, u) {
  let best = 0;
  result.utilisation.forEach((v, i) => {
    if (Math.abs(v - u) < Math.abs(result.utilisation[best] - u)) best = i;
  });
  return best;
}

/**
 * Cumulative cash cost of buying and of renting (and of a hosted API) by month at the
 * result's report utilisation, without resale: P10–P90 bands and P50 lines, and the payback
 * P50 against renting (dashed) and against the API (dotted) at that level.
 */
export function paybackChart(result, width) {
  const { height, box, count } = geometry(width);
  const cum = result.cumulative_cost;
  const months = cum.months;
  const drawn = Object.keys(SIDES).filter((s) => cum[s]);
  const layers = [...drawn].reverse().map((s) => [s, cum[s]]);
  const i = nearestLevel(result, cum.utilisation);
  // the paybacks against the rivals after renting (a hosted API), each dotted
  const further = drawn.filter((s) => !SIDES[s].owned).slice(1);
  const paybacks = [
    ["", "be-line", "payback", result.payback_months.p50[i]],
    ...further.map((s) => {
      const m = versusFigures(result, s)[1].p50[i];
      return [` against ${SIDES[s].doing}`, `be-line ${s}`, `vs ${SIDES[s].option}`, m];
    }),
  ];
  const words = paybacks
    .map(([against, , , m]) => `payback${against} P50 ${fmtMonths(m)}`)
    .join("; ");
  const label =
    `Cumulative cost of ${sidesWords(drawn)} by month at ` +
    `${fmtUtilisation(cum.utilisation)} utilisation, without resale; ${words}`;
  const svg = frame(width, height, label);
  const x1 = months[months.length - 1];
  const all = layers.flatMap(([, bands]) => [...bands.p10, ...bands.p90]);
  const [yTicks, y0, y1] = moneyRange(all, count);
  fitLeft(box, yTicks.map(usdTick));
  const x = scale(0, x1, box.l, box.r);
  const y = scale(y0, y1, box.b, box.t);
  const xTicks = ticks(0, x1, count).filter((t) => t <= x1 && Number.isInteger(t));
  // the long title where it fits the plot's height, else the short one (at 375 px; the
  // caption says present value)
  const yTitle = ["Cumulative cost [USD, present value]", "Cumulative cost [USD]"];
  axes(svg, box, x, y, xTicks, yTicks, (t) => String(t), usdTick, "Month", yTitle);
  drawBands(svg, months, layers, x, y);
  for (const [row, [, cls, short, m]] of paybacks.entries())
    if (m !== null && m !== undefined && m <= x1)
      breakevenLine(svg, box, x, m, cls, `${short} ${fmtMonths(m)} months`, row);
  return svg;
}

/** Most inputs a tornado chart shows. */
export const TORNADO_BARS = 8;
/** A tornado's input labels: their font size [px] (app.css .tornado-label, monospaced) and
 * the width of one of their characters with a little room (a monospaced font's is 0.6 em)
 * [px]; the height of a line of them, of a bar and of the gap under a bar [px]. */
const NAME_PX = 11;
const NAME_CHAR_PX = NAME_PX * 0.62;
const LINE_PX = 14;
const BAR_PX = 12;
const ROW_GAP_PX = 10;
/** The width of a character of an axis's tick labels (12 px text), with a little room [px]. */
const TICK_CHAR_PX = 7.5;

/** The bars of tornado `t` a chart draws: its inputs by the swing of the gap they draw
 * (|gap_at_high - gap_at_low| [USD]), largest first, ties in the result's order; at most
 * TORNADO_BARS. */
export function tornadoBars(t) {
  const swing = (b) => Math.abs(b.gap_at_high - b.gap_at_low);
  return [...t.inputs].sort((a, b) => swing(b) - swing(a)).slice(0, TORNADO_BARS);
}

/** `text` in lines of at most `chars` characters, broken after a ".", "_" or space where it
 * is too long (inside a word only when no such break fits). */
function wrap(text, chars) {
  const lines = [];
  let rest = text;
  while (rest.length > chars) {
    const head = rest.slice(0, chars);
    const cut = Math.max(head.lastIndexOf("."), head.lastIndexOf("_"), head.lastIndexOf(" "));
    const at = cut > 0 ? cut + 1 : chars;
    lines.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at).trimStart();
  }
  return [...lines, rest];
}

/** A bar's label in lines of at most `chars` characters: "input: P10 → P90" on one line when
 * it fits, else the input's name and its values on lines of their own. */
function barLabel(bar, chars) {
  const name = `${bar.input}:`;
  const values = `${fmtNumber(bar.low)} \u2192 ${fmtNumber(bar.high)}`;
  const one = `${name} ${values}`;
  return one.length <= chars ? [one] : [...wrap(name, chars), ...wrap(values, chars)];
}

/** About `count` money ticks of [x0, x1], fewer until their labels (usdTick) fit between
 * `left` and `right` [px] without touching. */
function fittedTicks(x0, x1, x, count, left, right) {
  for (let n = count; n >= 1; n -= 1) {
    const inRange = ticks(x0, x1, n).filter((t) => t >= x0 && t <= x1);
    const spans = inRange
      .map((t) => [t, (usdTick(t).length * TICK_CHAR_PX) / 2])
      .filter(([t, half]) => x(t) - half >= left && x(t) + half <= right);
    const apart = spans.every(
      ([t, half], i) => i === 0 || x(spans[i - 1][0]) + spans[i - 1][1] + 6 <= x(t) - half,
    );
    if (apart) return spans.map(([t]) => t);
  }
  return [];
}

/**
 * Tornado `t` of buying against side `versus` ("rent", "api"; its words from SIDES): one bar
 * per input (tornadoBars), from TCO_buy - TCO_<versus> [USD] at the tornado's utilisation with
 * the input at its P10 to
 * that with it at its P90, every other input at its median; the input's name and its P10 →
 * P90 above its bar, its P90 end marked; a line at every input's median and, in range, a
 * dashed one at 0. A bar is coloured by what the input's P90 does to buying: cheaper (the buy
 * colour), dearer (the rival's) or nothing.
 */
export function tornadoChart(t, versus, width) {
  const bars = tornadoBars(t);
  const [short, words] = [SIDES[versus].option, SIDES[versus].doing];
  const [Buy, buy] = [SIDES[OWNED].label, SIDES[OWNED].option];
  const u = fmtUtilisation(t.utilisation, "?");
  const pad = 10;
  const labelX = pad + 4;
  const chars = Math.floor((width - labelX - pad) / NAME_CHAR_PX);
  const labels = bars.map((b) => barLabel(b, chars));
  let top = 6;
  const rows = labels.map((lines) => {
    const row = { top, bar: top + lines.length * LINE_PX + 4 };
    top = row.bar + BAR_PX + ROW_GAP_PX;
    return row;
  });
  const box = { l: pad, r: width - pad, t: 2, b: top - ROW_GAP_PX / 2 };
  const height = Math.round(box.b + 44);
  const label =
    `${Buy} minus ${short} total cost at ${u} utilisation, each input from its P10 to its P90 ` +
    `with the others at their medians (all at their medians: ${fmtUsd(t.gap_at_median)}): ` +
    bars
      .map((b) => `${b.input} ${fmtUsd(b.gap_at_low)} to ${fmtUsd(b.gap_at_high)}`)
      .join("; ");
  const svg = frame(width, height, label);
  const ends = [t.gap_at_median, ...bars.flatMap((b) => [b.gap_at_low, b.gap_at_high])];
  let x0 = Math.min(...ends);
  let x1 = Math.max(...ends);
  const d = (x1 - x0) * 0.05 || Math.abs(x1) * 0.1 || 1;
  [x0, x1] = [x0 - d, x1 + d];
  const x = scale(x0, x1, box.l, box.r);
  const xTicks = fittedTicks(x0, x1, x, width < 480 ? 4 : 6, 2, width - 2);
  const title = `${Buy} \u2212 ${short} TCO at ${u} [USD]`;
  axes(svg, box, x, null, xTicks, [], usdTick, null, title, "");

  for (const [i, b] of bars.entries()) {
    const [at10, at90] = [b.gap_at_low, b.gap_at_high];
    const [lo, hi] = [Math.min(at10, at90), Math.max(at10, at90)];
    const way = at90 > at10 ? "dearer" : at90 < at10 ? "cheaper" : "flat";
    const w = Math.max(2, x(hi) - x(lo));
    const bar = node("rect", {
      x: (x(lo) + x(hi) - w) / 2,
      y: rows[i].bar,
      width: w,
      height: BAR_PX,
      class: `tornado-bar ${way} ${versus}`,
      "data-input": b.input,
    });
    const be = `${fmtUtilisation(b.breakeven_at_low)} to ${fmtUtilisation(b.breakeven_at_high)}`;
    bar.append(
      node(
        "title",
        {},
        `${b.input} from ${fmtNumber(b.low)} (P10) to ${fmtNumber(b.high)} (P90): ${buy} ` +
          `\u2212 ${short} ${fmtUsd(b.gap_at_low)} to ${fmtUsd(b.gap_at_high)}, break-even ` +
          `with ${words} ${be}`,
      ),
    );
    svg.append(bar);
    if (way !== "flat") {
      const px = x(at90);
      const y = rows[i].bar;
      svg.append(node("line", { x1: px, x2: px, y1: y - 2, y2: y + BAR_PX + 2, class: "p90-end" }));
    }
  }
  const vertical = (v, cls) =>
    svg.append(node("line", { x1: x(v), x2: x(v), y1: box.t, y2: box.b, class: cls }));
  if (x0 < 0 && x1 > 0 && t.gap_at_median !== 0) vertical(0, "tornado-zero");
  vertical(t.gap_at_median, "tornado-median");
  // The labels last, over the lines (app.css gives them a halo of the paper's colour).
  for (const [i, b] of bars.entries()) {
    labels[i].forEach((line, k) => {
      const y = rows[i].top + LINE_PX * (k + 1) - 3;
      svg.append(
        node("text", { x: labelX, y, class: "tornado-label", "data-input": b.input }, line),
      );
    });
  }
  return svg;
}

/** Radii of the best plan's star and of a frontier point [px]; a ring of the carbon frontier
 * is this much wider than the mark it circles [px]. */
const STAR_R = 10;
const FRONTIER_R = 4.5;
const RING_GAP = 3;

function star(cx, cy, r) {
  const points = [];
  for (let i = 0; i < 10; i += 1) {
    const radius = i % 2 ? r * 0.45 : r;
    const angle = (Math.PI / 5) * i - Math.PI / 2;
    points.push(
      `${(cx + radius * Math.cos(angle)).toFixed(1)},${(cy + radius * Math.sin(angle)).toFixed(1)}`,
    );
  }
  return points.join(" ");
}

/** Font size of a point's label [px] (app.css .point-label), the width of one of its
 * characters, about (digits and "+" of system-ui) [px], and the font's ascent above the
 * baseline as the browser boxes the text [em]. */
const LABEL_PX = 11;
const LABEL_CHAR_PX = 6.6;
const ASCENT = 0.95;

/** Where a label may go around a mark of radius `r` at (x, y): [dx, dy, text-anchor], the
 * baseline's offset. Right of the mark first, then left, above, below, the corners. */
function spots(r) {
  const g = r + 3;
  const mid = LABEL_PX * 0.35; // half the height of digits about the baseline
  return [
    [g, mid, "start"],
    [-g, mid, "end"],
    [0, -g, "middle"],
    [0, g + LABEL_PX * ASCENT, "middle"],
    [g * 0.8, -g * 0.8, "start"],
    [g * 0.8, g * 0.8 + LABEL_PX * ASCENT, "start"],
    [-g * 0.8, -g * 0.8, "end"],
    [-g * 0.8, g * 0.8 + LABEL_PX * ASCENT, "end"],
  ];
}

function overlaps(a, b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/** The box of a label of `width` whose baseline is at (x, y), anchored at `anchor`. */
function labelBox(x, y, width, anchor) {
  const x0 = anchor === "start" ? x : anchor === "end" ? x - width : x - width / 2;
  return { x0, y0: y - LABEL_PX * ASCENT, x1: x0 + width, y1: y + LABEL_PX * 0.25 };
}

/**
 * Labels for `points` ({x, y, r, text, and cls: a class in place of `cls`}, the first placed
 * first) that collide neither with a mark in `marks` ({x0, y0, x1, y1}) nor with a label
 * already placed, inside `box`: each takes the first clear spot around its mark, one clear of
 * the `minor` marks too if there is one; a label with no clear spot is left out (its mark keeps
 * its tooltip). Returns the <text> nodes.
 */
function placeLabels(points, marks, minor, box, cls) {
  const taken = [...marks];
  const out = [];
  const within = (b) => b.x0 >= box.l && b.x1 <= box.r && b.y0 >= box.t && b.y1 <= box.b;
  for (const p of points) {
    const width = p.text.length * LABEL_CHAR_PX;
    const clear = spots(p.r)
      .map(([dx, dy, anchor]) => ({ x: p.x + dx, y: p.y + dy, anchor }))
      .map((s) => ({ ...s, rect: labelBox(s.x, s.y, width, s.anchor) }))
      .filter((s) => within(s.rect) && !taken.some((t) => overlaps(t, s.rect)));
    const spot = clear.find((s) => !minor.some((m) => overlaps(m, s.rect))) || clear[0];
    if (!spot) continue;
    taken.push(spot.rect);
    out.push(
      node(
        "text",
        { x: spot.x, y: spot.y, "text-anchor": spot.anchor, class: p.cls || cls },
        p.text,
      ),
    );
  }
  return out;
}

/** The square around a round mark of radius `r` at (x, y), 1 px wider. */
function around(x, y, r) {
  return { x0: x - r - 1, y0: y - r - 1, x1: x + r + 1, y1: y + r + 1 };
}

/** A plan candidate as present/formatting.py's fmt_mix names it: "5 servers, 0 reserved", or
 * for one that adds servers later "3 + 2 servers at 90 %, 0 reserved". */
export function planLabel(c) {
  if (c.add) {
    const [first, when] = fmtServers(c).split(/ (?=at |in month )/);
    return `${first} servers ${when}, ${c.instances} reserved`;
  }
  return `${counted(c.servers, "server")}, ${c.instances} reserved`;
}

/** A frontier point's label, servers+reserved: "5+0", or "3+0 (+ 2 at 90 %)" for a candidate
 * that adds 2 servers when the work passes 90 % of the first 3 servers' capacity. */
function pointLabel(c) {
  const label = `${c.servers}+${c.instances}`;
  if (!c.add) return label;
  return `${label} (${fmtServers(c).slice(String(c.servers).length).trim()})`;
}

function candidateText(c) {
  const carbon = "carbon" in c ? `, ${fmtTonnes(c.carbon && c.carbon.mean)} CO2e mean` : "";
  return `${planLabel(c)}: mean ${fmtUsd(c.cost.mean)}, P90 ${fmtUsd(c.cost.p90)}, cheaper than all-cloud in ${fmtShare(c.prob_cheaper_than_cloud)}${carbon}`;
}

/** The carbon frontier's rings, one around each of its candidates' marks (`radius(c)`), at
 * `at(c)`: [ring nodes, the rings' radii by candidate key]. */
function carbonRings(result, at, radius) {
  const rings = new Map();
  const nodes = (result.carbon_frontier || []).map((c) => {
    const r = radius(c) + RING_GAP;
    rings.set(candidateKey(c), r);
    const ring = node("circle", { cx: at(c).x, cy: at(c).y, r, class: "carbon-frontier" });
    ring.append(node("title", {}, `carbon frontier: ${candidateText(c)}`));
    return ring;
  });
  return [nodes, rings];
}

/**
 * Cost against risk: every candidate at (mean cost, P90 cost), the frontier (no candidate is
 * cheaper on both) connected, the best plan a star, all-cloud a square; in a plan that counts
 * carbon the carbon frontier's candidates (no other cheaper and lower-carbon) ringed.
 */
export function frontierChart(result, width) {
  const { height, box, count } = geometry(width);
  const best = result.best;
  const greens = (result.carbon_frontier || []).length;
  const ringed = greens ? `; ${greens} on the carbon frontier, ringed` : "";
  const label = `Mean against P90 cost of ${result.candidates.length} candidate plans; best: ${candidateText(best)}${ringed}`;
  const svg = frame(width, height, label);
  const shown = [...result.candidates, result.all_cloud];
  const xs = shown.map((c) => c.cost.mean);
  const ys = shown.map((c) => c.cost.p90);
  const pad = (lo, hi) => {
    const d = (hi - lo) * 0.06 || Math.abs(hi) * 0.1 || 1;
    return [Math.max(0, lo - d), hi + d];
  };
  const [x0, x1] = pad(Math.min(...xs), Math.max(...xs));
  const [y0, y1] = pad(Math.min(...ys), Math.max(...ys));
  const inside = (lo, hi) => (t) => t >= lo && t <= hi;
  const yTicks = ticks(y0, y1, count).filter(inside(y0, y1));
  fitLeft(box, yTicks.map(usdTick));
  const x = scale(x0, x1, box.l, box.r);
  const y = scale(y0, y1, box.b, box.t);
  axes(
    svg,
    box,
    x,
    y,
    ticks(x0, x1, count).filter(inside(x0, x1)),
    yTicks,
    usdTick,
    usdTick,
    "Mean cost [USD, present value]",
    "P90 cost [USD]",
  );

  const key = candidateKey;
  const frontier = new Set(result.frontier.map(key));
  for (const c of result.candidates) {
    if (frontier.has(key(c))) continue;
    const dot = node("circle", { cx: x(c.cost.mean), cy: y(c.cost.p90), r: 3, class: "candidate" });
    dot.append(node("title", {}, candidateText(c)));
    svg.append(dot);
  }
  const front = [...result.frontier].sort(
    (a, b) => a.cost.mean - b.cost.mean || a.cost.p90 - b.cost.p90,
  );
  svg.append(
    node("polyline", {
      points: front
        .map((c) => `${x(c.cost.mean).toFixed(1)},${y(c.cost.p90).toFixed(1)}`)
        .join(" "),
      class: "frontier-line",
    }),
  );
  const at = (c) => ({ x: x(c.cost.mean), y: y(c.cost.p90) });
  for (const c of front) {
    const dot = node("circle", { cx: at(c).x, cy: at(c).y, r: FRONTIER_R, class: "frontier" });
    dot.append(node("title", {}, `frontier: ${candidateText(c)}`));
    svg.append(dot);
  }
  const cloud = result.all_cloud;
  const sq = node("rect", {
    x: x(cloud.cost.mean) - 5,
    y: y(cloud.cost.p90) - 5,
    width: 10,
    height: 10,
    class: "cloud",
  });
  sq.append(node("title", {}, `all-cloud (rent everything): ${candidateText(cloud)}`));
  svg.append(sq);
  const mark = node("polygon", {
    points: star(at(best).x, at(best).y, STAR_R),
    class: "best",
  });
  mark.append(node("title", {}, `best: ${candidateText(best)}`));
  svg.append(mark);
  const radius = (c) => (key(c) === key(best) ? STAR_R : frontier.has(key(c)) ? FRONTIER_R : 3);
  const [ringNodes, rings] = carbonRings(result, at, radius);
  svg.append(...ringNodes);
  // Labels: the best plan's first, then the frontier's, then the carbon frontier's, each clear
  // of every mark, ring and label.
  const labelled = [best, ...front, ...(result.carbon_frontier || [])].filter(
    (c, i, all) => all.findIndex((d) => key(d) === key(c)) === i,
  );
  const points = labelled.map((c) => ({
    ...at(c),
    r: rings.get(key(c)) ?? radius(c),
    text: pointLabel(c),
    cls: radius(c) === 3 ? "point-label carbon" : null,
  }));
  const marks = [
    around(at(best).x, at(best).y, STAR_R),
    around(at(cloud).x, at(cloud).y, 5),
    ...front.map((c) => around(at(c).x, at(c).y, FRONTIER_R)),
    ...(result.carbon_frontier || []).map((c) => around(at(c).x, at(c).y, rings.get(key(c)))),
  ];
  const dots = result.candidates.map((c) => around(at(c).x, at(c).y, 3));
  svg.append(...placeLabels(points, marks, dots, box, "point-label"));
  return svg;
}

/** The most series a throughput chart tells apart by colour (app.css .series-0 to -7). */
export const SERIES = 8;

/** A count of tokens/s as an axis tick: "850", "2.5k", "24k". */
function tokensTick(v) {
  return v >= 1000 ? `${Number((v / 1000).toPrecision(3))}k` : String(Number(v.toPrecision(3)));
}

/** Ticks of a log axis over [lo, hi]: 1, 2 and 5 of each decade, only the decades when those
 * are more than `count` + 2, round linear ticks when fewer than two fall inside. */
function logTicks(lo, hi, count) {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++)
    for (const m of [1, 2, 5]) {
      const v = Number((m * 10 ** e).toPrecision(12));
      if (v >= lo && v <= hi) out.push(v);
    }
  const decades = out.filter((v) => String(v).startsWith("1"));
  if (out.length > count + 2 && decades.length >= 2) return decades;
  return out.length >= 2 ? out : ticks(lo, hi, count).filter((v) => v >= lo && v <= hi);
}

/** The series of throughput answer `t` (GET /v1/throughput with `curves`) a chart draws:
 * each estimated curve, then each measured or your row (with the builds it holds for), at
 * most SERIES in all; each with
 * its legend text and colour index. An option whose row measured no per-user speed is a level
 * (`user` null): its tokens/s per GPU across the chart. */
export function throughputSeries(t) {
  const curves = (t.curves || []).map((c) => ({
    kind: "estimated",
    text: `${c.gpu} \u00d7${c.gpus} (G ${c.gpus_per_replica}), estimated: P50, P10\u2013P90 band`,
    user: c.tokens_per_s_per_user,
    band: c.tokens_per_s_per_gpu,
  }));
  const rows = new Map(); // a row holding for several builds of its GPU is one series
  for (const o of t.options.filter((o) => o.origin !== "estimated")) {
    const same = rows.get(o.row_id);
    if (same) same.builds.push(o.gpus);
    else rows.set(o.row_id, { o, builds: [o.gpus] });
  }
  const measured = [...rows.values()].map(({ o, builds }) => {
    const v = [o.tokens_per_s_per_gpu.p50];
    const user = o.tokens_per_s_per_user;
    const at = user ? "" : " (per-user speed not measured)";
    const gpus = builds.map((n) => `\u00d7${n}`).join(", ");
    return {
      kind: user ? o.origin : "level",
      text: `${o.gpu} ${gpus}, ${o.origin}: ${o.row_id}${at}`,
      user: user ? [user] : null,
      band: { p10: v, p50: v, p90: v },
    };
  });
  return [...curves, ...measured].slice(0, SERIES).map((s, i) => ({ ...s, series: i }));
}

/** Tokens/s per GPU (log) against tokens/s per user: each estimated curve a P50 line in its
 * P10-P90 band, each measured option a dot, or a dashed level where its row measured no
 * per-user speed; `series` from throughputSeries (at least one curve or dot). */
export function throughputChart(t, series, width) {
  const { height, box, count } = geometry(width);
  const label =
    `Tokens/s per GPU against tokens/s per user of ${t.model} at ${t.precision}, ` +
    `${t.input_tokens} / ${t.output_tokens} tokens per request`;
  const svg = frame(width, height, label);
  svg.append(node("desc", {}, series.map((s) => s.text).join("; ")));
  const xs = series.flatMap((s) => s.user || []);
  const ys = series.flatMap((s) => [...s.band.p10, ...s.band.p90, ...s.band.p50]);
  const [y0, y1] = [Math.min(...ys) / 1.15, Math.max(...ys) * 1.15];
  const x1 = Math.max(...xs) * 1.05;
  const yTicks = logTicks(y0, y1, count);
  fitLeft(box, yTicks.map(tokensTick));
  const x = scale(0, x1, box.l, box.r);
  const ly = scale(Math.log10(y0), Math.log10(y1), box.b, box.t);
  const y = (v) => ly(Math.log10(v));
  const xTicks = ticks(0, x1, count).filter((v) => v <= x1);
  const titles = ["Tokens/s per GPU [tokens/s, input + output]", "Tokens/s per GPU"];
  axes(svg, box, x, y, xTicks, yTicks, tokensTick, tokensTick, "Per user [tokens/s]", titles);
  const at = (u, v) => `${x(u).toFixed(1)},${y(v).toFixed(1)}`;
  for (const s of series) {
    const g = node("g", { class: `throughput ${s.kind} series-${s.series}` });
    g.append(node("title", {}, s.text));
    if (s.kind === "estimated") {
      const upper = s.user.map((u, i) => at(u, s.band.p90[i]));
      const lower = s.user.map((u, i) => at(u, s.band.p10[i])).reverse();
      g.append(node("polygon", { points: [...upper, ...lower].join(" "), class: "tp-band" }));
      const line = s.user.map((u, i) => at(u, s.band.p50[i])).join(" ");
      g.append(node("polyline", { points: line, class: "tp-line" }));
    } else if (s.user) {
      const cx = x(s.user[0]);
      g.append(node("circle", { cx, cy: y(s.band.p50[0]), r: 5, class: "tp-point" }));
    } else {
      const py = y(s.band.p50[0]);
      g.append(node("line", { x1: box.l, x2: box.r, y1: py, y2: py, class: "tp-level" }));
    }
    svg.append(g);
  }
  return svg;
}
