/* costmodel._months: the month-major sums of the cash flows (costmodel.cashflows) in one pass.

   fold(out, horizon, draws, terms) writes into out, a C-contiguous float64 (H, S) array, the
   left fold out[m, s] = t_0 (+|-) t_1 (+|-) ... over the terms, months outer and draws inner.
   Each term is a tuple (kind, sign, a[, b[, c]]) of float64 C-contiguous buffers, a "row" being
   of length 1 (the same in every draw) or S:

     OUTER  (0, sign, column (H,), row)           column[m] * row[s]
     FULL   (1, sign, array (H, S))               array[m, s]
     GROWTH (2, sign, step (row), first (row))    A[m, s]: A_1 = first, A_m = A_{m-1} * step + first
     SCALED (3, sign, step, first, times (row))   A[m, s] * times[s]

   sign +1 adds the term, -1 subtracts it; the first term is the start (sign +1). These are the
   floating-point operations, in the same order, of the numpy form (cashflows._fold_numpy: each
   term over the whole array in turn, the recurrence a month at a time), so the numbers are the
   same bit for bit when the build does not contract a * b + c into a fused multiply-add
   (-ffp-contract=off). The numpy form passes over the whole (H, S) array about twice a term,
   and over a month's row twice a month for a recurrence; this takes each block of a month's
   row through every term while it is in the first-level cache, and writes the array once. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

enum { OUTER = 0, FULL = 1, GROWTH = 2, SCALED = 3 };
#define MAX_BUFFERS 3

typedef struct {
    int kind;
    int sign;
    Py_buffer view[MAX_BUFFERS];
    int views; /* buffers held */
    const double *a, *b, *c; /* the buffers, a row of length 1 spread to one value a draw */
    double *spread[MAX_BUFFERS]; /* the rows spread, owned */
    double *state;               /* the recurrence's row A_m, for GROWTH and SCALED */
} Term;

/* A float64 C-contiguous buffer of obj into view; -1 with an exception set otherwise. */
static int
get_doubles(PyObject *obj, Py_buffer *view, int writable)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    const char *f = view->format ? view->format : "B";
    if (view->itemsize != (Py_ssize_t)sizeof(double) ||
        !(strcmp(f, "d") == 0 || strcmp(f, "<d") == 0 || strcmp(f, "=d") == 0 ||
          strcmp(f, "@d") == 0)) {
        PyErr_Format(PyExc_ValueError, "expected a float64 buffer, got format %s", f);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Buffer j of t as a row of one value a draw (a row of one value spread into t->spread[j],
   so that every loop runs over contiguous values); NULL with ValueError or MemoryError. */
static const double *
row(Term *t, int j, Py_ssize_t draws, const char *what)
{
    const Py_buffer *view = &t->view[j];
    Py_ssize_t n = view->len / (Py_ssize_t)sizeof(double);
    if (n == draws)
        return (const double *)view->buf;
    if (n != 1) {
        PyErr_Format(PyExc_ValueError, "%s has %zd values, not 1 or %zd (the draws)", what, n,
                     draws);
        return NULL;
    }
    double *spread = PyMem_Malloc((size_t)(draws > 0 ? draws : 1) * sizeof(double));
    if (spread == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t s = 0; s < draws; s++)
        spread[s] = *(const double *)view->buf;
    t->spread[j] = spread;
    return spread;
}

static void
release(Term *terms, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        for (int j = 0; j < terms[i].views; j++) {
            PyBuffer_Release(&terms[i].view[j]);
            PyMem_Free(terms[i].spread[j]);
        }
        PyMem_Free(terms[i].state);
    }
    PyMem_Free(terms);
}

