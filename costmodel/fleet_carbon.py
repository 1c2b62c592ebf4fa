"""A fleet plan's emissions beside its cost: per unit of each month's work, by where it is done.

The equations are those of :mod:`costmodel.fleet` (its docstring). A chunk of draws gives, for
each place work is done, its emissions per unit of work of month m [kg CO2e/unit] as the rows
of one array, month-major: row 0 the kilograms, and when carbon has a price, row 1 their
after-tax present value (1 - tau) d_m times row 0 [kg], so that the cost a candidate adds is
p times row 1 (p [USD/kg] per draw). One weighted sum over the months of the candidate's
monthly work (:func:`weighted_rows`) then gives both. Units: kg CO2e, kW, gCO2e/kWh; months of
730 h, years of 8760 h.

Servers added later (``own.add``, :mod:`costmodel.staging`) bought at the end of month a and in
service from month s emit their idle power only from s, S1 kW_idle 730 PUE I_own
sum_{m >= s} (1 + g_I)^((m-1)/12) / 1000, and their embodied carbon at a, (S1 E_own + s1 e_gpu)
min(1, (H - a) / (12 L)): the share of their service life within the horizon counts from their
purchase, as their resale ages from it. Priced, that embodied carbon is paid at a, p d_a kg (no
tax), and the idle power in each month's flow like the first servers'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .carbon import G_PER_KG, HOURS_PER_YEAR, KG_PER_TONNE
from .cashflows import HOURS_PER_MONTH, BuyDraws, Value, owned_power_kw
from .inputs import PlanCarbon

__all__ = ["FleetEmissions", "Tally", "fleet_emissions", "weighted_rows", "weighted_sum"]


def _pick(rows: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``rows[:, index]`` per draw for ``(R, M)`` or ``(R, M, n)`` rows and ``index`` (n,):
    ``(R, n)``."""
    if rows.ndim == 2:
        return rows[:, index]
    return np.take_along_axis(rows, index[None, None, :], axis=1)[:, 0]


@dataclass(frozen=True)
class AddedEmissions:
    """What one server added later emits [kg CO2e], by the month it is bought and enters
    service: ``idle_after`` its idle power over the months m >= s, one row per row of
    :class:`FleetEmissions` ((R, H + 1) or (R, H + 1, n), zeros past H); ``embodied`` E_own
    [kg per server] and ``spare`` e_gpu [kg per pooled spare GPU], shared over a service life
    of ``life_months`` 12 L [month]; ``discount`` d_m (H,), that dates a priced row's embodied
    carbon at a."""

    idle_after: np.ndarray
    embodied: Value
    spare: float
    life_months: float
    discount: np.ndarray

    def kg(self, servers: int, spares: int, bought: np.ndarray, start: np.ndarray) -> np.ndarray:
        """The kg (and the priced row) of ``servers`` S1 and their ``spares`` s1 bought at the
        end of month ``bought`` a and in service from ``start`` s (each (n,)): their idle power
        from s and their embodied carbon at a, ``(R, n)``; zeros where s > H."""
        h = self.idle_after.shape[1] - 1
        active = start <= h
        a = np.where(active, bought, h)
        idle = servers * _pick(self.idle_after, np.where(active, start, h + 1) - 1)
        life = np.minimum(1.0, (h - a) / self.life_months)
        embodied = (servers * np.asarray(self.embodied) + spares * self.spare) * life
        if idle.shape[0] == 2:  # paid at a, no tax
            embodied = np.stack((embodied, embodied * self.discount[a - 1]))
        return np.where(active, idle + embodied, 0.0)


