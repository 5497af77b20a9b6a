/* The built-in fusion methods in C: ef.evaluation's fused run, float for float, in one call.
 *
 * fuse(runs, norm, weights, rank_scores, in_rank_order[, combine, factors]) reads every run
 * ({query_id: {doc_id: score}}, plain dicts of str ids and float or int scores), puts each
 * query's scores of each run in trec_eval's order (score descending, ties by doc id descending),
 * turns them into values (normalised, by rank, weighted), combines each doc's values and builds
 * each fused query in trec_eval's order. Every float is the one ef.evaluation's pure-Python path
 * computes (ef/evaluation/_fusion/methods.py, norms.py):
 *
 *   - min-max: (score - low) / max(high - low, 1e-9), the subtraction skipped when low is zero
 *     (so -0.0 stays -0.0); max: score / max(high, 1e-9); low and high are the ranking's last
 *     and first scores;
 *   - a weight multiplies the normalised score: score * weight;
 *   - a rank-based method takes rank_scores[i] for the doc at 0-based rank i instead;
 *   - combine "total" (sum, wsum, rrf, rbc): the first run with docs for the query gives each
 *     doc its value as it is; each later run adds its value to the doc's total, a doc not seen
 *     before starting from 0.0;
 *   - the other combines take a doc's values from the runs that retrieved it, in run order, as
 *     methods.py's _present() lists them: "sum_times" is Python's sum() of them times
 *     factors[c - 1] for a doc c runs retrieved (mnz, gmnz, isr, log_isr, logn_isr, mixed),
 *     "sum_over" that sum divided by factors[c - 1] (anz), "sum_times_weights" that sum (the
 *     values not weighted) times Python's sum() of those runs' weights (wmnz); "max" and "min"
 *     are Python's max() and min() (the first of equal values), "median" statistics.median()
 *     (a stable sort; the middle value, or the two middle ones added and halved);
 *   - combine "borda" (bordafuse, w_bordafuse): over the query's c candidates, a doc at rank i
 *     of a run gets c - i points, one the run missed (c - n + 1) / 2 for a run of n docs; the
 *     points (times the run's weight) are added run after run from the first run, every run
 *     counting (a run without the query is a run of 0 docs);
 *   - Python's sum() of floats: (0.0 + x1) + x2 + ... before Python 3.12; from 3.12 on, the
 *     same with Neumaier's compensation, added at the end when non-zero and finite.
 *
 * Anything else — a value that is no dict, an id that is no str, a score that is no float or
 * int (a bool, a subclass), not finite, an int beyond 2**52 (where int and float arithmetic
 * part), an int whose type would survive into the result (a sum of unnormalised, unweighted
 * scores keeps ints in Python), a fused score that is not finite — makes fuse() return None
 * without a result: the caller runs its Python path, which raises its own error. Only
 * MemoryError is raised here. No Python code runs while borrowed references are held (the
 * reading and adding touch only exact dicts, strs, floats and ints); what is kept across an
 * allocation of Python objects (a query's ids and docs) is held by a strong reference.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <string.h>

/* a * b + c must stay two roundings, as in Python: no fused multiply-add (setup.py passes
 * -ffp-contract=off for GCC, which ignores this pragma). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define DECLINED 1 /* a step's result: 0 done, -1 error (exception set), 1 declined */
#define FLOOR 1e-9 /* ef.evaluation's smallest normalisation denominator */
#define MAX_EXACT_INT (1LL << 52)

enum { NORM_NONE, NORM_MIN_MAX, NORM_MAX };
enum {
    COMBINE_TOTAL,
    COMBINE_SUM_TIMES,
    COMBINE_SUM_OVER,
    COMBINE_SUM_TIMES_WEIGHTS,
    COMBINE_MAX,
    COMBINE_MIN,
    COMBINE_MEDIAN,
    COMBINE_BORDA,
};
static const char *const COMBINES[] = {
    "total", "sum_times", "sum_over", "sum_times_weights", "max", "min", "median", "borda", NULL,
};

typedef struct {
    PyObject *doc;
    double value;
} Item;

typedef struct {
    Py_ssize_t slot; /* the doc's */
    Py_ssize_t run;
    double value;
} Entry;

