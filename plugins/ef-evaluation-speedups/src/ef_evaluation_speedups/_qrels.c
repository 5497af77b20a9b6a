/* A first pass over plain qrels in C: the digest's bytes and each query's ideal grades in one walk.
 *
 * qrels_pass(qrels) reads {query_id: {doc_id: grade}} once and returns
 * (marshal.dumps(qrels, 2), {query_id: ideal grades}) when the qrels is plain as
 * ef.evaluation's _scoring/grades.py::plain_ideals defines it: a dict (exactly) of dicts, exact
 * str ids, exact float or int grades (a bool or any subclass is not plain), all finite.
 *
 * The bytes are what CPython 3.11's Python/marshal.c writes at version 2, which makes no
 * back-references: a dict is '{', each key and value, then '0' (TYPE_NULL), in the dict's own
 * order; a str is 'u', its UTF-8 length as 4 little-endian bytes, then the UTF-8; an int from
 * -2**31 to 2**31 - 1 is 'i' and 4 little-endian bytes (two's complement); a larger one is 'l',
 * its count of 15-bit digits (negative for a negative int) as 4 bytes, then those digits of its
 * absolute value, least significant first, 2 little-endian bytes each; a float is 'g' and its 8
 * IEEE bytes, little-endian.
 *
 * The ideal grades of a query are its positive grades (> 0), descending, in a stable order
 * (equal grades keep their judgement order; 1 and 1.0 stay the objects they are): what
 * plain_ideals builds with sorted(grades, reverse=True). They are grade objects of the qrels; a
 * query whose grades are the previous one's, type for type, shares its list.
 *
 * It declines (returns None) for anything plain_ideals would not take, and also where it could
 * take it but this pass does not follow: an int beyond +-2**53 (where comparing it as a double
 * could be inexact), grades whose magnitudes add up to 2**1023 or more (plain_ideals refuses
 * qrels whose grades' sum overflows, a float's range ending just below 2**1024: below 2**1023,
 * no sum of the grades in any order comes near it), a str without a UTF-8 form (a lone surrogate, which marshal writes with "surrogatepass"), a str whose UTF-8
 * is longer than 2**31 - 1 bytes. Python's own path then runs. Only MemoryError is raised.
 *
 * The walk runs no Python code: it reads only exact dicts, strs, floats and ints, and allocates
 * only raw memory, so nothing can change the qrels during it. Every object the result is built
 * from afterwards (when allocating Python objects may run a collector's finalizers) is held by a
 * strong reference taken during the walk.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_grow.h"

#define DECLINED 1 /* a step's result: 0 done, -1 error (exception set), 1 declined */
#define MAX_EXACT_INT (1LL << 53)
#define INSERTION_SORT_MAX 16

/* marshal's type codes (Python/marshal.c) */
#define TYPE_NULL '0'
#define TYPE_INT 'i'
#define TYPE_LONG 'l'
#define TYPE_BINARY_FLOAT 'g'
#define TYPE_UNICODE 'u'
#define TYPE_DICT '{'

typedef struct {
    char *data;
    size_t size;
    size_t capacity;
} Buffer;

typedef struct {
    double key;
    PyObject *grade; /* a strong reference */
} Positive;

typedef struct {
    PyObject *query_id; /* a strong reference */
    Py_ssize_t start;   /* its positives: positives[start : start + count] */
    Py_ssize_t count;
} Query;

typedef struct {
    Buffer out;
    Positive *positives;
    Py_ssize_t n_positives, positives_capacity;
    Query *queries;
    Py_ssize_t n_queries, queries_capacity;
    Positive *scratch; /* the merge sort's */
    Py_ssize_t scratch_capacity;
    double magnitudes; /* the sum of the grades' absolute values; NaN or inf for such a grade */
} Pass;


