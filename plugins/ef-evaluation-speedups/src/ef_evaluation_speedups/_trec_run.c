/* A TREC run file parser in C: the same dict the built-in reader builds, several times faster.
 *
 * A line is split on "\n" only and its columns on whitespace, as str.split() does; only the
 * query id (column 1), doc id (column 3) and score (column 5) are kept. Lines that are pure
 * ASCII are handled here; any other line is decoded and split by Python itself, so what counts
 * as whitespace never differs from the built-in reader. A score must be an ASCII decimal,
 * [+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?, and finite; its value is float()'s. A line longer
 * than MAX_LINE_BYTES (its line end not counted) is refused, so the bytes held for an unfinished
 * line stay bounded and parsing stays linear in the file's size. Any line the built-in reader
 * would reject raises LineError instead, and the caller lets the built-in reader report it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <string.h>

/* The ASCII bytes str.split() treats as whitespace: \t \n \v \f \r, \x1c-\x1f and space. */
static unsigned char is_space[256];

static PyObject *LineError;

/* The longest line accepted, in bytes: ef.evaluation's limit for TREC files. */
#define MAX_LINE_BYTES ((Py_ssize_t)1 << 20)

typedef struct {
    PyObject_HEAD
    PyObject *table;    /* {query_id: {doc_id: score}} */
    PyObject *current;  /* the last query's inner dict (also in table; held, since the caller
                           may take it out of table between feeds) */
    char *qid;          /* the last query id, UTF-8 */
    Py_ssize_t qid_len;
    Py_ssize_t qid_capacity;
    Py_ssize_t lines;   /* lines read so far */
    Py_ssize_t blank;   /* blank lines among them */
    Py_ssize_t groups;  /* runs of consecutive lines of one query: as many as queries when the
                           file is grouped by query, more when a query comes back */
} RunParser;

static const double powers_of_ten[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Clinger's fast path. A decimal whose digits make an integer of at most 2**53, scaled by a
 * power of ten up to 1e22, is one IEEE multiplication or division of two exactly represented
 * doubles, hence correctly rounded: the value float() gives. Returns 0 and sets *out, or -1
 * when the text is not such a decimal and needs the general parser. */
static int
fast_decimal(const char *s, Py_ssize_t len, double *out)
{
#if FLT_EVAL_METHOD != 0
    return -1; /* extended-precision arithmetic would round twice */
#else
    Py_ssize_t i = 0;
    int negative = 0, digits = 0, exponent = 0;
    unsigned long long mantissa = 0;
    if (i < len && (s[i] == '+' || s[i] == '-')) {
        negative = s[i] == '-';
        i++;
    }
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
        if (mantissa >= 100000000000000000ULL) return -1;
        mantissa = mantissa * 10 + (unsigned)(s[i] - '0');
    }
    if (i < len && s[i] == '.') {
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++, exponent--) {
            if (mantissa >= 100000000000000000ULL) return -1;
            mantissa = mantissa * 10 + (unsigned)(s[i] - '0');
        }
    }
    if (digits == 0) return -1;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        int exp_negative = 0, exp_digits = 0, value = 0;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) {
            exp_negative = s[i] == '-';
            i++;
        }
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, exp_digits++) {
            if (value > 1000) return -1;
            value = value * 10 + (s[i] - '0');
        }
        if (exp_digits == 0) return -1;
        exponent += exp_negative ? -value : value;
    }
    if (i != len || mantissa > (1ULL << 53) || exponent < -22 || exponent > 22) return -1;
    double value = (double)mantissa;
    value = exponent < 0 ? value / powers_of_ten[-exponent] : value * powers_of_ten[exponent];
    *out = negative ? -value : value;
    return 0;
#endif
}

static Py_ssize_t
skip_digits(const char *s, Py_ssize_t i, Py_ssize_t len)
{
    while (i < len && s[i] >= '0' && s[i] <= '9') i++;
    return i;
}

