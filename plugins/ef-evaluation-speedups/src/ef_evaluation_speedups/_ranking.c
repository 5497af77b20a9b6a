/* The built-in cutoff measures of a whole run in C, float for float what the pure path gives.
 *
 * score_run(run, qrels, ideals, query_ids, ks, picks, keys, frozen, distinct) scores each query of
 * query_ids as ef.evaluation's lean path does (_scoring/found.py, _scoring/scored.py,
 * _scoring/cutoffs.py::values_at, _scoring/metric_scorer.py::_fused_step):
 *
 * - the query's entry run.get(query_id): None (no entry) scores 0 everywhere; an exact list of
 *   exact str is a ranking, a repeated id keeping its first rank; an exact dict of exact str to
 *   exact float or int is ranked as trec_eval orders it (score descending, ties by doc id
 *   descending, code point order), without ordering it: a relevant id's rank is the number of
 *   ids above it;
 * - the relevant ids are those judged with a grade > 0 in qrels[query_id] (an exact dict of
 *   exact str to exact float or int, as the plan checked); ideals[query_id] is the query's
 *   positive grades, descending (R = its length, the scale its first);
 * - per cutoff k of ks (ascending), in rank order: dcg += grade / scale / log2(rank + 2),
 *   found += 1, total += found / (rank + 1); nDCG = dcg / (the ideal ranking's dcg at k),
 *   recall = found / R, precision = found / k, reciprocal rank = 1 / (first rank + 1) if the
 *   first is within k, AP = total / R; a query with nothing relevant retrieved is 0.0
 *   everywhere;
 * - its values are the measures picks names, pick = measure * len(ks) + the cutoff's index
 *   (measures: 0 nDCG, 1 recall, 2 precision, 3 reciprocal rank, 4 AP), one per key of keys,
 *   in a new `frozen` (a dict subclass).
 *
 * Each IEEE operation is the one Python does, in Python's order (the module is compiled
 * without fused multiply-add), on the same doubles: an int grade or score is converted only
 * within +-2**53, where the conversion is exact and Python's int / int is the division of the
 * two doubles; log2 is the C library's, as Python's math.log2 calls it.
 *
 * It returns (values, depths): per query its frozen values, or None where it declines the
 * query (the pure path then scores it and raises its own error), and the entry's length (of a
 * ranking, its distinct ids when `distinct` is true). A
 * query is declined for: an entry of another type, a ranked id that is not an exact str, a
 * score that is not an exact float or int or is NaN, an int beyond +-2**53 (a grade or score).
 * The whole call is declined (None) for a run that is not an exact dict or a cutoff beyond
 * 2**53. Only MemoryError is raised.
 *
 * Nothing here runs Python code while it walks: it reads exact dicts, lists, strs, floats and
 * ints, whose lookups and comparisons call no Python code.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_grow.h"

#define DECLINED 1 /* a step's result: 0 done, -1 error (exception set), 1 declined */
#define MAX_EXACT_INT (1LL << 53)
#define N_MEASURES 5
#define SCAN_LIMIT 8          /* up to this many scored relevant ids, a scan apiece */
#define SHARED_SLOTS 8192     /* the float objects shared within a call */

typedef struct {
    Py_ssize_t position;
    double grade;
    double score;   /* a scored entry's */
    PyObject *doc;  /* borrowed: a key of the query's judgements */
} Hit;

typedef struct {
    Hit *hits;
    Py_ssize_t n_hits, hits_capacity;
    double *scores; /* a scored entry's values */
    Py_ssize_t scores_capacity;
    PyObject **seen; /* the de-duplication's open-addressing table */
    Py_ssize_t seen_capacity;
    double *log2;
    Py_ssize_t n_log2;
    double *idcg; /* the current ideal list's ideal DCG at each cutoff */
    PyObject *idcg_of; /* borrowed: the ideal list idcg was summed for */
    double *values; /* N_MEASURES x n_ks */
    Py_ssize_t *picks; /* per key, its value's index in values */
    uint64_t shared_bits[SHARED_SLOTS];
    PyObject *shared[SHARED_SLOTS];
    Py_ssize_t n_shared;
} Scratch;