typedef struct {
    PyObject *runs; /* a tuple of dicts */
    Py_ssize_t n_runs;
    int norm;
    double *weights;     /* n_runs of them, or NULL */
    double *rank_scores; /* n_rank_scores of them, or NULL for a score-based method */
    Py_ssize_t n_rank_scores;
    int in_rank_order;  /* the rankings are in rank order already: take them as they are */
    int ints_kept;      /* an int score would be an int in Python's result: decline it */
    int combine;
    double *factors; /* n_factors of them, for sum_times and sum_over */
    Py_ssize_t n_factors;
    Py_ssize_t capacity; /* of items, scratch, slots, hashes (and entries, sorted, starts) */
    Item *items;         /* one run's ranking for the query */
    Item *scratch;       /* merge sort's buffer */
    Item *slots;         /* the fused docs, in order of first appearance (docs held) */
    Py_hash_t *hashes;
    Py_ssize_t n_slots;
    Py_ssize_t *index; /* open addressing: slot number or -1 */
    size_t mask;
    /* Every combine but total: each run's values for the query, in run order, then by doc. */
    Entry *entries;
    Entry *sorted;
    Py_ssize_t n_entries;
    Py_ssize_t *starts;  /* a doc's entries end at sorted[starts[slot]] */
    Py_ssize_t *lengths; /* n_runs: each run's number of docs for the query (borda) */
    double *buffer;      /* n_runs: one doc's values, for the median */
} Fuser;

/* Python's sum() of floats, one value at a time: see the top of this file. */
typedef struct {
    double high, low;
} Sum;

static inline Sum
sum_start(double x)
{
    Sum s = {0.0 + x, 0.0}; /* sum() starts from the int 0: 0 + x is 0.0 + x */
    return s;
}

static inline void
sum_add(Sum *s, double x)
{
#if PY_VERSION_HEX >= 0x030C0000
    double t = s->high + x;
    if (fabs(s->high) >= fabs(x)) s->low += (s->high - t) + x;
    else s->low += (x - t) + s->high;
    s->high = t;
#else
    s->high = s->high + x;
#endif
}

static inline double
sum_end(Sum s)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (s.low != 0.0 && isfinite(s.low)) return s.high + s.low;
#endif
    return s.high;
}

/* Python's str order (by code point), for exact strs. */
static int
str_cmp(PyObject *a, PyObject *b)
{
    if (a == b) return 0;
    if (PyUnicode_IS_COMPACT(a) && PyUnicode_IS_COMPACT(b)
            && PyUnicode_KIND(a) == PyUnicode_1BYTE_KIND
            && PyUnicode_KIND(b) == PyUnicode_1BYTE_KIND) {
        Py_ssize_t la = PyUnicode_GET_LENGTH(a), lb = PyUnicode_GET_LENGTH(b);
        int c = memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)(la < lb ? la : lb));
        if (c) return c < 0 ? -1 : 1;
        return la < lb ? -1 : la > lb;
    }
    return PyUnicode_Compare(a, b); /* cannot fail for two strs */
}

static int
str_eq(PyObject *a, PyObject *b)
{
    if (a == b) return 1;
    if (PyUnicode_IS_COMPACT(a) && PyUnicode_IS_COMPACT(b)) {
        /* Equal strs have the same kind: the narrowest that holds their code points. */
        Py_ssize_t n = PyUnicode_GET_LENGTH(a);
        return n == PyUnicode_GET_LENGTH(b) && PyUnicode_KIND(a) == PyUnicode_KIND(b)
               && memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)n * PyUnicode_KIND(a)) == 0;
    }
    return PyUnicode_Compare(a, b) == 0;
}

/* trec_eval's order: score descending, ties by doc id descending (-0.0 ties with 0.0). */
static inline int
before(const Item *a, const Item *b)
{
    if (a->value != b->value) return a->value > b->value;
    return str_cmp(a->doc, b->doc) > 0;
}

static void
merge_sort(Item *a, Item *tmp, Py_ssize_t n)
{
    if (n <= 16) {
        for (Py_ssize_t i = 1; i < n; i++) {
            Item x = a[i];
            Py_ssize_t j = i;
            for (; j > 0 && before(&x, &a[j - 1]); j--) a[j] = a[j - 1];
            a[j] = x;
        }
        return;
    }
    Py_ssize_t m = n / 2, i = 0, j = m, k = 0;
    merge_sort(a, tmp, m);
    merge_sort(a + m, tmp, n - m);
    if (!before(&a[m], &a[m - 1])) return; /* the halves are in order already */
    memcpy(tmp, a, (size_t)m * sizeof(Item));
    while (i < m && j < n) a[k++] = before(&a[j], &tmp[i]) ? a[j++] : tmp[i++];
    while (i < m) a[k++] = tmp[i++];
}