/* Whether s is [+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)? with ASCII digits: the only
 * spelling of a number ef.evaluation reads (float() also takes underscores, inf, nan and
 * non-ASCII digits; trec_eval reads those otherwise). */
static int
is_decimal(const char *s, Py_ssize_t len)
{
    Py_ssize_t i = 0, start;
    if (i < len && (s[i] == '+' || s[i] == '-')) i++;
    start = i;
    i = skip_digits(s, i, len);
    int whole = i > start;
    if (i < len && s[i] == '.') {
        start = ++i;
        i = skip_digits(s, i, len);
        if (!whole && i == start) return 0;
    } else if (!whole) {
        return 0;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) i++;
        start = i;
        i = skip_digits(s, i, len);
        if (i == start) return 0;
    }
    return i == len;
}

/* float() of an ASCII decimal: a new float, or NULL with no exception set if it is not one. */
static PyObject *
parse_score(const char *s, Py_ssize_t len)
{
    double value;
    if (fast_decimal(s, len, &value) == 0) return PyFloat_FromDouble(value);
    if (!is_decimal(s, len)) return NULL;
    PyObject *text = PyUnicode_DecodeASCII(s, len, "strict");
    if (text == NULL) return NULL;
    PyObject *score = PyFloat_FromString(text); /* long digit strings, large exponents */
    Py_DECREF(text);
    return score;
}

/* Make the query named by qid (UTF-8 bytes) the current one; qid_obj is its str, or NULL. */
static int
set_current(RunParser *self, const char *qid, Py_ssize_t len, PyObject *qid_obj)
{
    PyObject *key = qid_obj != NULL ? Py_NewRef(qid_obj) : PyUnicode_FromStringAndSize(qid, len);
    if (key == NULL) return -1;
    PyObject *inner = PyDict_GetItemWithError(self->table, key);
    if (inner == NULL) {
        if (PyErr_Occurred() || (inner = PyDict_New()) == NULL) {
            Py_DECREF(key);
            return -1;
        }
        int failed = PyDict_SetItem(self->table, key, inner);
        Py_DECREF(inner);
        if (failed) {
            Py_DECREF(key);
            return -1;
        }
    }
    Py_DECREF(key);
    if (len > self->qid_capacity) {
        char *grown = PyMem_Realloc(self->qid, (size_t)len);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->qid = grown;
        self->qid_capacity = len;
    }
    memcpy(self->qid, qid, (size_t)len);
    self->qid_len = len;
    self->groups++;
    Py_XSETREF(self->current, Py_NewRef(inner));
    return 0;
}

static int
is_current(RunParser *self, const char *qid, Py_ssize_t len)
{
    return self->current != NULL && len == self->qid_len && memcmp(qid, self->qid, (size_t)len) == 0;
}

/* Store doc -> score under qid. Steals the reference to score. */
static int
store(RunParser *self, const char *qid, Py_ssize_t qid_len, PyObject *qid_obj, PyObject *doc,
      PyObject *score)
{
    int failed = 0;
    if (!is_current(self, qid, qid_len)) failed = set_current(self, qid, qid_len, qid_obj);
    if (!failed) failed = PyDict_SetItem(self->current, doc, score);
    Py_DECREF(score);
    return failed ? -1 : 0;
}