/* An exact float, or an exact int within +-2**53, as the double Python computes with. */
static int
exact_double(PyObject *value, double *out)
{
    if (PyFloat_CheckExact(value)) {
        *out = PyFloat_AS_DOUBLE(value);
        return 0;
    }
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long integer = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow || integer > MAX_EXACT_INT || integer < -MAX_EXACT_INT) {
            return DECLINED;
        }
        if (integer == -1 && PyErr_Occurred()) {
            return -1;
        }
        *out = (double)integer;
        return 0;
    }
    return DECLINED;
}

/* log2(i + 2) for i < n: the discount of rank i, as math.log2 gives it. */
static int
ensure_log2(Scratch *s, Py_ssize_t n)
{
    if (n <= s->n_log2) {
        return 0;
    }
    Py_ssize_t capacity = s->n_log2;
    if (grow((void **)&s->log2, &capacity, n, sizeof(double)) < 0) {
        return -1;
    }
    for (Py_ssize_t i = s->n_log2; i < capacity; i++) {
        s->log2[i] = log2((double)(i + 2));
    }
    s->n_log2 = capacity;
    return 0;
}

static int by_position(const void *a, const void *b);

static int
push_hit(Scratch *s, Py_ssize_t position, double grade, double score, PyObject *doc)
{
    if (grow((void **)&s->hits, &s->hits_capacity, s->n_hits + 1, sizeof(Hit)) < 0) {
        return -1;
    }
    Hit *hit = &s->hits[s->n_hits++];
    hit->position = position;
    hit->grade = grade;
    hit->score = score;
    hit->doc = doc;
    return 0;
}

static inline int
same_str(PyObject *a, PyObject *b)
{
    return a == b || (PyObject_Hash(a) == PyObject_Hash(b) && PyUnicode_Compare(a, b) == 0);
}

/* The hits' positions in ranked[0 .. n) de-duplicated (a later copy of an id dropped); returns
 * how many distinct ids ranked[0 .. n) holds, or -1 on error. */
static Py_ssize_t
deduplicate(Scratch *s, PyObject *ranked, Py_ssize_t n)
{
    Py_ssize_t size = 16;
    while (size < 2 * n) {
        size *= 2;
    }
    Py_ssize_t capacity = s->seen_capacity;
    if (grow((void **)&s->seen, &capacity, size, sizeof(PyObject *)) < 0) {
        return -1;
    }
    s->seen_capacity = capacity;
    PyObject **seen = s->seen;
    memset(seen, 0, (size_t)size * sizeof(PyObject *));
    size_t mask = (size_t)size - 1;
    Py_ssize_t shift = 0, kept = 0, next = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(ranked, i);
        size_t slot = (size_t)PyObject_Hash(item) & mask;
        int repeated = 0;
        while (seen[slot] != NULL) {
            if (same_str(seen[slot], item)) {
                repeated = 1;
                break;
            }
            slot = (slot + 1) & mask;
        }
        int is_hit = next < s->n_hits && s->hits[next].position == i;
        if (repeated) {
            shift++;
        }
        else {
            seen[slot] = item;
            if (is_hit) {
                Hit hit = s->hits[next];
                hit.position = i - shift;
                s->hits[kept++] = hit;
            }
        }
        if (is_hit) {
            next++;
        }
    }
    s->n_hits = kept;
    return n - shift;
}

/* The relevant ids of a long ranking with few of them: each one's first rank, by a scan of the
 * ranking per relevant id (an identity or hash test per id: a few ns), unsorted. */
static int
scan_ranking(Scratch *s, PyObject *ranked, PyObject *judged)
{
    Py_ssize_t n = PyList_GET_SIZE(ranked), pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(judged, &pos, &key, &value)) {
        double grade;
        int step = exact_double(value, &grade);
        if (step != 0) {
            return step;
        }
        if (!(grade > 0.0)) {
            continue;
        }
        Py_hash_t hash = PyObject_Hash(key);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = PyList_GET_ITEM(ranked, i);
            if (item == key ||
                (PyObject_Hash(item) == hash && PyUnicode_Compare(item, key) == 0)) {
                if (push_hit(s, i, grade, 0.0, NULL) < 0) {
                    return -1;
                }
                break;
            }
        }
    }
    return 0;
}