static int
reserve(Fuser *f, Py_ssize_t n)
{
    size_t size = 8;
    while (size < 2 * (size_t)n) size <<= 1;
    if (size - 1 > f->mask) {
        PyMem_Free(f->index);
        f->index = PyMem_New(Py_ssize_t, size);
        if (f->index == NULL) {
            f->mask = 0;
            PyErr_NoMemory();
            return -1;
        }
        f->mask = size - 1;
    }
    memset(f->index, 0xff, (f->mask + 1) * sizeof(Py_ssize_t)); /* every entry -1 */
    if (n <= f->capacity) return 0;
    PyMem_Free(f->items);
    PyMem_Free(f->scratch);
    PyMem_Free(f->slots);
    PyMem_Free(f->hashes);
    PyMem_Free(f->entries);
    PyMem_Free(f->sorted);
    PyMem_Free(f->starts);
    f->entries = f->sorted = NULL;
    f->starts = NULL;
    f->items = PyMem_New(Item, n);
    f->scratch = PyMem_New(Item, n);
    f->slots = PyMem_New(Item, n);
    f->hashes = PyMem_New(Py_hash_t, n);
    int failed = !f->items || !f->scratch || !f->slots || !f->hashes;
    if (!failed && f->combine != COMBINE_TOTAL) {
        f->entries = PyMem_New(Entry, n);
        f->sorted = PyMem_New(Entry, n);
        f->starts = PyMem_New(Py_ssize_t, n);
        failed = !f->entries || !f->sorted || !f->starts;
    }
    if (failed) {
        f->capacity = 0;
        PyErr_NoMemory();
        return -1;
    }
    f->capacity = n;
    return 0;
}

/* One run's ranking for the query into f->items, checked and in rank order: *n docs. */
static int
read_ranking(Fuser *f, PyObject *scores, Py_ssize_t *n_out)
{
    Py_ssize_t pos = 0, n = 0;
    PyObject *key, *value;
    int strictly = 1, descending = 1;
    Item *items = f->items;
    while (PyDict_Next(scores, &pos, &key, &value)) {
        double v;
        if (!PyUnicode_CheckExact(key)) return DECLINED;
        if (PyFloat_CheckExact(value)) {
            v = PyFloat_AS_DOUBLE(value);
            if (!isfinite(v)) return DECLINED;
        } else if (PyLong_CheckExact(value) && !f->ints_kept) {
            int overflow;
            long long i = PyLong_AsLongLongAndOverflow(value, &overflow);
            if (overflow || i > MAX_EXACT_INT || i < -MAX_EXACT_INT) return DECLINED;
            v = (double)i; /* exact, and so is every sum or difference of two of them */
        } else {
            return DECLINED;
        }
        if (n > 0 && !(items[n - 1].value > v)) {
            strictly = 0;
            if (items[n - 1].value < v) descending = 0;
        }
        items[n].doc = key;
        items[n].value = v;
        n++;
    }
    *n_out = n;
    if (f->in_rank_order || strictly) return 0;
    if (!descending) {
        merge_sort(items, f->scratch, n);
        return 0;
    }
    /* In order but for ties: only each group of equal scores is sorted (by doc id). */
    for (Py_ssize_t start = 0; start < n;) {
        Py_ssize_t end = start + 1;
        while (end < n && items[end].value == items[start].value) end++;
        if (end - start > 1) merge_sort(items + start, f->scratch, end - start);
        start = end;
    }
    return 0;
}