@dataclass(frozen=True)
class FleetEmissions:
    """A chunk's emissions; each monthly array is ``(R, H)`` or ``(R, H, n)``, R = 1 without a
    carbon price and 2 with one (row 1 the after-tax present value of row 0).

    ``owned`` (1 + g_I)^((m-1)/12) [-] and ``owned_scale`` kW_per_u PUE I_own / (1000 T_srv)
    per draw (a float or (n,)): their product is the kg per unit of owned work, every GPU up,
    to be divided by A(S) (kept apart so that a drawn grid adds no (R, H, n) array);
    ``reserved`` and ``burst`` [kg per unit of reserved or burst work] (``reserved`` ``None``
    without a reserve, ``burst`` ``None`` for an API of unknown emissions); ``server`` [kg per
    server] its idle power over the horizon and its embodied share, ``spare`` [kg per pooled
    spare GPU] its embodied share, each (R, 1) or (R, n); ``price`` [USD/kg] per draw, ``None``
    without a price; ``added`` what a server bought later emits (:class:`AddedEmissions`)."""

    owned: np.ndarray
    owned_scale: Value
    reserved: np.ndarray | None
    burst: np.ndarray | None
    server: np.ndarray
    spare: np.ndarray
    price: Value | None
    added: AddedEmissions


def _monthly(coef: Value, change: Value, d: np.ndarray, kept: float | None) -> np.ndarray:
    """coef (1 + g)^((m-1)/12) for m = 1..H, and (1 - tau) d_m times it when ``kept`` (1 - tau)
    is given: ``(R, H)`` for a fixed coefficient and change, else ``(R, H, n)``."""
    g = np.asarray(change, dtype=float)
    months = np.arange(d.size) / 12.0
    growth = (1.0 + g) ** (months[:, None] if g.ndim else months)
    rows = [growth] if kept is None else [growth, kept * (growth.T * d).T]
    c = np.asarray(coef, dtype=float)
    out = np.stack(rows)
    if c.ndim and out.ndim == 2:
        return out[:, :, None] * c
    return out * c


def _rented(values: dict[str, Value], side: str, hours: Value, life: float, d, kept) -> np.ndarray:
    """A rented side's kg per unit of its work by month: ``hours`` instance-hours a unit of
    work, each P PUE I (1 + g_r)^((m-1)/12) / 1000 + E_inst / (L_p 8760)."""
    power = values[f"{side}.power_kw"] * values[f"{side}.pue"] * values[f"{side}.grid"] / G_PER_KG
    operational = _monthly(hours * power, values[f"{side}.grid_annual_change"], d, kept)
    embodied = _monthly(hours * values[f"{side}.embodied_kg_co2e"] / life, 0.0, d, kept)
    return np.add(*_aligned(operational, embodied))


