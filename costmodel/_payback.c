/* The payback kernel of costmodel.outcomes.payback: the same numbers as its numpy form, bit for
 * bit, in one pass over the month-major gap (months outer, draws inner, as the arrays lie).
 *
 * The gap of draw d at month m and utilisation u is f = net0[m,d] + u * slope[m,d], less
 * max(0, u - kink[d]) * rent_u[m,d] with a reservation's kink; a level's payback is
 * t = m + prev / (prev - f) at the first month m with f <= 0, prev being f at month m - 1 (the
 * capex before month 0), inf without one, and 0 for every level where the capex is <= 0. The
 * floating-point operations are numpy's, in numpy's order (built with -ffp-contract=off, so
 * that no multiply and add are fused).
 *
 * Without a kink, in a month where the slope is < 0, f falls as u rises (rounding is monotone),
 * so the levels still open are the lowest ones: each draw keeps their count c and at each month
 * closes levels c - 1, c - 2, ... while f <= 0 there (while not f > 0, as numpy counts the
 * open levels; a scan closes a level where f <= 0, as numpy's scan does). A month where the
 * slope is >= 0 leaves every level open while net0 > 0 (levels are >= 0); where net0 <= 0 too,
 * f may close at low u and stay open at high, and that draw's open levels are scanned one by
 * one from that month on, as are every draw's with a kink.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const double *net0, *slope, *rent_u, *kink, *capex, *levels;
    const Py_ssize_t *order;
    double *out;
    Py_ssize_t months, draws, count;
} Gap;

/* f at month m, draw d, level u, as numpy's scan evaluates it. */
static double gap_at(const Gap *g, Py_ssize_t m, Py_ssize_t d, double u)
{
    Py_ssize_t at = m * g->draws + d;
    double f = g->net0[at] + u * g->slope[at];
    if (g->rent_u != NULL) {
        double above = u - g->kink[d];
        f -= (above > 0.0 ? above : 0.0) * g->rent_u[at];
    }
    return f;
}

/* The payback of level k of draw d, first closed at month m where f is ``here``. */
static void close_at(const Gap *g, Py_ssize_t m, Py_ssize_t d, Py_ssize_t k, double here)
{
    double prev = m == 0 ? g->capex[d] : gap_at(g, m - 1, d, g->levels[k]);
    g->out[g->order[k] * g->draws + d] = (double)m + prev / (prev - here);
}

/* The draws of one month that need a look (into ``rows``, their count returned): of the
 * ``live`` ones, those whose highest open level (at u = ``top``) closes, and those whose gap
 * rises with u where net0 <= 0. Without a branch per draw, most draws needing none. */
static Py_ssize_t to_look_at(const double *net0, const double *slope, const double *top,
                             const unsigned char *live, Py_ssize_t draws, Py_ssize_t *rows)
{
    Py_ssize_t n = 0;
    for (Py_ssize_t d = 0; d < draws; d++) {
        double n0 = net0[d], s = slope[d], f = n0 + top[d] * s;
        rows[n] = d;
        n += live[d] & ((!(f > 0.0)) | ((s >= 0.0) & (!(n0 > 0.0))));
    }
    return n;
}

/* Every level's payback: open[d] is set to the count of levels still open (the lowest), and
 * from[d] to the month from which draw d must be scanned level by level (-1: never). ``top``
 * (draws doubles), ``live`` (draws bytes) and ``rows`` (draws) are work space. */
static void by_counts(const Gap *g, Py_ssize_t *open, Py_ssize_t *from, double *top,
                      unsigned char *live, Py_ssize_t *rows)
{
    const double *u = g->levels;
    for (Py_ssize_t d = 0; d < g->draws; d++) {
        live[d] = open[d] > 0;
        top[d] = open[d] > 0 ? u[open[d] - 1] : 0.0;
    }
    for (Py_ssize_t m = 0; m < g->months; m++) {
        const double *net0 = g->net0 + m * g->draws, *slope = g->slope + m * g->draws;
        Py_ssize_t n = to_look_at(net0, slope, top, live, g->draws, rows);
        for (Py_ssize_t j = 0; j < n; j++) {
            Py_ssize_t d = rows[j], c = open[d];
            double n0 = net0[d], s = slope[d];
            if (s >= 0.0) { /* closed at low u (n0 <= 0), maybe not at high: scan */
                from[d] = m;
                live[d] = 0;
                continue;
            }
            while (c > 0) {
                double f = n0 + u[c - 1] * s;
                if (f > 0.0)
                    break;
                c--;
                close_at(g, m, d, c, f);
            }
            open[d] = c;
            live[d] = c > 0;
            top[d] = c > 0 ? u[c - 1] : 0.0;
        }
    }
}

/* Scan level by level, from month from[d] on, the open levels of the draws ``rows``
 * (``nrows`` of them); ``still`` (nrows x count bytes) marks the levels still open. */
static void by_scan(const Gap *g, const Py_ssize_t *rows, Py_ssize_t nrows, const Py_ssize_t *open,
                    const Py_ssize_t *from, unsigned char *still)
{
    Py_ssize_t first = g->months;
    for (Py_ssize_t j = 0; j < nrows; j++) {
        Py_ssize_t d = rows[j];
        memset(still + j * g->count, 1, (size_t)open[d]);
        memset(still + j * g->count + open[d], 0, (size_t)(g->count - open[d]));
        if (from[d] < first)
            first = from[d];
    }
    for (Py_ssize_t m = first; m < g->months; m++) {
        for (Py_ssize_t j = 0; j < nrows; j++) {
            Py_ssize_t d = rows[j];
            if (m < from[d])
                continue;
            unsigned char *mark = still + j * g->count;
            for (Py_ssize_t k = 0; k < open[d]; k++) {
                if (!mark[k])
                    continue;
                double f = gap_at(g, m, d, g->levels[k]);
                if (f <= 0.0) {
                    close_at(g, m, d, k, f);
                    mark[k] = 0;
                }
            }
        }
    }
    for (Py_ssize_t j = 0; j < nrows; j++)
        for (Py_ssize_t k = 0; k < open[rows[j]]; k++)
            if (still[j * g->count + k])
                g->out[g->order[k] * g->draws + rows[j]] = INFINITY;
}

