// The scenario view: the verdict, key figures, break-even chart, what drives the answer, the
// warnings and the results by utilisation of a rent-versus-buy result (POST /v1/evaluate).

import { breakevenChart } from "../charts.js";
import { fmtMonths, fmtShare, fmtUsd, fmtUtilisation } from "../format.js";
import { drawChart, fillTable, figures, warnings } from "../render.js";

export const kind = "scenario";

/** Index of the utilisation level nearest `u`. */
function level(result, u) {
  let best = 0;
  result.utilisation.forEach((v, i) => {
    if (Math.abs(v - u) < Math.abs(result.utilisation[best] - u)) best = i;
  });
  return best;
}

function span(lo, hi, fmt) {
  return `P10\u2013P90: ${fmt(lo)} to ${fmt(hi)}`;
}

export function render(result, view) {
  const q = (role) => view.querySelector(`[data-role="${role}"]`);
  q("verdict").textContent = result.verdict;

  const be = result.breakeven_utilisation;
  const u = result.cumulative_cost.utilisation ?? result.sensitivity.utilisation ?? 0.5;
  const i = level(result, u);
  const at = fmtUtilisation(result.utilisation[i]);
  const pb = result.payback_months;
  const pairs = [
    [
      "Break-even utilisation (P50)",
      `${fmtUtilisation(be.p50)} (${span(be.p10, be.p90, fmtUtilisation)})`,
    ],
    [`P(buy cheaper) at ${at}`, fmtShare(result.prob_buy_cheaper[i])],
    [
      `Payback at ${at} (P50)`,
      `${fmtMonths(pb.p50[i])}${pb.p50[i] === null ? "" : " months"} (${span(pb.p10[i], pb.p90[i], fmtMonths)})`,
    ],
    [`Buy TCO at ${at} (P50)`, fmtUsd(result.buy_tco.p50[i])],
    [`Rent TCO at ${at} (P50)`, fmtUsd(result.rent_tco.p50[i])],
  ];
  if (be.prob_always > 0)
    pairs.push(["Draws where buying wins even when idle", fmtShare(be.prob_always)]);
  if (be.prob_never > 0)
    pairs.push(["Draws where renting wins even at 100 %", fmtShare(be.prob_never)]);
  figures(q("figures"), pairs);

  drawChart(q("chart"), (width) => breakevenChart(result, width));

  const sens = result.sensitivity;
  const drivers = sens.inputs.filter((d) => d.spearman).slice(0, 8);
  q("drivers-at").textContent = fmtUtilisation(sens.utilisation, "?");
  fillTable(
    q("drivers"),
    ["Input", "Spearman \u03c1", "A higher value\u2026"],
    drivers.map((d) => [
      d.input,
      `${d.spearman > 0 ? "+" : "-"}${Math.abs(d.spearman).toFixed(2)}`,
      d.spearman > 0 ? "makes buying dearer" : "makes buying cheaper",
    ]),
    [false, true, false],
  );
  q("drivers").closest("section").hidden = !drivers.length;

  warnings(q("warnings"), result.warnings);

  fillTable(
    q("levels"),
    ["Utilisation", "Buy TCO P50", "Rent TCO P50", "P(buy cheaper)", "Payback P50 [months]"],
    result.utilisation.map((v, j) => [
      fmtUtilisation(v, "\u2014"),
      fmtUsd(result.buy_tco.p50[j]),
      fmtUsd(result.rent_tco.p50[j]),
      fmtShare(result.prob_buy_cheaper[j]),
      fmtMonths(pb.p50[j]),
    ]),
    [true, true, true, true, true],
    (j) => (result.prob_buy_cheaper[j] >= 0.5 ? "buy-wins" : null),
  );
}
