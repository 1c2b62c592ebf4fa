// The scenario view: the verdict, key figures, break-even and payback charts, what drives the
// answer, the warnings and the results by utilisation of a rent-versus-buy result (POST
// /v1/evaluate). An inference result counts its cost in M tokens, and one with a hosted API
// (`api_tco`) shows it as a third side: its TCO, the break-even with it, its cost per M tokens
// and the share of draws in which each side is the cheapest. Each side's emissions (`carbon`)
// are shown at the report utilisation, an API without emission figures as unknown. What drives
// the answer: the rank correlations, the tornado against renting (and against the API) and the
// value of information, each part left out of a result stored before it existed (null or
// absent).

import {
  breakevenChart,
  nearestLevel,
  paybackChart,
  TORNADO_BARS,
  tornadoChart,
} from "../charts.js";
import {
  fmtGrams,
  fmtMonths,
  fmtShare,
  fmtTonnes,
  fmtUnitCost,
  fmtUsd,
  fmtUtilisation,
  UNIT_WORDS,
} from "../format.js";
import { drawChart, fillTable, figures, warnings } from "../render.js";
import { OWNED, rivalsOf, SIDES, sidesOf, versusFigures } from "../sides.js";

export const kind = "scenario";

function span(lo, hi, fmt) {
  return `P10\u2013P90: ${fmt(lo)} to ${fmt(hi)}`;
}

function breakeven(be) {
  return `${fmtUtilisation(be.p50)} (${span(be.p10, be.p90, fmtUtilisation)})`;
}

function payback(pb, i) {
  const months = pb.p50[i] === null ? "" : " months";
  return `${fmtMonths(pb.p50[i])}${months} (${span(pb.p10[i], pb.p90[i], fmtMonths)})`;
}

/** The side cheapest in the most draws at level `i` (a tie goes to the first of SIDES). */
function topSide(shares, i) {
  return Object.keys(SIDES)
    .filter((s) => shares[s])
    .reduce((a, b) => (shares[b][i] > shares[a][i] ? b : a));
}

/** The cheapest side at level `i` with every side's share: "renting (57 % of draws; buying
 * 43 %, the API 0 %)". */
function cheapest(shares, i) {
  const top = topSide(shares, i);
  const others = Object.keys(SIDES)
    .filter((s) => shares[s] && s !== top)
    .map((s) => `${SIDES[s].doing} ${fmtShare(shares[s][i])}`);
  return `${SIDES[top].doing} (${fmtShare(shares[top][i])} of draws; ${others.join(", ")})`;
}

/** The sides with a cost per M tokens (inference work); none for training. */
function perToken(result) {
  const unit = result.cost_per_unit;
  return unit && unit.unit === "million_tokens" ? Object.keys(SIDES).filter((s) => unit[s]) : [];
}

/** [label, value] of each comparison of buying with side `versus` (renting, the API). */
function against(result, i, at, versus) {
  const words = SIDES[versus].doing;
  const [be, pb, prob] = versusFigures(result, versus);
  return [
    [`Break-even with ${words} (P50)`, breakeven(be)],
    [`P(buy cheaper than ${words}) at ${at}`, fmtShare(prob[i])],
    [`Payback against ${words} at ${at} (P50)`, payback(pb, i)],
  ];
}

/** The key figures at level `i` (`at`: its utilisation in words): against one rival its
 * break-even, P(buy cheaper) and payback; against several the cheapest side and those of
 * each; then each side's TCO. */
function keyFigures(result, i, at) {
  const rivals = rivalsOf(result);
  const pairs =
    rivals.length > 1
      ? [
          [`Cheapest at ${at}`, cheapest(result.cheapest_share, i)],
          ...rivals.flatMap((versus) => against(result, i, at, versus)),
        ]
      : [
          ["Break-even utilisation (P50)", breakeven(result.breakeven_utilisation)],
          [`P(buy cheaper) at ${at}`, fmtShare(result.prob_buy_cheaper[i])],
          [`Payback at ${at} (P50)`, payback(result.payback_months, i)],
        ];
  for (const s of sidesOf(result))
    pairs.push([`${SIDES[s].label} TCO at ${at} (P50)`, fmtUsd(result[`${s}_tco`].p50[i])]);
  return pairs;
}