/* Returns 0, or -1 when memory ran out. */
static int run(const Gap *g)
{
    Py_ssize_t s = g->draws, n = 0;
    /* open, from, rows (draws each), top (draws doubles), live (draws bytes) */
    Py_ssize_t *open = malloc((sizeof(Py_ssize_t) * 3 + sizeof(double) + 1) * (size_t)s + 1);
    if (open == NULL)
        return -1;
    Py_ssize_t *from = open + s, *rows = from + s;
    double *top = (double *)(rows + s);
    unsigned char *live = (unsigned char *)(top + s);
    int kinked = g->rent_u != NULL;
    for (Py_ssize_t d = 0; d < s; d++) {
        from[d] = kinked ? 0 : -1;
        open[d] = g->count;
        if (g->capex[d] <= 0.0) { /* paid back at once */
            open[d] = 0;
            for (Py_ssize_t k = 0; k < g->count; k++)
                g->out[g->order[k] * s + d] = 0.0;
        }
    }
    if (!kinked)
        by_counts(g, open, from, top, live, rows);
    for (Py_ssize_t d = 0; d < s; d++) {
        if (from[d] >= 0 && open[d] > 0)
            rows[n++] = d;
        else
            for (Py_ssize_t k = 0; k < open[d]; k++)
                g->out[g->order[k] * s + d] = INFINITY;
    }
    if (n > 0) {
        unsigned char *still = malloc((size_t)(n * g->count));
        if (still == NULL) {
            free(open);
            return -1;
        }
        by_scan(g, rows, n, open, from, still);
        free(still);
    }
    free(open);
    return 0;
}

static int sized(const Py_buffer *b, Py_ssize_t items, Py_ssize_t size, const char *name)
{
    if (b->len != items * size) {
        PyErr_Format(PyExc_ValueError, "%s holds %zd bytes, not %zd", name, b->len, items * size);
        return 0;
    }
    return 1;
}

PyDoc_STRVAR(payback_doc,
             "payback(net0, slope, rent_u, kink, capex, levels, order, out, months, draws)\n\n"
             "The payback month of every level and draw into ``out`` (level-major, row\n"
             "``order[k]`` for the k-th level), from the month-major (months, draws) float64\n"
             "gap ``net0 + u * slope`` (less ``max(0, u - kink) * rent_u`` unless ``rent_u``\n"
             "is None) and the capex (draws,); ``levels`` ascending float64 >= 0, ``order``\n"
             "their rows (intp).");

static PyObject *payback(PyObject *self, PyObject *args)
{
    Py_buffer b[8];
    Py_ssize_t months, draws;
    memset(b, 0, sizeof b);
    if (!PyArg_ParseTuple(args, "y*y*z*y*y*y*y*w*nn", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                          &b[6], &b[7], &months, &draws))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = b[5].len / (Py_ssize_t)sizeof(double), cells;
    const double *levels = b[5].buf;
    const Py_ssize_t *order = b[6].buf;
    if (months < 1 || draws < 0 || (draws > 0 && months > PY_SSIZE_T_MAX / 8 / draws)) {
        PyErr_Format(PyExc_ValueError, "%zd months and %zd draws: need at least 1 month", months,
                     draws);
        goto done;
    }
    cells = months * draws;
    if (count > 0 && draws > PY_SSIZE_T_MAX / 8 / count) {
        PyErr_SetString(PyExc_ValueError, "too many levels and draws");
        goto done;
    }
    if (!sized(&b[0], cells, sizeof(double), "net0") ||
        !sized(&b[1], cells, sizeof(double), "slope") ||
        (b[2].buf != NULL && !sized(&b[2], cells, sizeof(double), "rent_u")) ||
        (b[2].buf != NULL && !sized(&b[3], draws, sizeof(double), "kink")) ||
        !sized(&b[4], draws, sizeof(double), "capex") ||
        !sized(&b[5], count, sizeof(double), "levels") ||
        !sized(&b[6], count, sizeof(Py_ssize_t), "order") ||
        !sized(&b[7], count * draws, sizeof(double), "out"))
        goto done;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (!(levels[k] >= (k ? levels[k - 1] : 0.0))) {
            PyErr_SetString(PyExc_ValueError, "levels must be ascending and at least 0");
            goto done;
        }
        if (order[k] < 0 || order[k] >= count) {
            PyErr_Format(PyExc_ValueError, "order[%zd] = %zd is not a row of %zd levels", k,
                         order[k], count);
            goto done;
        }
    }
    Gap g = {b[0].buf, b[1].buf, b[2].buf, b[3].buf, b[4].buf, levels, order,
             b[7].buf, months,   draws,    count};
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = run(&g);
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    for (int i = 0; i < 8; i++)
        if (b[i].obj != NULL)
            PyBuffer_Release(&b[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"payback", payback, METH_VARARGS, payback_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_payback", "The compiled payback kernel of costmodel.outcomes.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__payback(void)
{
    return PyModule_Create(&module);
}
