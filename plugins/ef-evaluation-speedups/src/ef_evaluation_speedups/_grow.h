/* Growing an array of raw memory, shared by the plugin's C modules (each includes it). */
#ifndef EF_EVALUATION_SPEEDUPS_GROW_H
#define EF_EVALUATION_SPEEDUPS_GROW_H

#include <Python.h> /* after PY_SSIZE_T_CLEAN, as the including module defines it */

/* *items holds *capacity items of item_size bytes; make it hold at least `needed`, doubling
 * from 64. Returns 0, or -1 with MemoryError set (the array is then unchanged). */
static inline int
grow(void **items, Py_ssize_t *capacity, Py_ssize_t needed, size_t item_size)
{
    if (needed <= *capacity) {
        return 0;
    }
    Py_ssize_t capacity_new = *capacity ? *capacity : 64;
    while (capacity_new < needed) {
        if (capacity_new > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)item_size) {
            PyErr_NoMemory();
            return -1;
        }
        capacity_new *= 2;
    }
    void *grown = PyMem_Realloc(*items, (size_t)capacity_new * item_size);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *items = grown;
    *capacity = capacity_new;
    return 0;
}

#endif