/* A line with bytes beyond ASCII: decoded and split by Python, as the built-in reader does. */
static int
parse_unicode_line(RunParser *self, const char *line, Py_ssize_t len)
{
    PyObject *text = PyUnicode_DecodeUTF8(line, len, "strict");
    if (text == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return -1;
        PyErr_Clear();
        return 1;
    }
    PyObject *parts = PyUnicode_Split(text, NULL, -1);
    Py_DECREF(text);
    if (parts == NULL) return -1;
    Py_ssize_t count = PyList_GET_SIZE(parts);
    int status = 1;
    if (count == 0) {
        self->blank++;
        status = 0;
    } else if (count == 6) {
        PyObject *token = PyList_GET_ITEM(parts, 4);
        /* A score with a non-ASCII character (a digit of another script) is no number. */
        PyObject *score = PyUnicode_IS_ASCII(token)
            ? parse_score((const char *)PyUnicode_1BYTE_DATA(token), PyUnicode_GET_LENGTH(token))
            : NULL;
        if (score == NULL) {
            status = PyErr_Occurred() ? -1 : 1;
        } else if (!isfinite(PyFloat_AS_DOUBLE(score))) {
            Py_DECREF(score);
        } else {
            PyObject *qid = PyList_GET_ITEM(parts, 0);
            Py_ssize_t qid_len;
            const char *qid_utf8 = PyUnicode_AsUTF8AndSize(qid, &qid_len);
            if (qid_utf8 == NULL) {
                Py_DECREF(score);
                status = -1;
            } else {
                status = store(self, qid_utf8, qid_len, qid, PyList_GET_ITEM(parts, 2), score);
            }
        }
    }
    Py_DECREF(parts);
    return status;
}

/* 0: read; 1: not a run line the built-in reader accepts (no exception set); -1: error. */
static int
parse_line(RunParser *self, const char *line, Py_ssize_t len)
{
    const char *start[6];
    Py_ssize_t size[6];
    int count = 0;
    Py_ssize_t i = 0;
    while (i < len) {
        if (is_space[(unsigned char)line[i]]) {
            i++;
            continue;
        }
        Py_ssize_t j = i;
        while (j < len && !is_space[(unsigned char)line[j]]) {
            if ((unsigned char)line[j] >= 0x80) return parse_unicode_line(self, line, len);
            j++;
        }
        if (count == 6) return 1; /* a seventh column; Unicode whitespace would only add more */
        start[count] = line + i;
        size[count] = j - i;
        count++;
        i = j;
    }
    if (count == 0) {
        self->blank++;
        return 0;
    }
    if (count != 6) return 1;
    PyObject *score = parse_score(start[4], size[4]);
    if (score == NULL) return PyErr_Occurred() ? -1 : 1;
    if (!isfinite(PyFloat_AS_DOUBLE(score))) {
        Py_DECREF(score);
        return 1;
    }
    PyObject *doc = PyUnicode_FromStringAndSize(start[2], size[2]);
    if (doc == NULL) {
        Py_DECREF(score);
        return -1;
    }
    int status = store(self, start[0], size[0], NULL, doc, score);
    Py_DECREF(doc);
    return status;
}