/* Parse term i of the sequence into t (its buffers held in t->view); -1 with an exception. */
static int
parse_term(PyObject *item, Term *t, Py_ssize_t i, Py_ssize_t horizon, Py_ssize_t draws)
{
    static const int needed[] = {2, 1, 2, 3};
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) < 3) {
        PyErr_Format(PyExc_ValueError, "term %zd is not a tuple (kind, sign, buffers...)", i);
        return -1;
    }
    t->kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 0));
    t->sign = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 1));
    if (PyErr_Occurred())
        return -1;
    if (t->kind < OUTER || t->kind > SCALED) {
        PyErr_Format(PyExc_ValueError, "term %zd: unknown kind %d", i, t->kind);
        return -1;
    }
    if (t->sign != 1 && t->sign != -1) {
        PyErr_Format(PyExc_ValueError, "term %zd: sign %d is not 1 or -1", i, t->sign);
        return -1;
    }
    if (i == 0 && t->sign != 1) {
        PyErr_SetString(PyExc_ValueError, "the first term is the start: its sign must be 1");
        return -1;
    }
    if (PyTuple_GET_SIZE(item) != 2 + needed[t->kind]) {
        PyErr_Format(PyExc_ValueError, "term %zd of kind %d takes %d buffers", i, t->kind,
                     needed[t->kind]);
        return -1;
    }
    for (int j = 0; j < needed[t->kind]; j++) {
        if (get_doubles(PyTuple_GET_ITEM(item, 2 + j), &t->view[j], 0) < 0)
            return -1;
        t->views = j + 1;
    }
    Py_ssize_t n0 = t->view[0].len / (Py_ssize_t)sizeof(double);
    t->a = (const double *)t->view[0].buf;
    switch (t->kind) {
    case OUTER:
        if (n0 != horizon) {
            PyErr_Format(PyExc_ValueError, "term %zd: the column has %zd values, not %zd (the "
                         "months)", i, n0, horizon);
            return -1;
        }
        if ((t->b = row(t, 1, draws, "a row")) == NULL)
            return -1;
        break;
    case FULL:
        if (n0 != horizon * draws) {
            PyErr_Format(PyExc_ValueError, "term %zd: the array has %zd values, not %zd x %zd",
                         i, n0, horizon, draws);
            return -1;
        }
        break;
    default: /* GROWTH, SCALED */
        if ((t->a = row(t, 0, draws, "a step")) == NULL ||
            (t->b = row(t, 1, draws, "a first month")) == NULL ||
            (t->kind == SCALED && (t->c = row(t, 2, draws, "a factor")) == NULL))
            return -1;
        t->state = PyMem_Malloc((size_t)(draws > 0 ? draws : 1) * sizeof(double));
        if (t->state == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    return 0;
}

/* o[s] = v, o[s] + v or o[s] - v for the draws s of [lo, hi), v the expression EXPR of s. */
#define APPLY(EXPR)                                                                         \
    do {                                                                                    \
        if (start)                                                                          \
            for (s = lo; s < hi; s++) o[s] = (EXPR);                                        \
        else if (t->sign > 0)                                                               \
            for (s = lo; s < hi; s++) o[s] = o[s] + (EXPR);                                 \
        else                                                                                \
            for (s = lo; s < hi; s++) o[s] = o[s] - (EXPR);                                 \
    } while (0)

/* On x86-64 Linux with glibc (whose loader picks the clone) and GCC or Clang, the loops are
   built twice, for AVX2 (4 values an instruction) and for the baseline (SSE2, 2), and the
   processor's is chosen at load time: the same operations on every value, so the same
   numbers. The loops vectorise at -O3 (pyproject.toml); at -O2 they run a value at a time
   and are no faster than numpy's passes. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && \
    (defined(__GNUC__) || defined(__clang__))
#define WIDE __attribute__((target_clones("avx2", "default")))
#else
#define WIDE
#endif

/* Month m of term t for the draws [lo, hi) combined into o (the month's row of out): set
   (start), added or subtracted. */
WIDE static void
combine(const Term *t, Py_ssize_t m, Py_ssize_t draws, Py_ssize_t lo, Py_ssize_t hi,
        double *restrict o, int start)
{
    Py_ssize_t s;
    const double *restrict b = t->b, *restrict c = t->c;
    if (t->kind == OUTER) {
        const double col = t->a[m];
        APPLY(col * b[s]);
        return;
    }
    if (t->kind == FULL) {
        const double *restrict row = t->a + m * draws;
        APPLY(row[s]);
        return;
    }
    double *restrict a = t->state; /* A_m = A_{m-1} * step + first: the product rounded, then
                                      the sum (no fused multiply-add: -ffp-contract=off) */
    const double *restrict step = t->a;
    if (m == 0)
        for (s = lo; s < hi; s++) a[s] = b[s];
    else
        for (s = lo; s < hi; s++) a[s] = a[s] * step[s] + b[s];
    if (t->kind == GROWTH)
        APPLY(a[s]);
    else
        APPLY(a[s] * c[s]);
}

/* Draws a block of a month's row holds: the row's values, the terms' and the states' stay in
   the first-level cache while every term is combined into it. */
#define BLOCK 512

static PyObject *
fold(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *out_obj, *seq;
    Py_ssize_t horizon, draws;
    if (!PyArg_ParseTuple(args, "OnnO:fold", &out_obj, &horizon, &draws, &seq))
        return NULL;
    if (horizon < 0 || draws < 0) {
        PyErr_SetString(PyExc_ValueError, "the months and draws must not be negative");
        return NULL;
    }
    if (draws > 0 && horizon > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(double) / draws) {
        PyErr_SetString(PyExc_ValueError, "the months x draws overflow");
        return NULL;
    }
    Py_buffer out;
    if (get_doubles(out_obj, &out, 1) < 0)
        return NULL;
    if (out.len != horizon * draws * (Py_ssize_t)sizeof(double)) {
        PyErr_Format(PyExc_ValueError, "out has %zd values, not %zd x %zd",
                     out.len / (Py_ssize_t)sizeof(double), horizon, draws);
        PyBuffer_Release(&out);
        return NULL;
    }
    PyObject *fast = PySequence_Fast(seq, "terms must be a sequence");
    if (fast == NULL) {
        PyBuffer_Release(&out);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "fold needs at least one term");
        Py_DECREF(fast);
        PyBuffer_Release(&out);
        return NULL;
    }
    Term *terms = PyMem_Calloc((size_t)n, sizeof(Term));
    if (terms == NULL) {
        Py_DECREF(fast);
        PyBuffer_Release(&out);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (parse_term(PySequence_Fast_GET_ITEM(fast, i), &terms[i], i, horizon, draws) < 0) {
            release(terms, i + 1);
            Py_DECREF(fast);
            PyBuffer_Release(&out);
            return NULL;
        }
    }
    double *o = (double *)out.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t m = 0; m < horizon; m++)
        for (Py_ssize_t lo = 0; lo < draws; lo += BLOCK) {
            Py_ssize_t hi = lo + BLOCK < draws ? lo + BLOCK : draws;
            for (Py_ssize_t i = 0; i < n; i++)
                combine(&terms[i], m, draws, lo, hi, o + m * draws, i == 0);
        }
    Py_END_ALLOW_THREADS
    release(terms, n);
    Py_DECREF(fast);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"fold", fold, METH_VARARGS,
     "fold(out, horizon, draws, terms): out[m, s] = t_0 (+|-) t_1 ... month by month, each term "
     "(kind, sign, buffers): 0 outer (column, row), 1 full (array), 2 growth (step, first), "
     "3 scaled growth (step, first, times); see costmodel.cashflows."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_months",
    "The month-major sums of the cash flows in one pass (costmodel.cashflows; its numpy form "
    "is cashflows._fold_numpy).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__months(void)
{
    return PyModule_Create(&module);
}
