/* A Python class's ``__slots__`` read and written at their offsets in an object's memory,
 * shared by gradnb's two C extensions (``_record.c``, ``autograd/_loop.c``). On the hot paths
 * CPython's generic attribute lookup costs more than the work around it; a slot's offset is
 * fixed once its class exists, and is the same in every subclass. */
#ifndef GRADNB_SLOTS_H
#define GRADNB_SLOTS_H

#include <Python.h>
#include <structmember.h>

/* The slot at ``off`` of ``obj`` (an lvalue: NULL while the slot was never set). */
#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* The offset of slot ``name`` of ``type``, from the member descriptor in its ``__dict__``;
 * -1 with TypeError when ``name`` is not an object slot of ``type``. */
static int
slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *out)
{
    PyObject *d = PyDict_GetItemString(type->tp_dict, name);
    if (d == NULL || !PyObject_TypeCheck(d, &PyMemberDescr_Type)
            || ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, name);
        return -1;
    }
    *out = ((PyMemberDescrObject *)d)->d_member->offset;
    return 0;
}

#endif