/* The values run r adds, in place of its scores: normalised (or by rank), weighted. */
static int
values_of(Fuser *f, Py_ssize_t r, Py_ssize_t n)
{
    Item *items = f->items;
    if (f->combine == COMBINE_BORDA) {
        /* The rank itself: the points depend on the query's candidates, counted at the end. */
        for (Py_ssize_t i = 0; i < n; i++) items[i].value = (double)i;
        return 0;
    }
    if (f->rank_scores != NULL) {
        if (n > f->n_rank_scores) return DECLINED;
        for (Py_ssize_t i = 0; i < n; i++) items[i].value = f->rank_scores[i];
    } else if (f->norm == NORM_MIN_MAX) {
        double low = items[n - 1].value, denominator = items[0].value - low;
        if (FLOOR > denominator) denominator = FLOOR; /* Python's max(high - low, 1e-9) */
        if (low != 0.0) {
            for (Py_ssize_t i = 0; i < n; i++)
                items[i].value = (items[i].value - low) / denominator;
        } else {
            for (Py_ssize_t i = 0; i < n; i++) items[i].value = items[i].value / denominator;
        }
    } else if (f->norm == NORM_MAX) {
        double denominator = items[0].value;
        if (FLOOR > denominator) denominator = FLOOR;
        for (Py_ssize_t i = 0; i < n; i++) items[i].value = items[i].value / denominator;
    }
    if (f->weights != NULL && f->combine != COMBINE_SUM_TIMES_WEIGHTS) {
        double weight = f->weights[r];
        for (Py_ssize_t i = 0; i < n; i++) items[i].value = items[i].value * weight;
    }
    return 0;
}

/* The slot of doc, a new one (its value 0.0) for a doc not seen before; -1 on error. */
static inline Py_ssize_t
slot_of(Fuser *f, PyObject *doc, int *is_new)
{
    Py_hash_t hash = PyObject_Hash(doc); /* a str's: cached, or computed without Python code */
    if (hash == -1) return -1;
    size_t at = (size_t)hash & f->mask;
    for (;;) {
        Py_ssize_t s = f->index[at];
        if (s < 0) {
            s = f->n_slots++;
            f->index[at] = s;
            f->hashes[s] = hash;
            f->slots[s].doc = Py_NewRef(doc);
            f->slots[s].value = 0.0;
            *is_new = 1;
            return s;
        }
        if (f->hashes[s] == hash && str_eq(f->slots[s].doc, doc)) {
            *is_new = 0;
            return s;
        }
        at = (at + 1) & f->mask;
    }
}

static int
add_up(Fuser *f, Py_ssize_t n, int first)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        double value = f->items[k].value;
        int is_new;
        Py_ssize_t s = slot_of(f, f->items[k].doc, &is_new);
        if (s < 0) return -1;
        if (is_new) f->slots[s].value = first ? value : 0.0 + value;
        else f->slots[s].value = f->slots[s].value + value;
    }
    return 0;
}

/* Run r's values for the query, kept for combine() (every combine but total). */
static int
gather(Fuser *f, Py_ssize_t r, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        int is_new;
        Py_ssize_t s = slot_of(f, f->items[k].doc, &is_new);
        if (s < 0) return -1;
        Entry *entry = &f->entries[f->n_entries++];
        entry->slot = s;
        entry->run = r;
        entry->value = f->items[k].value;
    }
    return 0;
}

/* A doc's values (n of them, in run order) in a stable ascending sort, as sorted() does. */
static void
sort_values(double *values, Py_ssize_t n)
{
    for (Py_ssize_t i = 1; i < n; i++) {
        double x = values[i];
        Py_ssize_t j = i;
        for (; j > 0 && x < values[j - 1]; j--) values[j] = values[j - 1];
        values[j] = x;
    }
}

/* Borda points of the doc whose entries (ranks, in run order) are given, over the runs. */
static double
borda(const Fuser *f, const Entry *entry, const Entry *end)
{
    double candidates = (double)f->n_slots, total = 0.0;
    for (Py_ssize_t r = 0; r < f->n_runs; r++) {
        double points;
        if (entry < end && entry->run == r) {
            points = candidates - entry->value; /* exact: ints below 2**53 */
            entry++;
        } else {
            points = (candidates - (double)f->lengths[r] + 1.0) / 2.0; /* exact: a half */
        }
        if (f->weights != NULL) points = points * f->weights[r];
        total = r == 0 ? points : total + points;
    }
    return total;
}