static int
reserve(Buffer *out, size_t more)
{
    if (out->capacity - out->size >= more) {
        return 0;
    }
    size_t capacity = out->capacity ? out->capacity : 4096;
    while (capacity - out->size < more) {
        if (capacity > (size_t)PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        capacity *= 2;
    }
    char *grown = PyMem_Realloc(out->data, capacity);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    out->data = grown;
    out->capacity = capacity;
    return 0;
}

static inline void
put_u32(char *at, uint32_t value)
{
    at[0] = (char)(value & 0xff);
    at[1] = (char)((value >> 8) & 0xff);
    at[2] = (char)((value >> 16) & 0xff);
    at[3] = (char)((value >> 24) & 0xff);
}

static int
write_byte(Buffer *out, char byte)
{
    if (reserve(out, 1) < 0) {
        return -1;
    }
    out->data[out->size++] = byte;
    return 0;
}

/* A str as marshal's TYPE_UNICODE; declined without a UTF-8 form or beyond 2**31 - 1 bytes. */
static int
write_str(Buffer *out, PyObject *text)
{
    Py_ssize_t length;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &length);
    if (utf8 == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            PyErr_Clear(); /* a lone surrogate: marshal writes it with "surrogatepass" */
            return DECLINED;
        }
        return -1;
    }
    if (length > INT32_MAX) {
        return DECLINED;
    }
    if (reserve(out, 5 + (size_t)length) < 0) {
        return -1;
    }
    char *at = out->data + out->size;
    at[0] = TYPE_UNICODE;
    put_u32(at + 1, (uint32_t)length);
    memcpy(at + 5, utf8, (size_t)length);
    out->size += 5 + (size_t)length;
    return 0;
}

/* An int within +-2**53 as marshal's TYPE_INT or TYPE_LONG. */
static int
write_int(Buffer *out, long long value)
{
    if (value >= INT32_MIN && value <= INT32_MAX) {
        if (reserve(out, 5) < 0) {
            return -1;
        }
        char *at = out->data + out->size;
        at[0] = TYPE_INT;
        put_u32(at + 1, (uint32_t)(int32_t)value);
        out->size += 5;
        return 0;
    }
    /* Not 0 here: at least one 15-bit digit, at most four (2**53 < 2**60). */
    unsigned long long magnitude = value < 0 ? 0ULL - (unsigned long long)value
                                             : (unsigned long long)value;
    int32_t digits = 0;
    for (unsigned long long rest = magnitude; rest; rest >>= 15) {
        digits++;
    }
    if (reserve(out, 5 + 2 * (size_t)digits) < 0) {
        return -1;
    }
    char *at = out->data + out->size;
    at[0] = TYPE_LONG;
    put_u32(at + 1, (uint32_t)(value < 0 ? -digits : digits));
    at += 5;
    for (int32_t i = 0; i < digits; i++, magnitude >>= 15) {
        at[2 * i] = (char)(magnitude & 0xff);
        at[2 * i + 1] = (char)((magnitude >> 8) & 0x7f);
    }
    out->size += 5 + 2 * (size_t)digits;
    return 0;
}

static int
write_float(Buffer *out, double value)
{
    if (reserve(out, 9) < 0) {
        return -1;
    }
    char *at = out->data + out->size;
    at[0] = TYPE_BINARY_FLOAT;
    if (PyFloat_Pack8(value, at + 1, 1) < 0) {
        return -1;
    }
    out->size += 9;
    return 0;
}

/* A grade written, and its value as a double in *key; declined if it is not plain. */
static int
write_grade(Pass *pass, PyObject *grade, double *key)
{
    if (PyFloat_CheckExact(grade)) {
        double value = PyFloat_AS_DOUBLE(grade);
        pass->magnitudes += fabs(value);
        *key = value;
        return write_float(&pass->out, value);
    }
    if (PyLong_CheckExact(grade)) {
        int overflow;
        long long value = PyLong_AsLongLongAndOverflow(grade, &overflow);
        if (overflow || value > MAX_EXACT_INT || value < -MAX_EXACT_INT) {
            return DECLINED;
        }
        if (value == -1 && PyErr_Occurred()) {
            return -1;
        }
        *key = (double)value; /* exact within +-2**53: compares as the int does */
        pass->magnitudes += fabs(*key);
        return write_int(&pass->out, value);
    }
    return DECLINED; /* a bool, a subclass, anything else */
}