static PyObject *
RunParser_feed(RunParser *self, PyObject *args)
{
    Py_buffer view;
    int final = 0;
    if (self->table == NULL) {
        PyErr_SetString(PyExc_TypeError, "RunParser.__init__() was not called");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*|p:feed", &view, &final)) return NULL;
    const char *data = view.buf;
    Py_ssize_t len = view.len, pos = 0;
    while (pos < len) {
        const char *newline = memchr(data + pos, '\n', (size_t)(len - pos));
        /* An unfinished line is kept by the caller for the next feed: refuse it as soon as it
         * is too long, even with a "\r" of a "\r\n" end still to come. */
        if (newline == NULL && !final && len - pos <= MAX_LINE_BYTES + 1) break;
        Py_ssize_t end = newline == NULL ? len : newline - data;
        Py_ssize_t content = end - pos;
        if (newline != NULL && content > 0 && data[end - 1] == '\r') content--;
        self->lines++;
        int status = content > MAX_LINE_BYTES ? 1 : parse_line(self, data + pos, end - pos);
        if (status != 0) {
            PyBuffer_Release(&view);
            if (status > 0) {
                PyObject *number = PyLong_FromSsize_t(self->lines);
                if (number != NULL) {
                    PyErr_SetObject(LineError, number);
                    Py_DECREF(number);
                }
            }
            return NULL;
        }
        pos = newline == NULL ? len : end + 1;
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(pos);
}

static int
RunParser_init(RunParser *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"table", NULL};
    PyObject *table;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!:RunParser", keywords, &PyDict_Type, &table))
        return -1;
    Py_XSETREF(self->table, Py_NewRef(table));
    Py_CLEAR(self->current);
    self->qid_len = 0;
    self->lines = self->blank = self->groups = 0;
    return 0;
}

static int
RunParser_traverse(RunParser *self, visitproc visit, void *arg)
{
    Py_VISIT(self->table);
    Py_VISIT(self->current);
    return 0;
}

static int
RunParser_clear(RunParser *self)
{
    Py_CLEAR(self->current);
    Py_CLEAR(self->table);
    return 0;
}

static void
RunParser_dealloc(RunParser *self)
{
    PyObject_GC_UnTrack(self);
    RunParser_clear(self);
    PyMem_Free(self->qid);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
RunParser_get_lines(RunParser *self, void *closure)
{
    return PyLong_FromSsize_t(self->lines);
}

static PyObject *
RunParser_get_blank(RunParser *self, void *closure)
{
    return PyLong_FromSsize_t(self->blank);
}

static PyObject *
RunParser_get_groups(RunParser *self, void *closure)
{
    return PyLong_FromSsize_t(self->groups);
}

static PyGetSetDef RunParser_getset[] = {
    {"lines", (getter)RunParser_get_lines, NULL, "Lines read so far.", NULL},
    {"blank", (getter)RunParser_get_blank, NULL, "Blank lines among them.", NULL},
    {"groups", (getter)RunParser_get_groups, NULL,
     "Runs of consecutive lines of one query read so far.", NULL},
    {NULL},
};

static PyMethodDef RunParser_methods[] = {
    {"feed", (PyCFunction)RunParser_feed, METH_VARARGS,
     "feed(data, final=False) -> int\n\nRead every complete line of data (and, if final, the "
     "last one without a line end); return how many bytes were read."},
    {NULL},
};

static PyTypeObject RunParserType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ef_evaluation_speedups._trec_run.RunParser",
    .tp_doc = "RunParser(table)\n\nParse TREC run lines into table, {query_id: {doc_id: score}}.",
    .tp_basicsize = sizeof(RunParser),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)RunParser_init,
    .tp_traverse = (traverseproc)RunParser_traverse,
    .tp_clear = (inquiry)RunParser_clear,
    .tp_dealloc = (destructor)RunParser_dealloc,
    .tp_methods = RunParser_methods,
    .tp_getset = RunParser_getset,
};

static PyObject *
fast_float(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    double value;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    int status = fast_decimal(view.buf, view.len, &value);
    PyBuffer_Release(&view);
    if (status != 0) Py_RETURN_NONE;
    return PyFloat_FromDouble(value);
}

static PyMethodDef module_methods[] = {
    {"fast_float", fast_float, METH_O,
     "fast_float(text: bytes) -> float | None\n\nThe exact fast path of the score parser: "
     "float(text), or None when text needs the general parser."},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_trec_run", "A TREC run file parser in C.", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__trec_run(void)
{
    for (const char *p = "\t\n\v\f\r\x1c\x1d\x1e\x1f "; *p; p++) is_space[(unsigned char)*p] = 1;
    if (PyType_Ready(&RunParserType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    LineError = PyErr_NewExceptionWithDoc(
        "ef_evaluation_speedups._trec_run.LineError",
        "A line the parser does not accept; args[0] is its number.", PyExc_ValueError, NULL);
    if (LineError == NULL || PyModule_AddObjectRef(m, "LineError", LineError) < 0
            || PyModule_AddObjectRef(m, "RunParser", (PyObject *)&RunParserType) < 0
            || PyModule_AddIntConstant(m, "MAX_LINE_BYTES", (long)MAX_LINE_BYTES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