/* Each doc's gathered values combined into its slot's value. */
static int
combine(Fuser *f)
{
    Py_ssize_t n_slots = f->n_slots, *starts = f->starts;
    if (n_slots == 0) return 0;
    memset(starts, 0, (size_t)n_slots * sizeof(Py_ssize_t));
    for (Py_ssize_t e = 0; e < f->n_entries; e++) starts[f->entries[e].slot]++;
    for (Py_ssize_t s = 0, begin = 0; s < n_slots; s++) {
        Py_ssize_t count = starts[s];
        starts[s] = begin;
        begin += count;
    }
    /* A stable counting sort by slot: each doc's entries stay in run order. Afterwards
     * starts[s] is where slot s's entries end. */
    for (Py_ssize_t e = 0; e < f->n_entries; e++) {
        const Entry *entry = &f->entries[e];
        f->sorted[starts[entry->slot]++] = *entry;
    }
    for (Py_ssize_t s = 0; s < n_slots; s++) {
        const Entry *entry = f->sorted + (s ? starts[s - 1] : 0), *end = f->sorted + starts[s];
        Py_ssize_t count = end - entry;
        double value = entry->value;
        if (f->combine == COMBINE_BORDA) {
            value = borda(f, entry, end);
        } else if (f->combine == COMBINE_MAX) {
            for (const Entry *e = entry + 1; e < end; e++)
                if (e->value > value) value = e->value;
        } else if (f->combine == COMBINE_MIN) {
            for (const Entry *e = entry + 1; e < end; e++)
                if (e->value < value) value = e->value;
        } else if (f->combine == COMBINE_MEDIAN) {
            for (Py_ssize_t k = 0; k < count; k++) f->buffer[k] = entry[k].value;
            sort_values(f->buffer, count);
            value = count % 2 ? f->buffer[count / 2]
                              : (f->buffer[count / 2 - 1] + f->buffer[count / 2]) / 2.0;
        } else {
            Sum sum = sum_start(value);
            for (const Entry *e = entry + 1; e < end; e++) sum_add(&sum, e->value);
            value = sum_end(sum);
            if (f->combine == COMBINE_SUM_TIMES) {
                value = value * f->factors[count - 1];
            } else if (f->combine == COMBINE_SUM_OVER) {
                value = value / f->factors[count - 1];
            } else { /* COMBINE_SUM_TIMES_WEIGHTS */
                Sum weights = sum_start(f->weights[entry->run]);
                for (const Entry *e = entry + 1; e < end; e++)
                    sum_add(&weights, f->weights[e->run]);
                value = value * sum_end(weights);
            }
        }
        f->slots[s].value = value;
    }
    return 0;
}

static void
release_slots(Fuser *f)
{
    for (Py_ssize_t s = 0; s < f->n_slots; s++) Py_DECREF(f->slots[s].doc);
    f->n_slots = 0;
}

/* The query's fused scores as a dict in trec_eval's order, into *out. */
static int
fuse_query(Fuser *f, PyObject **rankings, PyObject **out)
{
    Py_ssize_t total = 0;
    int first = 1, status = 0;
    for (Py_ssize_t r = 0; r < f->n_runs; r++)
        if (rankings[r] != NULL) total += PyDict_GET_SIZE(rankings[r]);
    if (reserve(f, total) < 0) return -1;
    f->n_entries = 0;
    for (Py_ssize_t r = 0; r < f->n_runs && status == 0; r++) {
        Py_ssize_t n;
        if (f->lengths != NULL) f->lengths[r] = 0;
        if (rankings[r] == NULL || PyDict_GET_SIZE(rankings[r]) == 0) continue;
        if ((status = read_ranking(f, rankings[r], &n)) != 0) break;
        if ((status = values_of(f, r, n)) != 0) break;
        if (f->lengths != NULL) f->lengths[r] = n;
        status = f->combine == COMBINE_TOTAL ? add_up(f, n, first) : gather(f, r, n);
        first = 0;
    }
    if (status == 0 && f->combine != COMBINE_TOTAL) status = combine(f);
    for (Py_ssize_t s = 0; s < f->n_slots && status == 0; s++)
        if (!isfinite(f->slots[s].value)) status = DECLINED; /* Python names the doc */
    if (status != 0) {
        release_slots(f);
        return status;
    }
    merge_sort(f->slots, f->scratch, f->n_slots);
    PyObject *fused = PyDict_New();
    for (Py_ssize_t s = 0; s < f->n_slots && fused != NULL; s++) {
        PyObject *score = PyFloat_FromDouble(f->slots[s].value);
        if (score == NULL || PyDict_SetItem(fused, f->slots[s].doc, score) < 0) Py_CLEAR(fused);
        Py_XDECREF(score);
    }
    release_slots(f);
    if (fused == NULL) return -1;
    *out = fused;
    return 0;
}

/* Every run's queries are str ids of dicts, checked before any lookup, so that looking a query
 * id up in a run compares strs only. */
