// Numbers as the reports write them: a port of present/formatting.py (fmt_usd,
// fmt_share, fmt_utilisation, fmt_months, fmt_number, fmt_unit_cost, fmt_per_unit,
// fmt_tonnes, fmt_grams).
// tests/test_web_browser.py compares both on the same values.

export const DASH = "\u2014";
export const NEVER = "never";

export function missing(x) {
  return x === null || x === undefined || Number.isNaN(x);
}

// Python's round(): ties go to the even neighbour.
function roundHalfEven(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

// Python's round(x, n) to `digits` significant figures.
function roundSig(x, digits) {
  if (x === 0) return 0;
  const k = digits - 1 - Math.floor(Math.log10(Math.abs(x)));
  return k >= 0 ? roundHalfEven(x * 10 ** k) / 10 ** k : roundHalfEven(x / 10 ** -k) * 10 ** -k;
}

function grouped(x, decimals) {
  return x.toLocaleString("en-US", {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
    useGrouping: true,
  });
}

/** Money [USD] as "$52,350", "$640", "$3.06"; no value -> "—". */
export function fmtUsd(x) {
  if (missing(x)) return DASH;
  const sign = x < 0 ? "-" : "";
  const a = Math.abs(x);
  if (a >= 1000) return `${sign}$${grouped(roundHalfEven(roundSig(a, 4)), 0)}`;
  if (a >= 10) return `${sign}$${grouped(roundHalfEven(a), 0)}`;
  return `${sign}$${a.toFixed(2)}`;
}

/** A share or probability [-] as "35 %", "99.7 %", "> 99.9 %", "< 0.1 %"; no value -> "—". */
export function fmtShare(p) {
  if (missing(p)) return DASH;
  const pct = 100 * p;
  const whole = roundHalfEven(pct);
  if (p > 0 && p < 1 && (whole === 0 || whole === 100)) {
    if (pct < 0.05) return "< 0.1 %";
    if (pct > 99.95) return "> 99.9 %";
    return `${pct.toFixed(1)} %`;
  }
  return `${whole} %`;
}

/** Utilisation [-] as "35 %" or "7.1 %"; no value -> "never" (or `none`). */
export function fmtUtilisation(u, none = NEVER) {
  if (missing(u)) return none;
  const pct = u * 100;
  if (Math.abs(pct - Math.round(pct)) < 1e-9) return `${Math.round(pct)} %`;
  return `${pct.toFixed(1)} %`;
}

/** A duration [month] with one decimal; no value -> "never" (not within the horizon). */
export function fmtMonths(t) {
  return missing(t) ? NEVER : t.toFixed(1);
}

/**
 * Python's format(x, "g") with `precision` significant figures (",g" with `grouping`): the
 * exact value rounded half to even, trailing zeros dropped, an exponent below 1e-4 or from
 * 10**precision.
 */
export function formatG(x, precision = 6, grouping = false) {
  if (missing(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return `${sign}0`;
  // The value's decimal digits (100 of them: every digit of a double near a tie).
  const [mantissa, e] = Math.abs(x).toExponential(99).split("e");
  const digits = mantissa.replace(".", "");
  let exp = Number(e);
  let head = digits.slice(0, precision);
  const rest = digits.slice(precision);
  const tie = rest[0] === "5" && !/[1-9]/.test(rest.slice(1));
  if (rest[0] > "5" || (rest[0] === "5" && (!tie || Number(head.at(-1)) % 2 === 1))) {
    head = (BigInt(head) + 1n).toString();
    if (head.length > precision) {
      head = head.slice(0, precision);
      exp += 1;
    }
  }
  if (exp < -4 || exp >= precision) {
    const fraction = head.slice(1).replace(/0+$/, "");
    const power = `${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
    return `${sign}${head[0]}${fraction ? `.${fraction}` : ""}e${power}`;
  }
  const padded = exp < 0 ? "0".repeat(-exp) + head : head.padEnd(exp + 1, "0");
  const point = Math.max(exp, 0) + 1;
  let whole = padded.slice(0, point);
  const fraction = padded.slice(point).replace(/0+$/, "");
  if (grouping) whole = whole.replace(/\B(?=(\d{3})+$)/g, ",");
  return `${sign}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** A cost per unit of work [USD] to three significant figures, trailing zeros kept:
 * "$0.0689", "$2.40"; from $1,000 as money; no value -> "—" (formatting.py fmt_unit_cost). */
export function fmtUnitCost(x) {
  if (missing(x)) return DASH;
  return x < 1000 ? `$${sig3(x)}` : fmtUsd(x);
}

/** The words of each unit of work (formatting.py UNIT_WORDS). */
export const UNIT_WORDS = { reference_gpu_hour: "reference GPU-hour", million_tokens: "M tokens" };

/** A cost per unit of work with its unit: "$0.33 per M tokens"; no value -> "—". */
export function fmtPerUnit(x, unit) {
  return missing(x) ? DASH : `${fmtUnitCost(x)} per ${UNIT_WORDS[unit]}`;
}

/** Three significant figures, trailing zeros kept ("12.0", "0.520"), thousands grouped from
 * 1,000 ("1,240"); 0 as "0" (formatting.py _sig3). */
function sig3(x) {
  if (x === 0) return "0";
  const r = roundSig(x, 3);
  if (Math.abs(r) >= 100) return grouped(r, 0);
  if (Math.abs(r) >= 1e-4) return r.toPrecision(3);
  const [mantissa, e] = r.toExponential(2).split("e");
  return `${mantissa}e${e[0]}${e.slice(1).padStart(2, "0")}`;
}

/** Emissions [t CO2e]: "7.83 t", "1,240 t"; no value (unknown) -> "unknown". */
export function fmtTonnes(x) {
  return missing(x) ? "unknown" : `${sig3(x)} t`;
}

/** Emissions per unit of work [g CO2e]: "349 g", "0.520 g"; no value -> "—". */
export function fmtGrams(x) {
  return missing(x) ? DASH : `${sig3(x)} g`;
}

/** A plain number without false precision: "4", "1,500", "0.10", "3.06". */
export function fmtNumber(x) {
  if (missing(x)) return DASH;
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return grouped(x, 0);
  if (Math.abs(x) >= 1000) return grouped(roundHalfEven(x), 0);
  let text = String(Number(x.toPrecision(4)));
  if (!text.includes("e") && Math.abs(x) < 1) {
    const decimals = (text.split(".")[1] || "").length;
    if (decimals < 2) text = x.toFixed(2);
  }
  return text;
}

/** A count in words: "1 option", "1,200 options" (`plural` for a noun that takes no "s"). */
export function counted(n, noun, plural = `${noun}s`) {
  return `${fmtNumber(n)} ${n === 1 ? noun : plural}`;
}

/** A distribution or number as the reports show an assumption: "Triangular(1.0, 1.1, 1.3)". */
export function fmtValue(v) {
  if (missing(v)) return DASH;
  if (typeof v === "number") return fmtNumber(v);
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (Array.isArray(v)) return v.map(fmtValue).join(", ");
  if (typeof v === "object") {
    const names = { uniform: "Uniform", triangular: "Triangular", pert: "PERT" };
    if (v.dist in names) {
      const keys = v.dist === "uniform" ? ["low", "high"] : ["low", "mode", "high"];
      return `${names[v.dist]}(${keys.map((k) => fmtNumber(v[k])).join(", ")})`;
    }
    return Object.entries(v)
      .map(([k, x]) => `${k}: ${fmtValue(x)}`)
      .join("; ");
  }
  return String(v);
}

/** A plan candidate's servers as present/formatting.py's fmt_servers writes them: "3", or for
 * one that adds servers later "3 + 2 at 90 %" (when the work passes 90 % of the first
 * servers' capacity) or "3 + 2 in month 24". */
export function fmtServers(c) {
  const a = c.add;
  if (!a) return String(c.servers);
  if (a.at_month !== undefined && a.at_month !== null)
    return `${c.servers} + ${a.servers} in month ${a.at_month}`;
  return `${c.servers} + ${a.servers} at ${fmtShare(a.when_demand_above)}`;
}

/** A plan candidate's key, unique among a plan's candidates: "3+0", or "3+0+2@0.9" for one
 * that adds 2 servers when the work passes 90 % (or "3+0+2m24" in month 24). */
export function candidateKey(c) {
  const a = c.add;
  if (!a) return `${c.servers}+${c.instances}`;
  const when = a.at_month !== undefined && a.at_month !== null ? `m${a.at_month}` : `@${a.when_demand_above}`;
  return `${c.servers}+${c.instances}+${a.servers}${when}`;
}
