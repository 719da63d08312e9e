/* The canonical-tag matcher of _scan.c for one string width: _scan.c includes this file once
 * per width with CHAR (Py_UCS1, Py_UCS2 or Py_UCS4) and WIDTH (1, 2 or 4) defined, so that no
 * character read has to ask which width the text has (CPython's stringlib does the same). */

#define JOIN(a, b) a##b
#define NAME(a, b) JOIN(a, b)

/* One section's attributes from ``i`` (each " key=\"value\""), as many as match, up to
 * MOST_ATTRIBUTES, each key unlike the earlier ones of the section: the possessive regex
 * stops at the first attribute that does not match and keeps those before it. Returns the
 * offset after the last attribute taken. */
static Py_ssize_t NAME(section, WIDTH)(const CHAR *s, Py_ssize_t n, Py_ssize_t i)
{
    Py_ssize_t key_at[MOST_ATTRIBUTES], key_len[MOST_ATTRIBUTES];
    for (int taken = 0; taken < MOST_ATTRIBUTES; taken++) {
        Py_ssize_t j = i;
        if (j + 1 >= n || s[j] != ' ' || !key_start(s[j + 1]))
            return i;
        Py_ssize_t key = ++j;
        while (j < n && key_char(s[j]))
            j++;
        Py_ssize_t length = j - key;
        if (j + 1 >= n || s[j] != '=' || s[j + 1] != '"')
            return i;
        for (int earlier = 0; earlier < taken; earlier++) {
            if (key_len[earlier] == length &&
                memcmp(s + key_at[earlier], s + key, (size_t)length * sizeof(CHAR)) == 0)
                return i; /* a repeated key: the grammar's reading reports it */
        }
        j += 2;
        for (;;) { /* the value: [^"\\\n\r\[] or one of the escapes \\ \" \[ \] \n \r */
            if (j >= n)
                return i;
            Py_UCS4 c = s[j];
            if (c == '"')
                break;
            if (c == '\\') {
                if (j + 1 >= n || !escape_char(s[j + 1]))
                    return i;
                j += 2;
                continue;
            }
            if (c == '\n' || c == '\r' || c == '[')
                return i;
            j++;
        }
        key_at[taken] = key;
        key_len[taken] = length;
        i = j + 1;
    }
    return i;
}

/* The end of the canonical tag whose "[" is at ``open`` (its kind, a position in ``kinds``,
 * in ``*index``), or -1. */
static Py_ssize_t NAME(canonical, WIDTH)(const CHAR *s, Py_ssize_t n, Py_ssize_t open,
                                         PyObject *kinds, Py_ssize_t *index)
{
    Py_ssize_t i = open + 1, count = PyTuple_GET_SIZE(kinds);
    *index = -1;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *name = PyTuple_GET_ITEM(kinds, k);
        Py_ssize_t length = PyUnicode_GET_LENGTH(name), c = 0;
        /* kinds are ASCII (checked by scan_canonical) */
        const Py_UCS1 *word = PyUnicode_1BYTE_DATA(name);
        if (i + length >= n)
            continue;
        while (c < length && s[i + c] == word[c])
            c++;
        if (c == length && s[i + length] == ':') {
            *index = k;
            i += length + 1;
            break;
        }
    }
    if (*index < 0)
        return -1;
    i = NAME(section, WIDTH)(s, n, i);
    if (i + 1 < n && s[i] == ' ' && s[i + 1] == '|')
        i = NAME(section, WIDTH)(s, n, i + 2);
    if (i < n && s[i] == ']')
        return i + 1;
    return -1;
}

#undef NAME
#undef JOIN