/* The relevant ids of a ranking: where they landed and their grades, in rank order; with
 * `distinct`, how many distinct ids it holds into *depth. A ranking 16 or more times longer
 * than the query's relevant ids is scanned once per relevant id; any other is walked once,
 * each id looked up in the judgements. */
static int
found_in_ranking(Scratch *s, PyObject *ranked, PyObject *judged, Py_ssize_t n_relevant,
                 int distinct, Py_ssize_t *depth)
{
    Py_ssize_t n = PyList_GET_SIZE(ranked);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(ranked, i);
        if (!PyUnicode_CheckExact(item)) {
            return DECLINED;
        }
    }
    if (n >= 16 * n_relevant) {
        int step = scan_ranking(s, ranked, judged);
        if (step != 0) {
            return step;
        }
        qsort(s->hits, (size_t)s->n_hits, sizeof(Hit), by_position);
    }
    else {
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *grade = PyDict_GetItemWithError(judged, PyList_GET_ITEM(ranked, i));
            if (grade == NULL) {
                if (PyErr_Occurred()) {
                    return -1;
                }
                continue;
            }
            double value;
            int step = exact_double(grade, &value);
            if (step != 0) {
                return step;
            }
            if (value > 0.0 && push_hit(s, i, value, 0.0, NULL) < 0) {
                return -1;
            }
        }
    }
    *depth = n;
    if (distinct) {
        *depth = deduplicate(s, ranked, n);
        return *depth < 0 ? -1 : 0;
    }
    if (s->n_hits == 0) {
        return 0;
    }
    /* A repeated id shifts the ranks after it: only the ids down to the last relevant one
     * matter (a relevant id listed twice is a repeat within them). */
    return deduplicate(s, ranked, s->hits[s->n_hits - 1].position + 1) < 0 ? -1 : 0;
}

static int
by_position(const void *a, const void *b)
{
    Py_ssize_t pa = ((const Hit *)a)->position, pb = ((const Hit *)b)->position;
    return (pa > pb) - (pa < pb);
}

static int
by_value(const void *a, const void *b)
{
    double va = *(const double *)a, vb = *(const double *)b;
    return (va > vb) - (va < vb);
}

/* The first index of the ascending `values` whose value is > `score` (or >= with `or_equal`). */
static Py_ssize_t
bisect(const double *values, Py_ssize_t n, double score, int or_equal)
{
    Py_ssize_t low = 0, high = n;
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2;
        if (or_equal ? values[middle] < score : values[middle] <= score) {
            low = middle + 1;
        }
        else {
            high = middle;
        }
    }
    return low;
}

/* How many ids share `score` and rank above `doc` (trec_eval: larger ids first). */
static Py_ssize_t
tied_above(PyObject *scores, double score, PyObject *doc)
{
    Py_ssize_t pos = 0, above = 0;
    PyObject *key, *value;
    while (PyDict_Next(scores, &pos, &key, &value)) {
        double v;
        (void)exact_double(value, &v); /* checked before */
        if (v == score && PyUnicode_Compare(key, doc) > 0) {
            above++;
        }
    }
    return above;
}