/** The server's sentences under the key figures (`wording`: how often buying wins or loses
 * whatever the utilisation, each side's cost per unit of work at the report utilisation, the
 * payback note); none for a result stored before them. */
function figureNotes(wording) {
  if (!wording) return [];
  return [...wording.shares, wording.cost, wording.payback_note].filter(Boolean);
}

/** Fill `node` with one paragraph per sentence of `texts`, and hide it without any. */
function paragraphs(node, texts) {
  node.replaceChildren(
    ...texts.map((text) => {
      const p = document.createElement("p");
      p.className = "note";
      p.textContent = text;
      return p;
    }),
  );
  node.hidden = !texts.length;
}

/** The emissions table at level `i`: [headers, rows], one row a side (the API's "unknown"
 * when its emissions are, never 0); [] without carbon figures. */
function emissions(result, i) {
  const c = result.carbon;
  if (!c) return [];
  const unit = UNIT_WORDS[c.per_unit.unit];
  const sides = Object.keys(SIDES).filter((s) => c[s] || (c.unknown || []).includes(s));
  const headers = ["Side", "CO2e P50", "P10\u2013P90", `CO2e per ${unit} P50`];
  const rows = sides.map((s) =>
    c[s]
      ? [
          SIDES[s].label,
          fmtTonnes(c[s].p50[i]),
          `${fmtTonnes(c[s].p10[i])} to ${fmtTonnes(c[s].p90[i])}`,
          fmtGrams(c.per_unit[s] ? c.per_unit[s].p50[i] : null),
        ]
      : [SIDES[s].label, fmtTonnes(null), fmtTonnes(null), fmtTonnes(null)],
  );
  return [headers, rows];
}

/** The results by utilisation: [headers, rows, highlighted(j)]: each side's TCO; against
 * several rivals (a hosted API beside renting) P(buy cheaper) than each and the cheapest side;
 * inference adds each side's cost per M tokens. */
function levels(result) {
  const all = sidesOf(result);
  const rivals = rivalsOf(result);
  const several = rivals.length > 1;
  const unit = result.cost_per_unit;
  const sides = perToken(result);
  const headers = [
    "Utilisation",
    ...all.map((s) => `${SIDES[s].label} TCO P50`),
    ...(several
      ? [...rivals.map((s) => `P(buy cheaper than ${SIDES[s].doing})`), "Cheapest (share of draws)"]
      : ["P(buy cheaper)"]),
    ...sides.map((s) => `${SIDES[s].label} per ${UNIT_WORDS[unit.unit]} P50`),
    "Payback P50 [months]",
  ];
  const shares = result.cheapest_share;
  const top = (j) => topSide(shares, j);
  const rows = result.utilisation.map((v, j) => [
    fmtUtilisation(v, "\u2014"),
    ...all.map((s) => fmtUsd(result[`${s}_tco`].p50[j])),
    ...(several
      ? [
          ...rivals.map((s) => fmtShare(versusFigures(result, s)[2][j])),
          `${SIDES[top(j)].doing} ${fmtShare(shares[top(j)][j])}`,
        ]
      : [fmtShare(result.prob_buy_cheaper[j])]),
    ...sides.map((s) => fmtUnitCost(unit[s].p50[j])),
    fmtMonths(result.payback_months.p50[j]),
  ]);
  const highlighted = several
    ? (j) => shares[OWNED][j] >= 0.5
    : (j) => result.prob_buy_cheaper[j] >= 0.5;
  return [headers, rows, highlighted];
}

/** The tornado and value of information of buying against side `versus` (a rival):
 * [tornado, value of information], each null when the result has none. */
function uncertainty(result, versus) {
  if (versus === "rent") return [result.tornado ?? null, result.value_of_information ?? null];
  const rival = (result.rivals || []).find((r) => r.versus === versus);
  return rival ? [rival.tornado, rival.value_of_information] : [null, null];
}