static int
plain_runs(Fuser *f)
{
    for (Py_ssize_t r = 0; r < f->n_runs; r++) {
        PyObject *run = PyTuple_GET_ITEM(f->runs, r), *key, *value;
        Py_ssize_t pos = 0;
        if (!PyDict_CheckExact(run)) return DECLINED;
        while (PyDict_Next(run, &pos, &key, &value))
            if (!PyUnicode_CheckExact(key) || !PyDict_CheckExact(value)) return DECLINED;
    }
    return 0;
}

/* The fused run, queries in order of first appearance across the runs, into result. */
static int
fuse_runs(Fuser *f, PyObject *result)
{
    int status = plain_runs(f);
    if (status != 0) return status;
    PyObject **rankings = PyMem_New(PyObject *, f->n_runs);
    if (rankings == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t r = 0; r < f->n_runs && status == 0; r++) {
        PyObject *run = PyTuple_GET_ITEM(f->runs, r), *query_id, *entry;
        Py_ssize_t pos = 0;
        while (status == 0 && PyDict_Next(run, &pos, &query_id, &entry)) {
            if (!PyUnicode_CheckExact(query_id) || !PyDict_CheckExact(entry)) {
                status = DECLINED; /* changed since plain_runs() (by a finaliser) */
                break;
            }
            if (r > 0) {
                int seen = PyDict_Contains(result, query_id);
                if (seen != 0) {
                    status = seen < 0 ? -1 : 0;
                    continue;
                }
            }
            /* Held: building the fused query allocates, and may run a finaliser. */
            Py_INCREF(query_id);
            Py_ssize_t held = 0;
            for (Py_ssize_t s = 0; s < f->n_runs; s++) {
                PyObject *scores = NULL;
                if (s == r) {
                    scores = entry;
                } else if (s > r) {
                    scores = PyDict_GetItemWithError(PyTuple_GET_ITEM(f->runs, s), query_id);
                    if (scores == NULL && PyErr_Occurred()) status = -1;
                    else if (scores != NULL && !PyDict_CheckExact(scores)) status = DECLINED;
                }
                rankings[s] = Py_XNewRef(scores);
                held = s + 1;
                if (status != 0) break;
            }
            PyObject *fused = NULL;
            if (status == 0) status = fuse_query(f, rankings, &fused);
            if (status == 0) {
                status = PyDict_SetItem(result, query_id, fused) < 0 ? -1 : 0;
                Py_DECREF(fused);
            }
            for (Py_ssize_t s = 0; s < held; s++) Py_XDECREF(rankings[s]);
            Py_DECREF(query_id);
        }
    }
    PyMem_Free(rankings);
    return status;
}

/* Floats out of a sequence of exact floats, all finite; DECLINED for anything else. */
static int
floats_of(PyObject *given, double **out, Py_ssize_t *n_out)
{
    PyObject *seq = PySequence_Fast(given, "not a sequence");
    if (seq == NULL) {
        PyErr_Clear();
        return DECLINED;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    double *values = PyMem_New(double, n > 0 ? n : 1);
    int status = 0;
    if (values == NULL) {
        PyErr_NoMemory();
        status = -1;
    }
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyFloat_CheckExact(item) || !isfinite(PyFloat_AS_DOUBLE(item))) status = DECLINED;
        else values[i] = PyFloat_AS_DOUBLE(item);
    }
    Py_DECREF(seq);
    if (status != 0) {
        PyMem_Free(values);
        return status;
    }
    *out = values;
    *n_out = n;
    return 0;
}

static int
norm_of(PyObject *norm, int *out)
{
    if (norm == Py_None) *out = NORM_NONE;
    else if (PyUnicode_Check(norm) && PyUnicode_CompareWithASCIIString(norm, "min-max") == 0)
        *out = NORM_MIN_MAX;
    else if (PyUnicode_Check(norm) && PyUnicode_CompareWithASCIIString(norm, "max") == 0)
        *out = NORM_MAX;
    else return DECLINED;
    return 0;
}

static int
combine_of(PyObject *name, int *out)
{
    *out = COMBINE_TOTAL;
    if (name == NULL || name == Py_None) return 0;
    if (!PyUnicode_Check(name)) return DECLINED;
    for (int c = 0; COMBINES[c] != NULL; c++) {
        if (PyUnicode_CompareWithASCIIString(name, COMBINES[c]) == 0) {
            *out = c;
            return 0;
        }
    }
    return DECLINED;
}