def _aligned(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Monthly rows ``a`` and ``b`` that broadcast: when one is (R, H) and the other (R, H, n),
    the first as (R, H, 1)."""
    if a.ndim == b.ndim:
        return a, b
    return a if a.ndim == 3 else a[:, :, None], b if b.ndim == 3 else b[:, :, None]


def fleet_emissions(
    carbon: PlanCarbon | None,
    values: dict[str, Value],
    own: BuyDraws,
    throughputs: tuple[Value, Value | None, Value],
    burst_hours: Value,
    terms: tuple[np.ndarray, float],
) -> FleetEmissions | None:
    """The emissions of a chunk of draws ``values`` (the carbon inputs among them), ``own`` the
    server's draws, ``throughputs`` (T_srv, T_res or ``None``, T_burst) [units of work/hour],
    ``burst_hours`` the burst's instance-hours per hour of its work (1 + spot overhead, 1 for
    an API), ``terms`` (d_m, tau); ``None`` for a plan that counts no carbon."""
    if carbon is None:
        return None
    d, tau = terms
    kept = (1.0 - tau) if carbon.priced else None
    t_srv, t_res, t_burst = throughputs
    h = d.size
    life = min(1.0, h / (12.0 * carbon.service_life_years))
    provider = carbon.provider_service_life_years * HOURS_PER_YEAR
    kw_idle, kw_per_u = owned_power_kw(own)
    per_kwh = own.pue * values["own.grid"] / G_PER_KG  # [kg/kWh]
    change = values["own.grid_annual_change"]
    growth = _monthly(1.0, change, d, kept)  # (1 + g_I)^((m-1)/12), and its present value
    months = growth.sum(axis=1)
    per_month = kw_idle * HOURS_PER_MONTH * per_kwh  # one server's idle kg at g_I = 0
    idle = (months if months.ndim == 2 else months[:, None]) * per_month
    after = np.zeros((growth.shape[0], h + 1, *growth.shape[2:]))
    after[:, :-1] = np.cumsum(growth[:, ::-1], axis=1)[:, ::-1]
    rows = 1 if kept is None else 2
    burst = None
    if carbon.burst is not None:
        burst = _rented(values, "burst", burst_hours / t_burst, provider, d, kept)
    elif carbon.api is not None:  # M tokens: g per M tokens, flat
        burst = _monthly(values["burst.api.g_co2e_per_mtok"] / G_PER_KG, 0.0, d, kept)
    return FleetEmissions(
        owned=growth,
        owned_scale=kw_per_u * per_kwh / t_srv,
        reserved=None
        if t_res is None
        else _rented(values, "reserve", 1.0 / t_res, provider, d, kept),
        burst=burst,
        server=idle + values["own.embodied_kg_co2e"] * life,
        spare=np.full((rows, 1), carbon.spare_gpu_kg_co2e * life),
        price=None if kept is None else values["carbon.usd_per_tonne"] / KG_PER_TONNE,
        added=AddedEmissions(
            (after[:, :, None] if after.ndim == 2 and np.ndim(per_month) else after) * per_month,
            values["own.embodied_kg_co2e"],
            carbon.spare_gpu_kg_co2e,
            12.0 * carbon.service_life_years,
            d,
        ),
    )


def weighted_rows(weights: np.ndarray, x) -> np.ndarray:
    """sum_m weights_{r,m} x_m per row r and draw, for ``(R, H)`` or ``(R, H, n)`` weights and
    ``(H, n)`` x: ``(R, n)``; or x a monthly work in closed form
    (:class:`~costmodel.fleet_load.Above`, :class:`~costmodel.fleet_load.Below`) of K
    capacities at once: ``(K, R, n)``."""
    if not isinstance(x, np.ndarray):
        return x.rows(weights)
    return weights @ x if weights.ndim == 2 else np.einsum("rmn,mn->rn", weights, x)


def weighted_sum(weights: np.ndarray, x) -> np.ndarray:
    """sum_m weights_m x_m per draw, for ``(H,)`` or ``(H, n)`` weights and ``(H, n)`` x (or a
    monthly work in closed form, as :func:`weighted_rows`: ``(K, n)``)."""
    if not isinstance(x, np.ndarray):
        return x.sum(weights)
    return weights @ x if weights.ndim == 1 else np.einsum("mn,mn->n", weights, x)


def _stacked(*parts: np.ndarray) -> np.ndarray:
    """Rows ``(r, H)`` or ``(r, H, n)`` one above the other: ``(sum r, H)``, or ``(sum r, H, n)``
    when any part is per draw."""
    n = max((p.shape[2] for p in parts if p.ndim == 3), default=0)
    if not n:
        return np.concatenate(parts)
    return np.concatenate([p if p.ndim == 3 else np.repeat(p[:, :, None], n, 2) for p in parts])


@dataclass(frozen=True)
class Tally:
    """A chunk's emissions of each candidate, with ``emits`` its emissions per unit of work.

    One matrix product over a server count's owned work A_m (:meth:`servers`) gives its owned
    kg and, beside reservations, the reserved kg of A_m, taken from that of W_m once a chunk;
    then one over a candidate's burst work O_m (:meth:`candidate`), whose rows are the burst's
    kg less, beside reservations, the reserved ones' (B_m = W_m - A_m - O_m) and, when carbon
    has a price, the burst's money weights ``burst`` below them, so the burst's cost and the
    candidate's carbon come from one pass over O_m. Without a price the money is the same
    product as without carbon, so that no cost moves. The monthly work may be a closed form
    of K capacities at once (:class:`~costmodel.fleet_load.Above`): the sums are then
    ``(K, R, n)``, rows on the second-last axis.
    """

    emits: FleetEmissions
    burst: np.ndarray  # d_m (1 + g_b)^((m-1)/12), (H,) or (H, n)
    k_burst: Value  # (1 - tau) k_O [USD/unit of burst work]
    owned: np.ndarray  # the rows over A_m: the owned kg, then the reserved kg
    reserved: np.ndarray | None  # the reserved kg of W_m, (R, n); None without a reserve
    alone: np.ndarray  # the rows over O_m of a candidate without reservations
    beside: np.ndarray  # and with them

    @classmethod
    def of(cls, e: FleetEmissions, work: np.ndarray, burst: np.ndarray, k_burst: Value) -> Tally:
        """The tally of the emissions ``e`` of the monthly ``work`` W_m (H, n) beside the
        burst's money weights ``burst``."""
        kg = e.burst if e.burst is not None else np.zeros(e.owned.shape[:2])
        money = (burst[None],) if e.price is not None else ()
        if e.reserved is None:
            alone = _stacked(kg, *money)
            return cls(e, burst, k_burst, e.owned, None, alone, alone)
        less = np.subtract(*_aligned(kg, e.reserved))
        owned = _stacked(e.owned, e.reserved)
        reserved = weighted_rows(e.reserved, work)
        return cls(e, burst, k_burst, owned, reserved, *(_stacked(x, *money) for x in (kg, less)))

    def servers(
        self, s: int, spares: int, owned: np.ndarray, up: Value
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The kg of ``s`` servers and their ``spares`` (idle power, embodied share) and of the
        owned work ``owned`` A_m (H, n) at the share ``up`` A(S) of GPUs in service, and that
        plus the reserved kg of W_m - A_m (``None`` without a reserve): each (R, n)."""
        e = self.emits
        r = e.owned.shape[0]
        kg = s * e.server + spares * e.spare
        if not s:
            return kg, None if self.reserved is None else kg + self.reserved
        done = weighted_rows(self.owned, owned)
        kg = kg + done[..., :r, :] * (e.owned_scale / up)
        return kg, None if self.reserved is None else kg + (self.reserved - done[..., r:, :])

    def staged(
        self,
        first: tuple[int, int],
        added: tuple[int, int],
        parts: tuple[tuple[Any, Value], ...],
        bought: np.ndarray,
        start: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """As :meth:`servers`, for ``first`` (S0, s0 spares) bought at month 0 and ``added``
        (S1, s1) bought at the end of month ``bought`` a and in service from ``start`` s (each
        (n,)), doing the owned work of ``parts``: the months before s and from s, each its
        owned work A_m in closed form with the share A(S) of GPUs in service then [-]."""
        e = self.emits
        r = e.owned.shape[0]
        kg = first[0] * e.server + first[1] * e.spare + e.added.kg(*added, bought, start)
        done = [weighted_rows(self.owned, owned) for owned, _ in parts]
        for d, (_, up) in zip(done, parts, strict=True):
            kg = kg + d[..., :r, :] * (e.owned_scale / up)
        if self.reserved is None:
            return kg, None
        return kg, kg + (self.reserved - sum(d[..., r:, :] for d in done))

    def candidate(
        self, cost: Value, rests: list, reserved: bool, kg: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The cost [USD] and kg of a candidate per draw from its ``cost`` without burst, its
        burst work O_m (H, n) or in closed form, given in ``rests`` by parts of the horizon,
        whether it has ``reserved`` instances and the kg of its servers (:meth:`servers`, with
        reservations the second)."""
        e = self.emits
        r = e.owned.shape[0]
        done = sum(weighted_rows(self.beside if reserved else self.alone, x) for x in rests)
        kg = kg + done[..., :r, :]
        if e.price is None:
            burst = sum(weighted_sum(self.burst, x) for x in rests)
            return cost + self.k_burst * burst, kg[..., 0, :]
        return cost + self.k_burst * done[..., r, :] + e.price * kg[..., 1, :], kg[..., 0, :]
