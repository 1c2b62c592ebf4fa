// The fleet-plan view: the best plan's verdict and figures, the cost-against-risk frontier and
// the frontier's candidates of a plan result (POST /v1/plans). A plan that counts carbon (its
// result has `carbon_frontier`) adds each candidate's mean emissions, the best plan's P10–P90
// and the carbon frontier (no other candidate cheaper and lower-carbon on the mean); emissions
// the server could not count (`carbon` null) are "unknown", never 0. A plan that adds servers
// later (`own.add`, its result has `staging_saving`) shows the best plan's later purchase: how
// many, its trigger, the first month of service (P50, P10–P90, the share of draws that never
// add) and what staging saves against buying every server at month 0; its candidates read
// "3 + 2 at 90 %".

import { frontierChart, planLabel } from "../charts.js";
import {
  candidateKey,
  fmtGrams,
  fmtServers,
  fmtShare,
  fmtTonnes,
  fmtUsd,
  UNIT_WORDS,
} from "../format.js";
import { drawChart, fillTable, figures, warnings } from "../render.js";

export const kind = "plan";

const OBJECTIVES = { mean: "mean cost", p90: "P90 cost", cvar95: "CVaR95 (mean of the worst 5 %)" };

const key = candidateKey;

/** A month [month] or, where the draws' percentile lands on "never", "never". */
const fmtMonth = (m) => (m === null || m === undefined ? "never" : `month ${m}`);

/** The best plan's later purchase and what staging saves; [] for a plan without own.add. */
function stagingFigures(result) {
  const saving = result.staging_saving;
  if (!saving) return [];
  const a = result.best.add;
  const saved = [
    "Staging saves",
    `${fmtUsd(saving.mean)} mean (P10\u2013P90: ${fmtUsd(saving.p10)} to ${fmtUsd(saving.p90)})`,
  ];
  if (!a) return [["Servers added later", "none: the best plan buys every server now"], saved];
  const when =
    a.at_month !== undefined && a.at_month !== null
      ? `bought in month ${a.at_month}`
      : `when the work passes ${fmtShare(a.when_demand_above)} of the first servers' capacity`;
  const m = a.month;
  return [
    ["Servers added later", `${a.servers}, ${when}`],
    [
      "First month of service",
      `${fmtMonth(m.p50)} in the median draw (P10\u2013P90: ${fmtMonth(m.p10)} to ${fmtMonth(m.p90)})`,
    ],
    ["Draws that never add them", fmtShare(m.prob_never)],
    saved,
  ];
}

/** True when the plan counts carbon (its result has the carbon keys, even if unknown). */
function countsCarbon(result) {
  return "carbon_frontier" in result;
}

/** The best plan's emissions beside all-cloud's and the carbon frontier's size; [] for a plan
 * that counts no carbon. */
function carbonFigures(result) {
  if (!countsCarbon(result)) return [];
  const c = result.best.carbon;
  const cloud = result.all_cloud.carbon;
  if (!c) return [["CO2e", fmtTonnes(null)]];
  const inference = (result.scenario.workload || {}).kind === "inference";
  const unit = UNIT_WORDS[inference ? "million_tokens" : "reference_gpu_hour"];
  const band = `P10\u2013P90: ${fmtTonnes(c.p10)} to ${fmtTonnes(c.p90)}`;
  return [
    ["CO2e mean", fmtTonnes(c.mean)],
    ["CO2e P50", `${fmtTonnes(c.p50)} (${band})`],
    [`CO2e per ${unit}`, fmtGrams(c.per_unit)],
    ["All-cloud CO2e mean", fmtTonnes(cloud && cloud.mean)],
    [
      "Carbon frontier",
      `${(result.carbon_frontier || []).length} of ${result.candidates.length} candidates`,
    ],
  ];
}

/** The candidates table: the best and those on the cost frontier or the carbon frontier,
 * cheapest mean first, with the carbon column and the frontier each is on in a plan that counts carbon
 * (in a plan that adds servers later, its servers "3 + 2 at 90 %" and reservations apart):
 * [headers, rows, numeric, class of row j]. */
function candidates(result) {
  const carbon = countsCarbon(result);
  const staged = Boolean(result.staging_saving); // a plan that adds servers later
  const cost = new Set(result.frontier.map(key));
  const green = new Set((result.carbon_frontier || []).map(key));
  const shown = [result.best, ...result.frontier, ...(result.carbon_frontier || [])]
    .filter((c, i, all) => all.findIndex((d) => key(d) === key(c)) === i)
    .sort((x, y) => x.cost.mean - y.cost.mean || x.cost.p90 - y.cost.p90);
  const on = (c) =>
    [cost.has(key(c)) ? "cost" : "", green.has(key(c)) ? "carbon" : ""].filter(Boolean).join(", ");
  const headers = [
    ...(staged ? ["Servers", "Reserved"] : ["Servers + reserved"]),
    "Cost mean",
    "Cost P50",
    "Cost P90",
    "CVaR95",
    "Owned share",
    "P(cheaper than cloud)",
    ...(carbon ? ["CO2e mean", "Frontier"] : []),
  ];
  const rows = shown.map((c) => [
    ...(staged ? [fmtServers(c), String(c.instances)] : [key(c)]),
    fmtUsd(c.cost.mean),
    fmtUsd(c.cost.p50),
    fmtUsd(c.cost.p90),
    fmtUsd(c.cost.cvar95),
    fmtShare(c.share_owned),
    fmtShare(c.prob_cheaper_than_cloud),
    ...(carbon ? [fmtTonnes(c.carbon && c.carbon.mean), on(c)] : []),
  ]);
  const numeric = headers.map((h, i) => i > 0 && h !== "Frontier");
  const marked = (j) => {
    const c = shown[j];
    const roles = [key(c) === key(result.best) ? "best" : "", green.has(key(c)) ? "green" : ""];
    return roles.filter(Boolean).join(" ") || null;
  };
  return [headers, rows, numeric, marked];
}

export function render(result, view) {
  const q = (role) => view.querySelector(`[data-role="${role}"]`);
  q("verdict").textContent = result.verdict;
  const b = result.best;
  const cloud = result.all_cloud;
  figures(q("figures"), [
    ["Best plan", planLabel(b)],
    ["Cost mean", fmtUsd(b.cost.mean)],
    ["Cost P10 / P50 / P90", [b.cost.p10, b.cost.p50, b.cost.p90].map(fmtUsd).join(" / ")],
    ["All-cloud cost P50 / P90", `${fmtUsd(cloud.cost.p50)} / ${fmtUsd(cloud.cost.p90)}`],
    ["Draws cheaper than all-cloud", fmtShare(b.prob_cheaper_than_cloud)],
    ["Share of the work on owned servers", fmtShare(b.share_owned)],
    ["Utilisation of the owned servers", fmtShare(b.owned_utilisation)],
    ["Chosen by", OBJECTIVES[result.objective] || result.objective],
    ["Frontier", `${result.frontier.length} of ${result.candidates.length} candidates`],
    ...stagingFigures(result),
    ...carbonFigures(result),
  ]);

  const green = Boolean((result.carbon_frontier || []).length);
  const shows = { carbon: countsCarbon(result), "carbon-frontier": green };
  for (const [role, shown] of Object.entries(shows))
    for (const node of view.querySelectorAll(`[data-role="${role}"]`)) node.hidden = !shown;
  drawChart(q("chart"), (width) => frontierChart(result, width));

  warnings(q("warnings"), result.warnings);

  const [headers, rows, numeric, marked] = candidates(result);
  fillTable(q("levels"), headers, rows, numeric, marked);
}
