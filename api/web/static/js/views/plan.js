// The fleet-plan view: the best plan's verdict and figures, the cost-against-risk frontier and
// the frontier's candidates of a plan result (POST /v1/plans).

import { frontierChart, planLabel } from "../charts.js";
import { fmtShare, fmtUsd } from "../format.js";
import { drawChart, fillTable, figures, warnings } from "../render.js";

export const kind = "plan";

const OBJECTIVES = { mean: "mean cost", p90: "P90 cost", cvar95: "CVaR95 (mean of the worst 5 %)" };

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
  ]);

  drawChart(q("chart"), (width) => frontierChart(result, width));

  warnings(q("warnings"), result.warnings);

  const key = (c) => `${c.servers}+${c.instances}`;
  const front = [...result.frontier].sort((x, y) => x.cost.mean - y.cost.mean);
  fillTable(
    q("levels"),
    [
      "Servers + reserved",
      "Cost mean",
      "Cost P50",
      "Cost P90",
      "CVaR95",
      "Owned share",
      "P(cheaper than cloud)",
    ],
    front.map((c) => [
      key(c),
      fmtUsd(c.cost.mean),
      fmtUsd(c.cost.p50),
      fmtUsd(c.cost.p90),
      fmtUsd(c.cost.cvar95),
      fmtShare(c.share_owned),
      fmtShare(c.prob_cheaper_than_cloud),
    ]),
    [false, true, true, true, true, true, true],
    (j) => (key(front[j]) === key(b) ? "best" : null),
  );
}