/** Most inputs the value-of-information table names. */
const VOI_INPUTS = 5;

/** The value of information: [headers, rows, utilisation], a column per side buying is
 * weighed against (renting, the API) with its EVPI, then the inputs the server names as worth
 * naming (`wording.worth_naming`, largest first); [] without any. */
function valueOfInformation(result) {
  const sides = rivalsOf(result)
    .map((s) => [SIDES[s].doing, uncertainty(result, s)[1]])
    .filter(([, voi]) => voi);
  if (!sides.length) return [];
  const inputs = result.wording ? result.wording.worth_naming : [];
  const evppi = (voi, name) => fmtUsd(voi.by_input.find((v) => v.input === name)?.evppi);
  const rows = [
    ["All of them (EVPI)", ...sides.map(([, voi]) => fmtUsd(voi.evpi))],
    ...inputs.slice(0, VOI_INPUTS).map((name) => [name, ...sides.map(([, v]) => evppi(v, name))]),
  ];
  const headers = ["Uncertain input", ...sides.map(([words]) => `Against ${words}`)];
  return [headers, rows, sides[0][1].utilisation];
}

/** Show tornado `t` of buying against `versus` in `figure`, or hide it (no tornado, or one
 * without uncertain inputs); the function that draws its chart, to call once the section is
 * shown (so that it is drawn at the width it is shown at). */
function tornadoFigure(figure, t, versus) {
  const slot = figure.querySelector('[data-role="tornado-chart"]');
  figure.hidden = !(t && t.inputs.length);
  if (figure.hidden) {
    slot.replaceChildren();
    return () => {};
  }
  const part = (role) => figure.querySelector(`[data-role="${role}"]`);
  part("tornado-at").textContent = fmtUtilisation(t.utilisation, "?");
  part("tornado-median").textContent = fmtUsd(t.gap_at_median);
  part("tornado-breakeven").textContent = fmtUtilisation(t.breakeven_at_median);
  const n = t.inputs.length;
  const most = ` Shown: the ${TORNADO_BARS} of ${n} uncertain inputs that swing it most.`;
  part("tornado-count").textContent = n > TORNADO_BARS ? most : "";
  return () => drawChart(slot, (width) => tornadoChart(t, versus, width));
}

/** Signed rank correlation in two decimals: "+0.93", "-0.10". */
function rho(spearman) {
  const sign = spearman > 0 ? "+" : spearman < 0 ? "-" : "";
  return `${sign}${Math.abs(spearman).toFixed(2)}`;
}

/** The rank correlations as [headers, rows, sides]: the 8 strongest inputs with the
 * buy-minus-rent gap (what a higher value does in words); against several rivals (a hosted
 * API beside renting) the 8 strongest with any gap, by the largest, one column for each (an
 * input missing from one side's list: "0.00") and the side it is strongest with (the first
 * on a tie). `sides`: the rivals of the columns. */
function rankCorrelations(result) {
  const rent = result.sensitivity.inputs;
  const further = (result.rivals || []).filter((r) => r.sensitivity);
  const [buy, buying] = [SIDES[OWNED].option, SIDES[OWNED].doing];
  if (!further.length) {
    const top = rent.filter((d) => d.spearman).slice(0, 8);
    const words = (d) => `makes ${buying} ${d.spearman > 0 ? "dearer" : "cheaper"}`;
    return [
      ["Input", "Spearman \u03c1", "A higher value\u2026"],
      top.map((d) => [d.input, rho(d.spearman), words(d)]),
      ["rent"],
    ];
  }
  const sides = ["rent", ...further.map((r) => r.versus)];
  const of = (list) => new Map(list.map((d) => [d.input, d.spearman]));
  const maps = [of(rent), ...further.map((r) => of(r.sensitivity.inputs))];
  const names = [...new Set(maps.flatMap((m) => [...m.keys()]))];
  const strength = (n) => Math.max(...maps.map((m) => Math.abs(m.get(n) ?? 0)));
  const top = names
    .filter((n) => strength(n) > 0)
    .sort((a, b) => strength(b) - strength(a) || (a < b ? -1 : 1))
    .slice(0, 8);
  const heads = sides.map((s) => `\u03c1 with ${buy} \u2212 ${SIDES[s].option}`);
  return [
    ["Input", ...heads, "Strongest with"],
    top.map((n) => {
      const values = maps.map((m) => m.get(n) ?? 0);
      const k = values.reduce((a, v, j) => (Math.abs(v) > Math.abs(values[a]) ? j : a), 0);
      return [n, ...values.map(rho), SIDES[sides[k]].doing];
    }),
    sides,
  ];
}