/* The relevant ids of a query's {doc_id: score}: their ranks in trec_eval's order, and grades. */
static int
found_in_scores(Scratch *s, PyObject *scores, PyObject *judged)
{
    Py_ssize_t n = PyDict_GET_SIZE(scores);
    if (grow((void **)&s->scores, &s->scores_capacity, n + 1, sizeof(double)) < 0) {
        return -1;
    }
    Py_ssize_t pos = 0, at = 0;
    PyObject *key, *value;
    while (PyDict_Next(scores, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            return DECLINED;
        }
        int step = exact_double(value, &s->scores[at]);
        if (step != 0) {
            return step;
        }
        if (isnan(s->scores[at])) {
            return DECLINED; /* the pure path names the NaN */
        }
        at++;
    }
    pos = 0;
    while (PyDict_Next(judged, &pos, &key, &value)) {
        double grade;
        int step = exact_double(value, &grade);
        if (step != 0) {
            return step;
        }
        if (!(grade > 0.0)) {
            continue;
        }
        PyObject *score = PyDict_GetItemWithError(scores, key);
        if (score == NULL) {
            if (PyErr_Occurred()) {
                return -1;
            }
            continue;
        }
        double v;
        (void)exact_double(score, &v);
        if (push_hit(s, 0, grade, v, key) < 0) {
            return -1;
        }
    }
    if (s->n_hits == 0) {
        return 0;
    }
    if (s->n_hits > SCAN_LIMIT) {
        qsort(s->scores, (size_t)n, sizeof(double), by_value);
    }
    for (Py_ssize_t h = 0; h < s->n_hits; h++) {
        Hit *hit = &s->hits[h];
        Py_ssize_t above = 0, tied = 0;
        if (s->n_hits > SCAN_LIMIT) {
            Py_ssize_t at_or_below = bisect(s->scores, n, hit->score, 0);
            above = n - at_or_below;
            tied = at_or_below - bisect(s->scores, n, hit->score, 1);
        }
        else {
            for (Py_ssize_t i = 0; i < n; i++) {
                double v = s->scores[i];
                above += v > hit->score;
                tied += v == hit->score;
            }
        }
        hit->position = above + (tied > 1 ? tied_above(scores, hit->score, hit->doc) : 0);
    }
    qsort(s->hits, (size_t)s->n_hits, sizeof(Hit), by_position);
    return 0;
}

/* The ideal DCG at each cutoff of the positive grades `ideal`, descending (not empty), each
 * divided by `scale`, its first. */
static int
ideal_dcgs(Scratch *s, PyObject *ideal, double scale, const Py_ssize_t *ks, Py_ssize_t n_ks)
{
    Py_ssize_t n = PyList_GET_SIZE(ideal);
    int step;
    Py_ssize_t reach = n < ks[n_ks - 1] ? n : ks[n_ks - 1];
    if (ensure_log2(s, reach) < 0) {
        return -1;
    }
    double dcg = 0.0;
    Py_ssize_t j = 0;
    for (Py_ssize_t c = 0; c < n_ks; c++) {
        for (; j < reach && j < ks[c]; j++) {
            double grade;
            step = exact_double(PyList_GET_ITEM(ideal, j), &grade);
            if (step != 0) {
                return step;
            }
            dcg += grade / scale / s->log2[j];
        }
        s->idcg[c] = dcg; /* values_at's dcg / 1.0 */
    }
    return 0;
}

/* The five measures at every cutoff, from the hits (rank order), into s->values. */
static int
measures(Scratch *s, PyObject *ideal, const Py_ssize_t *ks, Py_ssize_t n_ks)
{
    Py_ssize_t n_relevant = PyList_GET_SIZE(ideal);
    double scale;
    int step = exact_double(PyList_GET_ITEM(ideal, 0), &scale);
    if (step != 0) {
        return step;
    }
    if (ideal != s->idcg_of) {
        step = ideal_dcgs(s, ideal, scale, ks, n_ks);
        if (step != 0) {
            s->idcg_of = NULL;
            return step;
        }
        s->idcg_of = ideal;
    }
    Hit *hits = s->hits;
    Py_ssize_t n_found = s->n_hits, first = hits[0].position;
    if (ensure_log2(s, hits[n_found - 1].position + 1) < 0) {
        return -1;
    }
    double reciprocal = 1.0 / (double)(first + 1);
    double dcg = 0.0, total = 0.0;
    Py_ssize_t j = 0;
    double *v = s->values;
    for (Py_ssize_t c = 0; c < n_ks; c++) {
        Py_ssize_t k = ks[c];
        while (j < n_found && hits[j].position < k) {
            Py_ssize_t position = hits[j].position;
            dcg += hits[j].grade / scale / s->log2[position];
            j++;
            total += (double)j / (double)(position + 1);
        }
        v[0 * n_ks + c] = dcg / s->idcg[c];
        v[1 * n_ks + c] = (double)j / (double)n_relevant;
        v[2 * n_ks + c] = (double)j / (double)k;
        v[3 * n_ks + c] = first < k ? reciprocal : 0.0;
        v[4 * n_ks + c] = total / (double)n_relevant;
    }
    return 0;
}