/* A stable sort of the positives, grade descending: equal grades keep their order. */
static void
insertion_sort(Positive *items, Py_ssize_t n)
{
    for (Py_ssize_t i = 1; i < n; i++) {
        Positive item = items[i];
        Py_ssize_t j = i;
        while (j > 0 && items[j - 1].key < item.key) {
            items[j] = items[j - 1];
            j--;
        }
        items[j] = item;
    }
}

static void
merge_sort(Positive *items, Positive *scratch, Py_ssize_t n)
{
    if (n <= INSERTION_SORT_MAX) {
        insertion_sort(items, n);
        return;
    }
    Py_ssize_t half = n / 2;
    merge_sort(items, scratch, half);
    merge_sort(items + half, scratch, n - half);
    if (!(items[half - 1].key < items[half].key)) {
        return; /* already in order */
    }
    memcpy(scratch, items, (size_t)half * sizeof(Positive));
    Py_ssize_t left = 0, right = half, to = 0;
    while (left < half && right < n) {
        /* the left one first unless the right one is strictly larger: stable */
        items[to++] = items[right].key > scratch[left].key ? items[right++] : scratch[left++];
    }
    while (left < half) {
        items[to++] = scratch[left++];
    }
}

static int
sort_positives(Pass *pass, Positive *items, Py_ssize_t n)
{
    if (n > INSERTION_SORT_MAX) {
        if (grow((void **)&pass->scratch, &pass->scratch_capacity, n / 2, sizeof(Positive)) < 0) {
            return -1;
        }
        merge_sort(items, pass->scratch, n);
    }
    else {
        insertion_sort(items, n);
    }
    return 0;
}

/* One query's judgements: written, checked, and its positives kept and sorted. */
static int
walk_query(Pass *pass, PyObject *query_id, PyObject *judged)
{
    if (!PyDict_CheckExact(judged)) {
        return DECLINED;
    }
    int status = write_str(&pass->out, query_id);
    if (status != 0 || (status = write_byte(&pass->out, TYPE_DICT)) != 0) {
        return status;
    }
    if (grow((void **)&pass->queries, &pass->queries_capacity, pass->n_queries + 1,
             sizeof(Query)) < 0) {
        return -1;
    }
    Py_ssize_t start = pass->n_positives;
    Py_ssize_t position = 0;
    PyObject *doc_id, *grade;
    while (PyDict_Next(judged, &position, &doc_id, &grade)) {
        double key;
        if (!PyUnicode_CheckExact(doc_id)) {
            return DECLINED;
        }
        if ((status = write_str(&pass->out, doc_id)) != 0 ||
            (status = write_grade(pass, grade, &key)) != 0) {
            return status;
        }
        if (key > 0) {
            if (grow((void **)&pass->positives, &pass->positives_capacity,
                     pass->n_positives + 1, sizeof(Positive)) < 0) {
                return -1;
            }
            Py_INCREF(grade);
            pass->positives[pass->n_positives++] = (Positive){key, grade};
        }
    }
    if ((status = write_byte(&pass->out, TYPE_NULL)) != 0) {
        return status;
    }
    Py_ssize_t count = pass->n_positives - start;
    if (sort_positives(pass, pass->positives + start, count) < 0) {
        return -1;
    }
    Py_INCREF(query_id);
    pass->queries[pass->n_queries++] = (Query){query_id, start, count};
    return 0;
}

static int
walk(Pass *pass, PyObject *qrels)
{
    if (!PyDict_CheckExact(qrels)) {
        return DECLINED;
    }
    int status = write_byte(&pass->out, TYPE_DICT);
    Py_ssize_t position = 0;
    PyObject *query_id, *judged;
    while (status == 0 && PyDict_Next(qrels, &position, &query_id, &judged)) {
        status = PyUnicode_CheckExact(query_id) ? walk_query(pass, query_id, judged) : DECLINED;
    }
    if (status == 0 && !(pass->magnitudes < ldexp(1.0, 1023))) {
        return DECLINED; /* a NaN or an infinity among the grades, or sums that may overflow */
    }
    return status == 0 ? write_byte(&pass->out, TYPE_NULL) : status;
}