/** What drives the answer: the rank correlations, the tornados and the value of information;
 * the section and each part shown only with something in it. */
function drivers(result, q) {
  const sens = result.sensitivity;
  const [heads, correlations, sides] = rankCorrelations(result);
  const several = sides.length > 1;
  const minus = (s) => `${SIDES[OWNED].option}-minus-${SIDES[s].option}`;
  q("drivers-part").hidden = !correlations.length;
  q("drivers-at").textContent = fmtUtilisation(sens.utilisation, "?");
  const versus = sides.slice(1).map(minus).join(", ");
  q("drivers-versus").textContent = several ? ` (and with ${versus})` : "";
  const numeric = several ? [false, ...sides.map(() => true), false] : [false, true, false];
  fillTable(q("drivers"), heads, correlations, numeric);
  // a tornado for each rival the view has a figure for (tornado-<side>, one per registered rival)
  const draws = [...q("drivers-section").querySelectorAll("figure.tornado")].map((figure) => {
    const versus = figure.dataset.role.slice("tornado-".length);
    return tornadoFigure(figure, uncertainty(result, versus)[0], versus);
  });
  const [headers, rows, at] = valueOfInformation(result);
  q("voi-part").hidden = !headers;
  if (headers) {
    q("voi-at").textContent = fmtUtilisation(at, "?");
    paragraphs(q("voi-words"), result.wording ? result.wording.value_of_information : []);
    fillTable(q("voi"), headers, rows, [false, ...headers.slice(1).map(() => true)], (r) =>
      r === 0 ? "evpi" : null,
    );
  }
  const section = q("drivers-section");
  section.hidden = [...section.children].every((part) => part.hidden || part.tagName === "H2");
  for (const draw of draws) draw(); // at the width the charts are shown at
}

export function render(result, view) {
  const q = (role) => view.querySelector(`[data-role="${role}"]`);
  q("verdict").textContent = result.verdict;
  const drawn = sidesOf(result);
  for (const node of view.querySelectorAll("[data-side]"))
    node.hidden = !drawn.includes(node.dataset.side);
  const several = rivalsOf(result).length > 1;
  for (const node of view.querySelectorAll('[data-role="several"]')) node.hidden = !several;

  const u = result.cumulative_cost.utilisation ?? result.sensitivity.utilisation ?? 0.5;
  const i = nearestLevel(result, u);
  figures(q("figures"), keyFigures(result, i, fmtUtilisation(result.utilisation[i])));
  paragraphs(q("figure-notes"), figureNotes(result.wording));

  drawChart(q("chart"), (width) => breakevenChart(result, width));
  q("payback-at").textContent = fmtUtilisation(result.cumulative_cost.utilisation);
  drawChart(q("payback-chart"), (width) => paybackChart(result, width));

  const [carbonHeads, carbonRows] = emissions(result, i);
  q("carbon-section").hidden = !carbonHeads;
  if (carbonHeads) {
    q("carbon-at").textContent = fmtUtilisation(result.utilisation[i]);
    fillTable(q("carbon"), carbonHeads, carbonRows, [false, true, true, true]);
  }

  drivers(result, q);

  warnings(q("warnings"), result.warnings);

  const [headers, rows, highlighted] = levels(result);
  q("levels-key").textContent = several ? "the cheapest option" : "cheaper";
  fillTable(
    q("levels"),
    headers,
    rows,
    headers.map(() => true),
    (j) => (highlighted(j) ? "buy-wins" : null),
  );
}