/* The one float object of `value` within the call (new reference). */
static PyObject *
shared_float(Scratch *s, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    size_t slot = (size_t)((bits ^ (bits >> 29) ^ (bits >> 47)) * 0x9E3779B97F4A7C15ULL >> 51);
    slot &= SHARED_SLOTS - 1;
    while (s->shared[slot] != NULL) {
        if (s->shared_bits[slot] == bits) {
            Py_INCREF(s->shared[slot]);
            return s->shared[slot];
        }
        slot = (slot + 1) & (SHARED_SLOTS - 1);
    }
    PyObject *made = PyFloat_FromDouble(value);
    if (made == NULL) {
        return NULL;
    }
    if (s->n_shared < SHARED_SLOTS / 2) {
        s->shared[slot] = made;
        s->shared_bits[slot] = bits;
        s->n_shared++;
        Py_INCREF(made);
    }
    return made;
}

static PyObject *
frozen_values(Scratch *s, PyTypeObject *frozen, PyObject *keys, const Py_ssize_t *picks,
              int zero, PyObject *empty)
{
    PyObject *values = frozen->tp_new(frozen, empty, NULL);
    if (values == NULL) {
        return NULL;
    }
    for (Py_ssize_t at = 0; at < PyTuple_GET_SIZE(keys); at++) {
        PyObject *number = shared_float(s, zero ? 0.0 : s->values[picks[at]]);
        if (number == NULL || PyDict_SetItem(values, PyTuple_GET_ITEM(keys, at), number) < 0) {
            Py_XDECREF(number);
            Py_DECREF(values);
            return NULL;
        }
        Py_DECREF(number);
    }
    return values;
}

static void
release(Scratch *s)
{
    PyMem_Free(s->hits);
    PyMem_Free(s->scores);
    PyMem_Free(s->seen);
    PyMem_Free(s->log2);
    PyMem_Free(s->idcg);
    PyMem_Free(s->values);
    PyMem_Free(s->picks);
    for (Py_ssize_t i = 0; i < SHARED_SLOTS; i++) {
        Py_XDECREF(s->shared[i]);
    }
    PyMem_Free(s);
}

