/* The scanner's canonical shortcut in C (issue 2: the scan's speed next to a bare regex scan).
 *
 * scan_canonical(text, position, tags, tag_type, kinds, maybe) walks ``text`` from
 * ``position`` from one "[" to the next. At a "[" that starts a whole canonical tag with no
 * repeated key (exactly what tagparse.canonical.DISTINCT_CANONICAL_REST matches after it), it
 * appends ``tag_type((kind, None, start, end, raw, None, None))`` to ``tags`` and goes on after
 * the tag. It returns the offset of the first "[" that might start any other tag head (the
 * character after it is one ``maybe`` allows, or is not ASCII), for the Python scanner to read
 * with its regex from there; -1 when the text has no such "[" left.
 * A "[" that cannot start a head ("[1]", "[Note: ...]") is prose and is skipped.
 *
 * Pure reading: no Python callbacks, no allocation but the tags it appends and their raw
 * text; every character is looked at a bounded number of times (a failed canonical attempt
 * stops at the first character it cannot take, and the regex then reads that "[" anyway).
 * tests/tagparse/test_tag_c_shortcut.py checks it against the regex shortcut and the grammar.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define MOST_ATTRIBUTES 8 /* tagparse.canonical._MOST_ATTRIBUTES */

static inline int key_start(Py_UCS4 c) { return (c >= 'a' && c <= 'z') || c == '_'; }

static inline int key_char(Py_UCS4 c) { return key_start(c) || (c >= '0' && c <= '9'); }

/* What may follow a backslash in a canonical value: \\ \" \[ \] \n \r */
static inline int escape_char(Py_UCS4 c)
{
    return c == '\\' || c == '"' || c == '[' || c == ']' || c == 'n' || c == 'r';
}

#define CHAR Py_UCS1
#define WIDTH 1
#include "_scan_reader.h"
#undef CHAR
#undef WIDTH
#define CHAR Py_UCS2
#define WIDTH 2
#include "_scan_reader.h"
#undef CHAR
#undef WIDTH
#define CHAR Py_UCS4
#define WIDTH 4
#include "_scan_reader.h"
#undef CHAR
#undef WIDTH

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t length;
} Text;

static Py_ssize_t canonical(const Text *t, Py_ssize_t open, PyObject *kinds, Py_ssize_t *index)
{
    switch (t->kind) {
    case PyUnicode_1BYTE_KIND:
        return canonical1((const Py_UCS1 *)t->data, t->length, open, kinds, index);
    case PyUnicode_2BYTE_KIND:
        return canonical2((const Py_UCS2 *)t->data, t->length, open, kinds, index);
    default:
        return canonical4((const Py_UCS4 *)t->data, t->length, open, kinds, index);
    }
}

/* Whether the "[" at ``open`` might start a tag head: the next character is one ``maybe``
 * allows (white space, or a letter that starts a kind name in some case) or is not ASCII
 * (Unicode white space, case folds: the regex decides). */
static int may_be_head(const Text *t, Py_ssize_t open, const unsigned char *maybe)
{
    if (open + 1 >= t->length)
        return 0;
    Py_UCS4 c = PyUnicode_READ(t->kind, t->data, open + 1);
    return c >= 128 || maybe[c];
}

static PyObject *scan_canonical(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyUnicode_Check(args[0]) || !PyLong_Check(args[1]) ||
        !PyList_Check(args[2]) || !PyType_Check(args[3]) || !PyTuple_Check(args[4]) ||
        !PyBytes_Check(args[5]) || PyBytes_GET_SIZE(args[5]) != 128) {
        PyErr_SetString(PyExc_TypeError,
                        "scan_canonical(text: str, position: int, tags: list, tag_type: type, "
                        "kinds: tuple[str, ...], maybe: bytes of length 128)");
        return NULL;
    }
    PyObject *text = args[0], *tags = args[2], *kinds = args[4];
    PyTypeObject *tag_type = (PyTypeObject *)args[3];
    /* No instance dict: the tags are left out of the cycle collector's walks (see below). */
    if (!PyType_IsSubtype(tag_type, &PyTuple_Type) || tag_type->tp_dictoffset != 0) {
        PyErr_SetString(PyExc_TypeError, "tag_type must be a tuple type without __dict__");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kinds); k++) {
        PyObject *name = PyTuple_GET_ITEM(kinds, k);
        if (!PyUnicode_Check(name) || !PyUnicode_IS_ASCII(name)) {
            PyErr_SetString(PyExc_TypeError, "kinds must be ASCII strings");
            return NULL;
        }
    }
    const unsigned char *maybe = (const unsigned char *)PyBytes_AS_STRING(args[5]);
    Py_ssize_t position = PyLong_AsSsize_t(args[1]);
    if (position == -1 && PyErr_Occurred())
        return NULL;
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)};
    if (position < 0)
        position = 0;
    while (position < t.length) {
        Py_ssize_t open = PyUnicode_FindChar(text, '[', position, t.length, 1);
        if (open == -2)
            return NULL;
        if (open < 0)
            break;
        if (!may_be_head(&t, open, maybe)) {
            position = open + 1;
            continue;
        }
        Py_ssize_t index, end = canonical(&t, open, kinds, &index);
        if (end < 0)
            return PyLong_FromSsize_t(open);
        PyObject *tag = tag_type->tp_alloc(tag_type, 7);
        if (tag == NULL)
            return NULL;
        PyObject *kind = PyTuple_GET_ITEM(kinds, index);
        PyObject *start_obj = PyLong_FromSsize_t(open);
        PyObject *end_obj = PyLong_FromSsize_t(end);
        PyObject *raw = PyUnicode_Substring(text, open, end);
        if (start_obj == NULL || end_obj == NULL || raw == NULL) {
            Py_XDECREF(start_obj);
            Py_XDECREF(end_obj);
            Py_XDECREF(raw);
            Py_DECREF(tag);
            return NULL;
        }
        Py_INCREF(kind);
        PyTuple_SET_ITEM(tag, 0, kind);
        PyTuple_SET_ITEM(tag, 1, Py_NewRef(Py_None));
        PyTuple_SET_ITEM(tag, 2, start_obj);
        PyTuple_SET_ITEM(tag, 3, end_obj);
        PyTuple_SET_ITEM(tag, 4, raw);
        PyTuple_SET_ITEM(tag, 5, Py_NewRef(Py_None));
        PyTuple_SET_ITEM(tag, 6, Py_NewRef(Py_None));
        /* Strings, integers and None only: the tag can be in no reference cycle, so the cycle
         * collector need not walk it (CPython untracks such plain tuples itself). */
        PyObject_GC_UnTrack(tag);
        int failed = PyList_Append(tags, tag);
        Py_DECREF(tag);
        if (failed)
            return NULL;
        position = end;
    }
    return PyLong_FromLong(-1);
}

static PyMethodDef methods[] = {
    {"scan_canonical", (PyCFunction)(void (*)(void))scan_canonical, METH_FASTCALL,
     "Append the canonical tags from position on; the first other possible head, or -1."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tagparse._scan",
    "The scanner's canonical shortcut in C (see tagparse/scanner.py).", 0, methods,
};

PyMODINIT_FUNC PyInit__scan(void) { return PyModuleDef_Init(&module); }
