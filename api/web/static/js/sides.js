// The kinds of side the server registers (costmodel.sides.SIDES, listed in the page's
// "sides" element) by name, in the order a question lists them and a tie goes (the owned side
// first), each with its words: `label` heads a column ("Buy"), `option` names it in a
// difference or a list ("rent", "API"), `doing` names choosing it in a sentence ("renting",
// "the API"); `owned` marks the side every other is weighed against. The page keeps no copy.

export const SIDES = Object.fromEntries(
  JSON.parse(document.getElementById("sides").textContent).map((s) => [s.name, s]),
);
/** The owned side's name ("buy"). */
export const OWNED = Object.keys(SIDES).find((s) => SIDES[s].owned);

/** The sides result `result` weighs, in the registry's order: those with a TCO (`<side>_tco`). */
export function sidesOf(result) {
  return Object.keys(SIDES).filter((s) => result[`${s}_tco`]);
}

/** The sides of `result` buying is weighed against (every side but the owned one), renting
 * first. */
export function rivalsOf(result) {
  return sidesOf(result).filter((s) => !SIDES[s].owned);
}

/** Buying's figures against side `versus`: [break-even, payback by level, P(buying cheaper)
 * by level]; renting's are the result's plain keys, every other side's are named after it
 * (`breakeven_vs_<side>`, `payback_vs_<side>_months`, `prob_buy_cheaper_than_<side>`). */
export function versusFigures(result, versus) {
  if (versus === "rent")
    return [result.breakeven_utilisation, result.payback_months, result.prob_buy_cheaper];
  return [
    result[`breakeven_vs_${versus}`],
    result[`payback_vs_${versus}_months`],
    result[`prob_buy_cheaper_than_${versus}`],
  ];
}