/* What each combine needs: factors for the counts of runs (at most n_runs), or weights. */
static int
check_combine(const Fuser *f)
{
    switch (f->combine) {
    case COMBINE_SUM_TIMES:
    case COMBINE_SUM_OVER:
        return f->factors != NULL && f->n_factors >= f->n_runs ? 0 : DECLINED;
    case COMBINE_SUM_TIMES_WEIGHTS:
        return f->weights != NULL && f->factors == NULL && f->rank_scores == NULL ? 0 : DECLINED;
    case COMBINE_BORDA:
        return f->factors == NULL && f->rank_scores == NULL ? 0 : DECLINED;
    default:
        return f->factors == NULL ? 0 : DECLINED;
    }
}

static PyObject *
fuse(PyObject *module, PyObject *args)
{
    PyObject *runs, *norm, *weights, *rank_scores, *combine_name = NULL, *factors = Py_None;
    PyObject *result = NULL;
    int in_rank_order;
    if (!PyArg_ParseTuple(args, "OOOOp|OO:fuse", &runs, &norm, &weights, &rank_scores,
                          &in_rank_order, &combine_name, &factors))
        return NULL;
#if FLT_EVAL_METHOD != 0
    Py_RETURN_NONE; /* extended-precision arithmetic would round differently */
#endif
    Fuser f = {0};
    f.in_rank_order = in_rank_order;
    Py_ssize_t n_weights = 0;
    int status = norm_of(norm, &f.norm);
    if (status == 0) status = combine_of(combine_name, &f.combine);
    if (status == 0) {
        f.runs = PySequence_Tuple(runs); /* held: the caller's list may change */
        if (f.runs == NULL) {
            PyErr_Clear();
            status = DECLINED;
        } else {
            f.n_runs = PyTuple_GET_SIZE(f.runs);
        }
    }
    if (status == 0 && weights != Py_None) {
        status = floats_of(weights, &f.weights, &n_weights);
        if (status == 0 && n_weights != f.n_runs) status = DECLINED;
    }
    if (status == 0 && rank_scores != Py_None)
        status = floats_of(rank_scores, &f.rank_scores, &f.n_rank_scores);
    if (status == 0 && factors != Py_None)
        status = floats_of(factors, &f.factors, &f.n_factors);
    if (status == 0) status = check_combine(&f);
    if (status == 0 && f.combine != COMBINE_TOTAL) {
        f.lengths = PyMem_New(Py_ssize_t, f.n_runs > 0 ? f.n_runs : 1);
        f.buffer = PyMem_New(double, f.n_runs > 0 ? f.n_runs : 1);
        if (f.lengths == NULL || f.buffer == NULL) {
            PyErr_NoMemory();
            status = -1;
        }
    }
    /* Python adds unnormalised, unweighted int scores as ints, and keeps an int as it is: only
     * a normalisation, a weight or a rank makes it a float before it is combined. */
    f.ints_kept = f.norm == NORM_NONE && f.rank_scores == NULL && f.combine != COMBINE_BORDA
                  && (f.weights == NULL || f.combine == COMBINE_SUM_TIMES_WEIGHTS);
    if (status == 0) {
        result = PyDict_New();
        status = result == NULL ? -1 : fuse_runs(&f, result);
    }
    Py_XDECREF(f.runs);
    PyMem_Free(f.weights);
    PyMem_Free(f.rank_scores);
    PyMem_Free(f.factors);
    PyMem_Free(f.lengths);
    PyMem_Free(f.buffer);
    PyMem_Free(f.entries);
    PyMem_Free(f.sorted);
    PyMem_Free(f.starts);
    PyMem_Free(f.items);
    PyMem_Free(f.scratch);
    PyMem_Free(f.slots);
    PyMem_Free(f.hashes);
    PyMem_Free(f.index);
    if (status == 0) return result;
    Py_XDECREF(result);
    if (status < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"fuse", fuse, METH_VARARGS,
     "fuse(runs, norm, weights, rank_scores, in_rank_order, combine='total', factors=None, /)"
     " -> dict | None\n\n"
     "Fuse plain runs by a built-in method, as ef.evaluation's Python path does, float for "
     "float; None when the input is not one this kernel takes."},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fusion", "The built-in fusion methods in C.", 0, module_methods,
};

PyMODINIT_FUNC
PyInit__fusion(void)
{
    return PyModule_Create(&module);
}