static PyObject *
score_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "score_run() takes exactly 9 arguments");
        return NULL;
    }
    PyObject *run = args[0], *qrels = args[1], *ideals = args[2], *query_ids = args[3];
    PyObject *ks_given = args[4], *picks_given = args[5], *keys = args[6], *frozen = args[7];
    int distinct = PyObject_IsTrue(args[8]);
    if (distinct < 0) {
        return NULL;
    }
    if (!PyDict_CheckExact(run) || !PyDict_CheckExact(qrels) || !PyDict_CheckExact(ideals) ||
        !PyList_CheckExact(query_ids) || !PyTuple_CheckExact(ks_given) ||
        !PyTuple_CheckExact(picks_given) || !PyTuple_CheckExact(keys) || !PyType_Check(frozen) ||
        !PyType_IsSubtype((PyTypeObject *)frozen, &PyDict_Type)) {
        Py_RETURN_NONE;
    }
    Py_ssize_t n_ks = PyTuple_GET_SIZE(ks_given), n_keys = PyTuple_GET_SIZE(keys);
    if (n_ks == 0 || n_ks > 64 || n_keys == 0 || PyTuple_GET_SIZE(picks_given) != n_keys) {
        Py_RETURN_NONE;
    }
    Py_ssize_t ks[64];
    for (Py_ssize_t c = 0; c < n_ks; c++) {
        PyObject *k = PyTuple_GET_ITEM(ks_given, c);
        long long value = PyLong_CheckExact(k) ? PyLong_AsLongLong(k) : -1;
        if (value == -1 && PyErr_Occurred()) {
            PyErr_Clear();
        }
        if (value < 1 || value > MAX_EXACT_INT || (c > 0 && value <= ks[c - 1])) {
            Py_RETURN_NONE;
        }
        ks[c] = (Py_ssize_t)value;
    }
    Scratch *s = PyMem_Calloc(1, sizeof(Scratch));
    if (s == NULL) {
        return PyErr_NoMemory();
    }
    s->picks = PyMem_Calloc((size_t)n_keys, sizeof(Py_ssize_t));
    if (s->picks == NULL) {
        release(s);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t at = 0; at < n_keys; at++) {
        PyObject *pick = PyTuple_GET_ITEM(picks_given, at);
        long long value = PyLong_CheckExact(pick) ? PyLong_AsLongLong(pick) : -1;
        if (value == -1 && PyErr_Occurred()) {
            PyErr_Clear();
        }
        if (value < 0 || value >= N_MEASURES * n_ks || !PyUnicode_CheckExact(PyTuple_GET_ITEM(keys, at))) {
            release(s);
            Py_RETURN_NONE;
        }
        s->picks[at] = (Py_ssize_t)value;
    }
    Py_ssize_t n_queries = PyList_GET_SIZE(query_ids);
    PyObject *empty = PyTuple_New(0);
    PyObject *out = PyList_New(n_queries), *depths = PyList_New(n_queries);
    PyObject *zeros = NULL;
    s->idcg = PyMem_Calloc((size_t)n_ks, sizeof(double));
    s->values = PyMem_Calloc((size_t)n_ks * N_MEASURES, sizeof(double));
    if (empty == NULL || out == NULL || depths == NULL || s->idcg == NULL || s->values == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto error;
    }
    for (Py_ssize_t q = 0; q < n_queries; q++) {
        PyObject *query_id = PyList_GET_ITEM(query_ids, q);
        PyObject *judged = PyDict_GetItemWithError(qrels, query_id);
        PyObject *ideal = judged ? PyDict_GetItemWithError(ideals, query_id) : NULL;
        PyObject *entry = ideal ? PyDict_GetItemWithError(run, query_id) : NULL;
        if (PyErr_Occurred()) {
            goto error;
        }
        Py_ssize_t depth = 0;
        int step = DECLINED;
        s->n_hits = 0;
        if (judged == NULL || ideal == NULL || !PyDict_CheckExact(judged) ||
            !PyList_CheckExact(ideal) || PyList_GET_SIZE(ideal) == 0) {
            step = DECLINED;
        }
        else if (entry == NULL) {
            step = 0;
        }
        else if (PyList_CheckExact(entry)) {
            step = found_in_ranking(s, entry, judged, PyList_GET_SIZE(ideal), distinct, &depth);
        }
        else if (PyDict_CheckExact(entry)) {
            depth = PyDict_GET_SIZE(entry);
            step = found_in_scores(s, entry, judged);
        }
        if (step == 0 && s->n_hits > 0) {
            step = measures(s, ideal, ks, n_ks);
        }
        if (step < 0) {
            goto error;
        }
        PyObject *values;
        if (step == DECLINED) {
            values = Py_NewRef(Py_None);
            depth = -1;
        }
        else if (s->n_hits == 0) {
            /* Read-only values: one object for every query that scores 0. */
            if (zeros == NULL) {
                zeros = frozen_values(s, (PyTypeObject *)frozen, keys, s->picks, 1, empty);
                if (zeros == NULL) {
                    goto error;
                }
            }
            values = Py_NewRef(zeros);
        }
        else {
            values = frozen_values(s, (PyTypeObject *)frozen, keys, s->picks, 0, empty);
            if (values == NULL) {
                goto error;
            }
        }
        PyList_SET_ITEM(out, q, values);
        PyObject *counted = PyLong_FromSsize_t(depth);
        if (counted == NULL) {
            goto error;
        }
        PyList_SET_ITEM(depths, q, counted);
    }
    Py_DECREF(empty);
    Py_XDECREF(zeros);
    release(s);
    PyObject *result = PyTuple_Pack(2, out, depths);
    Py_DECREF(out);
    Py_DECREF(depths);
    return result;
error:
    Py_XDECREF(empty);
    Py_XDECREF(zeros);
    Py_XDECREF(out);
    Py_XDECREF(depths);
    release(s);
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"score_run", (PyCFunction)(void (*)(void))score_run, METH_FASTCALL,
     "score_run(run, qrels, ideals, query_ids, ks, picks, keys, frozen, distinct, /)\n"
     "    -> tuple[list[dict[str, float] | None], list[int]] | None\n\n"
     "The built-in cutoff measures of each query of a run, float for float the pure path's; "
     "None for a query (or a call) it declines."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ranking", "The built-in cutoff measures of a whole run in C.", 0,
    module_methods,
};

PyMODINIT_FUNC
PyInit__ranking(void)
{
    return PyModule_Create(&module);
}