/* Whether two positive grades are the same number of the same type (1 and 1.0 are not). */
static int
same_grade(PyObject *a, PyObject *b)
{
    if (a == b) {
        return 1;
    }
    if (Py_TYPE(a) != Py_TYPE(b)) {
        return 0;
    }
    if (PyFloat_CheckExact(a)) {
        return PyFloat_AS_DOUBLE(a) == PyFloat_AS_DOUBLE(b);
    }
    return PyObject_RichCompareBool(a, b, Py_EQ) == 1; /* exact ints: never an error */
}

/* Whether a query's positives are, grade by grade, those of the list ``kept``. */
static int
same_grades(PyObject *kept, Positive *positives, Py_ssize_t count)
{
    if (kept == NULL || PyList_GET_SIZE(kept) != count) {
        return 0;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        if (!same_grade(PyList_GET_ITEM(kept, j), positives[j].grade)) {
            return 0;
        }
    }
    return 1;
}

/* {query_id: [its positives]}, each reference the walk took handed over to the result. A query
 * whose grades are the previous query's (same types, same values) shares its list: most queries
 * of a large qrels have one relevant document of one grade, and the lists are never changed. */
static PyObject *
ideals_of(Pass *pass)
{
    PyObject *ideals = PyDict_New();
    if (ideals == NULL) {
        return NULL;
    }
    PyObject *previous = NULL; /* borrowed from ``ideals`` */
    for (Py_ssize_t i = 0; i < pass->n_queries; i++) {
        Query *query = &pass->queries[i];
        Positive *positives = &pass->positives[query->start];
        PyObject *grades;
        if (same_grades(previous, positives, query->count)) {
            grades = Py_NewRef(previous); /* the walk's references go in pass_free */
        }
        else {
            grades = PyList_New(query->count);
            if (grades == NULL) {
                Py_DECREF(ideals);
                return NULL;
            }
            for (Py_ssize_t j = 0; j < query->count; j++) {
                PyList_SET_ITEM(grades, j, positives[j].grade); /* the reference moves */
                positives[j].grade = NULL;
            }
        }
        int failed = PyDict_SetItem(ideals, query->query_id, grades);
        Py_DECREF(grades);
        if (failed) {
            Py_DECREF(ideals);
            return NULL;
        }
        previous = grades; /* alive: ``ideals`` holds it */
    }
    return ideals;
}

static void
pass_free(Pass *pass)
{
    for (Py_ssize_t i = 0; i < pass->n_positives; i++) {
        Py_XDECREF(pass->positives[i].grade);
    }
    for (Py_ssize_t i = 0; i < pass->n_queries; i++) {
        Py_DECREF(pass->queries[i].query_id);
    }
    PyMem_Free(pass->positives);
    PyMem_Free(pass->queries);
    PyMem_Free(pass->scratch);
    PyMem_Free(pass->out.data);
}

static PyObject *
qrels_pass(PyObject *module, PyObject *qrels)
{
    Pass pass = {0};
    PyObject *result = NULL;
    int status = walk(&pass, qrels);
    if (status == DECLINED) {
        result = Py_NewRef(Py_None);
    }
    else if (status == 0) {
        PyObject *written = PyBytes_FromStringAndSize(pass.out.data, (Py_ssize_t)pass.out.size);
        PyObject *ideals = written == NULL ? NULL : ideals_of(&pass);
        if (ideals != NULL) {
            result = PyTuple_Pack(2, written, ideals);
        }
        Py_XDECREF(written);
        Py_XDECREF(ideals);
    }
    pass_free(&pass);
    return result;
}

static PyMethodDef module_methods[] = {
    {"qrels_pass", qrels_pass, METH_O,
     "qrels_pass(qrels, /) -> tuple[bytes, dict[str, list[float]]] | None\n\n"
     "marshal.dumps(qrels, 2) and each query's positive grades, descending (a stable sort), in "
     "one walk over plain qrels; None when the qrels is not one this pass takes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_qrels", "A first pass over plain qrels in C.", 0, module_methods,
};

PyMODINIT_FUNC
PyInit__qrels(void)
{
    return PyModule_Create(&module);
}
