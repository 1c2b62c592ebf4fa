"""The market at one utilisation: every way the catalog offers GPU compute, ranked by cost.

The options are each catalog GPU with a price, owned at 1, 2, 4 and 8 per server on the
catalog's platform tier for that count, and each rented instance at each pricing model the
catalog prices (on demand, spot, 1- and 3-year reservations). Each option is one side resolved
alone, as a scenario's ``buy`` or ``rent`` block is (:mod:`scenarios.sides`), so it gets the
catalog's defaults, the user's prices laid over the catalog and the buyer's-guide advice; an
option the advice rules out (an ``error``) or that cannot be resolved is left out and listed
with the reason.

The unit of work is the workload's (:class:`~scenarios.sides.Work`). Without a ``model`` it is
training work, counted in reference GPU-hours; with one (a catalog id, or a model the catalog
lacks given inline with its architecture, :mod:`.inline`), serving that model at ``precision``
for requests of ``input_tokens`` and ``output_tokens`` tokens, counted in millions of tokens
(input + output, "M tokens"). The owned servers are then each GPU at the counts the catalog's
platform tiers build with it, and a server's or instance's throughput is the measured serving
throughput where a row holds for it (:func:`pricing.tokens_per_s`), else the estimate from the
model's architecture and the GPU's specifications, whose error is drawn in the ranking
(:mod:`.speeds`); the catalog's API offers of the model join the options. An owned or rented
option that cannot hold the weights in :data:`~scenarios.advice.WEIGHTS_SHARE` of its GPU
memory (``params_b`` x bytes per parameter, :meth:`pricing.Model.weights_gb`), or the weights
and one request's KV cache, is left out and counted, and so is one estimated to serve no
request at the per-user floor, or with neither a measurement nor an estimate.

Every option's cost [USD/unit of work] and carbon [g CO2e/unit of work] are given as P10, P50
and P90 over the same draws of a default uncertainty, undiscounted and before tax, and ranked
by P50 cost, cheapest first (or by P50 carbon); the equations are in :mod:`.market`. The
package holds, one module each:

- :mod:`.request`: what is asked (:class:`CompareRequest`, its :class:`CompareSchema`,
  :func:`load_request`);
- :mod:`.inline`: a model the catalog lacks (:func:`~.inline.model_from_config`);
- :mod:`.speeds`: each build's throughput, measured or estimated;
- :mod:`.market`: the options resolved, evaluated and ranked (:func:`compare`,
  :func:`option_count`, :func:`option_counts`, the default :data:`UNCERTAINTY`);
- :mod:`.result`: what is answered, in numbers (:class:`Comparison`, :class:`Option`, ...);
- :mod:`.wording`: the sentences a comparison is read by (:func:`wording` gives its
  :class:`Wording`);
- :mod:`.schema`: its JSON form (``ComparisonSchema().dump(result)``), the sentences in it.

>>> from scenarios.compare import CompareRequest, compare
>>> result = compare(CompareRequest(utilisation=0.5, samples=200))
>>> result.options[0].side in ("buy", "rent")
True
>>> served = compare(CompareRequest(utilisation=0.5, model="llama-3.3-70b", samples=200))
>>> served.unit, served.request.precision, served.cheapest_api.side
('million_tokens', 'fp8', 'api')
"""

from .market import (
    API_UNCERTAINTY,
    GPU_COUNTS,
    UNCERTAINTY,
    compare,
    option_count,
    option_counts,
)
from .request import SORTS, CompareRequest, CompareSchema, load_request
from .result import (
    Citation,
    Comparison,
    Cost,
    Grams,
    LeftOut,
    Option,
    OwnedGrid,
    ServedModel,
    Unserved,
)
from .schema import ComparisonSchema
from .wording import Wording, wording

__all__ = [
    "API_UNCERTAINTY",
    "GPU_COUNTS",
    "SORTS",
    "UNCERTAINTY",
    "Citation",
    "CompareRequest",
    "CompareSchema",
    "Comparison",
    "ComparisonSchema",
    "Cost",
    "Grams",
    "LeftOut",
    "Option",
    "OwnedGrid",
    "ServedModel",
    "Unserved",
    "Wording",
    "compare",
    "load_request",
    "option_count",
    "option_counts",
    "wording",
]
