/* The backward pass's two per-node loops, compiled: discovery and execution.
 *
 * ``engine._discover`` and ``engine._execute`` run once per node of every backward. Written in
 * Python, the bookkeeping around each node (counting edges, keeping the ready node in hand,
 * fitting and summing gradients, releasing saved values) cost more than the derivative rules it
 * calls on the tiny tensors of a deep chain. This module runs the same steps with the same
 * Python objects, statement for statement (each block names the Python lines it stands for), so
 * the two stay one algorithm: the engine uses this module for the common pass (no hook, no
 * captured input, no observer of nodes, no anomaly mode, first order), and its Python loop for
 * everything else and wherever this module was not built (it is an optional extension).
 *
 * The derivative rules and gradient fitting stay Python functions, called from here, and so do
 * leaf accumulation and memory accounting beyond their common cases (a leaf's first gradient,
 * an array the pass alone holds; a saved buffer that dies or is watched).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../_core/_slots.h"

/* Set once by ``configure``: the engine's objects the loops call or compare against. */
static PyObject *ZERO_NRS0, *ZERO_NRS1, *ZERO_NRS2, *ZERO_NRS3;
static PyObject *AccumulateGrad;           /* the leaf node class */
static PyObject *heappush, *heappop;       /* heapq's */
static PyObject *accumulate_fn;            /* engine._accumulate */
static PyObject *fit_fn;                   /* engine._fit */
static PyObject *one_hot_fn;               /* engine._one_hot */
static PyObject *on_tensors_fn;            /* engine._backward_on_tensors */
static PyObject *runs_user_code_fn;        /* engine._runs_user_code */
static PyObject *TensorClass;
static PyObject *make_fn;                  /* Tensor._make */
static PyObject *ndarray_type;             /* numpy.ndarray */
static PyObject *donation;                 /* graph._donation: a one-item list */
static PyObject *zero, *one;               /* the ints 0 and 1 */

static PyObject *s_next, *s_fit_grads, *s_num_outputs, *s_shape, *s_dtype, *s_release, *s_add,
    *s_variable, *s_on_tensors, *s_backward, *s_hooks, *s_pre_hooks, *s_tensor_hooks,
    *s_runs_user_code;

/* The slots every node has (``Node.__slots__``), read at their offsets in a node's memory:
 * CPython's generic attribute lookup costs more than the rest of a node's bookkeeping here. */
static PyTypeObject *NodeType;
enum { SEQ, NEXT0, NEXT1, NEXT2, NEXT_NR, SAVED, SHAPE, DTYPE, N_SLOTS };
static const char *slot_names[N_SLOTS] = {"_seq", "_next0", "_next1", "_next2", "_next_nr",
                                          "_saved", "_shape", "_dtype"};
static Py_ssize_t slot_offsets[N_SLOTS];
static PyObject *slot_strings[N_SLOTS];

/* ``node.<slot>`` (a new reference), or NULL with AttributeError where it was never set. */
static PyObject *
node_slot(PyObject *node, int which)
{
    if (PyObject_TypeCheck(node, NodeType)) {
        PyObject *v = SLOT(node, slot_offsets[which]);
        if (v != NULL)
            return Py_NewRef(v);
    }
    return PyObject_GetAttr(node, slot_strings[which]);  /* (raises as Python would) */
}

/* ``bool(obj.<name>)``: 1, 0, or -1 on error. */
static int
attr_truth(PyObject *obj, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL)
        return -1;
    int on = PyObject_IsTrue(v);
    Py_DECREF(v);
    return on;
}

/* A node class's flag (``fit_grads``, ``on_tensors``), read off the class as the Python loop
 * does (``kind.fit_grads``), from the type's attribute cache. 1, 0, or -1 on error. */
static int
class_flag(PyObject *node, PyObject *name)
{
    PyObject *v = _PyType_Lookup(Py_TYPE(node), name);
    if (v != NULL && Py_TYPE(v)->tp_descr_get == NULL)
        return PyObject_IsTrue(v);
    return attr_truth(node, name);
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* ``node._seq`` as a C long long. -1 with an error set on failure. */
static int
seq_of(PyObject *node, long long *out)
{
    PyObject *v = node_slot(node, SEQ);
    if (v == NULL)
        return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* A node's producers: ``Node._next`` without building a tuple for one to three inputs (the
 * shared ``_ZERO_NRS`` output numbers tell how many). ``small`` gets new references (NULL
 * beyond ``*n``); for other nodes ``*rest`` gets the ``_next`` tuple. */
typedef struct {
    PyObject *small[3];
    PyObject *rest;
    Py_ssize_t n;
} Edges;

static void
edges_clear(Edges *e)
{
    Py_CLEAR(e->small[0]);
    Py_CLEAR(e->small[1]);
    Py_CLEAR(e->small[2]);
    Py_CLEAR(e->rest);
}

static int
edges_read(PyObject *node, PyObject *nrs, Edges *e)
{
    e->small[0] = e->small[1] = e->small[2] = e->rest = NULL;
    int n;
    if (nrs == ZERO_NRS1)
        n = 1;
    else if (nrs == ZERO_NRS2)
        n = 2;
    else if (nrs == ZERO_NRS3)
        n = 3;
    else if (nrs == ZERO_NRS0)
        n = 0;
    else {
        PyObject *t = PyObject_GetAttr(node, s_next);
        if (t == NULL)
            return -1;
        e->rest = PySequence_Tuple(t);
        Py_DECREF(t);
        if (e->rest == NULL)
            return -1;
        e->n = PyTuple_GET_SIZE(e->rest);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        e->small[i] = node_slot(node, NEXT0 + i);
        if (e->small[i] == NULL) {
            edges_clear(e);
            return -1;
        }
    }
    e->n = n;
    return 0;
}

static inline PyObject *
edge_at(Edges *e, Py_ssize_t i)
{
    return e->rest ? PyTuple_GET_ITEM(e->rest, i) : e->small[i];
}

/* ---- discovery ---------------------------------------------------------------------------- */

/* discover(root_nodes, changed_since, look, parents) -> (deps, older, user_code)
 *
 * ``engine._discover``'s walk: ``deps`` maps each reachable node to the number of edges into
 * it; ``older`` lists the nodes recorded before ``changed_since``; ``user_code`` says whether a
 * node can run user code (looked for while ``look``); ``parents`` (a dict, or None) gets each
 * node's consumers. */
static PyObject *
discover(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "discover() takes 4 arguments");
        return NULL;
    }
    PyObject *roots = args[0], *parents = args[3];
    long long changed_since = PyLong_AsLongLong(args[1]);
    if (changed_since == -1 && PyErr_Occurred())
        return NULL;
    int look = PyObject_IsTrue(args[2]);
    if (look < 0)
        return NULL;
    if (parents == Py_None)
        parents = NULL;
    int user_code = 0;
    PyObject *deps = NULL, *stack = NULL, *older = NULL;
    PyObject *node = NULL, *nrs = NULL;
    Edges e = {{NULL, NULL, NULL}, NULL, 0};

    if (!PyList_Check(roots)) {
        PyErr_SetString(PyExc_TypeError, "discover(): root_nodes must be a list");
        return NULL;
    }
    deps = PyDict_New();
    older = PyList_New(0);
    stack = PyList_GetSlice(roots, 0, PyList_GET_SIZE(roots));
    if (!deps || !older || !stack)
        goto fail;
    /* deps = dict.fromkeys(root_nodes, 0); older = [roots recorded before changed_since] */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(roots); i++) {
        PyObject *r = PyList_GET_ITEM(roots, i);
        long long seq;
        if (PyDict_SetItem(deps, r, zero) < 0 || seq_of(r, &seq) < 0)
            goto fail;
        if (seq < changed_since && PyList_Append(older, r) < 0)
            goto fail;
    }
    while (PyList_GET_SIZE(stack)) {
        Py_ssize_t last = PyList_GET_SIZE(stack) - 1;
        node = PyList_GET_ITEM(stack, last);
        Py_INCREF(node);
        if (PyList_SetSlice(stack, last, last + 1, NULL) < 0)
            goto fail;
        if (look) {
            /* node._hooks or node._pre_hooks or node._tensor_hooks or node.runs_user_code
               or type(node) is AccumulateGrad */
            int maybe = (PyObject *)Py_TYPE(node) == AccumulateGrad;
            PyObject *names[4] = {s_hooks, s_pre_hooks, s_tensor_hooks, s_runs_user_code};
            for (int k = 0; k < 4 && !maybe; k++) {
                PyObject *v = PyObject_GetAttr(node, names[k]);
                if (v == NULL)
                    goto fail;
                maybe = PyObject_IsTrue(v);
                Py_DECREF(v);
                if (maybe < 0)
                    goto fail;
            }
            if (maybe) {
                PyObject *r = PyObject_CallOneArg(runs_user_code_fn, node);
                if (r == NULL)
                    goto fail;
                user_code = PyObject_IsTrue(r);
                Py_DECREF(r);
                if (user_code < 0)
                    goto fail;
                look = !user_code;
            }
        }
        nrs = node_slot(node, NEXT_NR);
        if (nrs == NULL || edges_read(node, nrs, &e) < 0)
            goto fail;
        for (Py_ssize_t i = 0; i < e.n; i++) {
            PyObject *nxt = edge_at(&e, i);
            if (nxt == Py_None)
                continue;
            if (parents) {  /* parents.setdefault(nxt, []).append(node) */
                PyObject *lst = PyDict_GetItemWithError(parents, nxt);
                if (lst == NULL) {
                    if (PyErr_Occurred())
                        goto fail;
                    lst = PyList_New(0);
                    if (lst == NULL)
                        goto fail;
                    int rc = PyDict_SetItem(parents, nxt, lst);
                    Py_DECREF(lst);
                    if (rc < 0)
                        goto fail;
                }
                if (PyList_Append(lst, node) < 0)
                    goto fail;
            }
            PyObject *count = PyDict_GetItemWithError(deps, nxt);
            if (count == NULL) {
                if (PyErr_Occurred())
                    goto fail;
                long long seq;
                if (PyDict_SetItem(deps, nxt, one) < 0 || PyList_Append(stack, nxt) < 0
                        || seq_of(nxt, &seq) < 0)
                    goto fail;
                if (seq < changed_since && PyList_Append(older, nxt) < 0)
                    goto fail;
            }
            else {
                long c = PyLong_AsLong(count);
                if (c == -1 && PyErr_Occurred())
                    goto fail;
                PyObject *v = PyLong_FromLong(c + 1);
                if (v == NULL)
                    goto fail;
                int rc = PyDict_SetItem(deps, nxt, v);
                Py_DECREF(v);
                if (rc < 0)
                    goto fail;
            }
        }
        edges_clear(&e);
        Py_CLEAR(nrs);
        Py_CLEAR(node);
    }
    Py_DECREF(stack);
    return Py_BuildValue("(NNO)", deps, older, user_code ? Py_True : Py_False);

fail:
    edges_clear(&e);
    Py_XDECREF(nrs);
    Py_XDECREF(node);
    Py_XDECREF(stack);
    Py_XDECREF(deps);
    Py_XDECREF(older);
    return NULL;
}

/* ---- execution ---------------------------------------------------------------------------- */

/* ``-ready[0][0]``: the sequence number of the newest node in the ready heap. */
static int
heap_top_seq(PyObject *ready, long long *out)
{
    PyObject *top = PyList_GET_ITEM(ready, 0);
    if (!PyTuple_Check(top) || PyTuple_GET_SIZE(top) != 2) {
        PyErr_SetString(PyExc_TypeError, "ready heap entries must be (-seq, node) pairs");
        return -1;
    }
    *out = -PyLong_AsLongLong(PyTuple_GET_ITEM(top, 0));
    return (*out == 1 && PyErr_Occurred()) ? -1 : 0;
}

/* heappush(ready, (-node._seq, node)) */
static int
push_ready(PyObject *ready, PyObject *node)
{
    long long seq;
    if (seq_of(node, &seq) < 0)
        return -1;
    PyObject *entry = Py_BuildValue("(LO)", -seq, node);
    if (entry == NULL)
        return -1;
    PyObject *r = PyObject_CallFunctionObjArgs(heappush, ready, entry, NULL);
    Py_DECREF(entry);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* ``buffers.pop(node, None)``: a new reference, or Py_None (new reference), NULL on error. */
static PyObject *
pop_buffer(PyObject *buffers, PyObject *node)
{
    PyObject *buf = PyDict_GetItemWithError(buffers, node);
    if (buf == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    Py_INCREF(buf);
    if (PyDict_DelItem(buffers, node) < 0) {
        Py_DECREF(buf);
        return NULL;
    }
    return buf;
}

/* Whether ``g`` (an array) must be fitted to ``shape``/``dtype``: ``g.shape != shape or
 * (g.dtype is not dtype and g.dtype != dtype)``. 1, 0, or -1 on error. */
static int
needs_fit(PyObject *g, PyObject *shape, PyObject *dtype)
{
    PyObject *gs = PyObject_GetAttr(g, s_shape);
    if (gs == NULL)
        return -1;
    int differ = PyObject_RichCompareBool(gs, shape, Py_NE);
    Py_DECREF(gs);
    if (differ != 0)
        return differ;
    PyObject *gd = PyObject_GetAttr(g, s_dtype);
    if (gd == NULL)
        return -1;
    differ = gd == dtype ? 0 : PyObject_RichCompareBool(gd, dtype, Py_NE);
    Py_DECREF(gd);
    return differ;
}

/* ``node``'s backward on ``grads`` (a list): ``results``, a new reference. */
static PyObject *
run_rule(PyObject *node, PyObject *grads)
{
    int on_tensors = class_flag(node, s_on_tensors);
    if (on_tensors < 0)
        return NULL;
    if (on_tensors)  /* results = _backward_on_tensors(node, grads) */
        return PyObject_CallFunctionObjArgs(on_tensors_fn, node, grads, NULL);
    if (PyList_Check(grads) && PyList_GET_SIZE(grads) == 1)  /* node.backward(grads[0]) */
        return PyObject_CallMethodOneArg(node, s_backward, PyList_GET_ITEM(grads, 0));
    /* node.backward(*grads) */
    PyObject *fn = PyObject_GetAttr(node, s_backward);
    if (fn == NULL)
        return NULL;
    PyObject *t = PySequence_Tuple(grads);
    PyObject *r = t ? PyObject_Call(fn, t, NULL) : NULL;
    Py_XDECREF(t);
    Py_DECREF(fn);
    return r;
}

/* Hand the rule about to run its gradient as a buffer to overwrite (``graph.donated``) when
 * nothing but this pass's buffer list holds it: not another node's buffer (a gradient sent to
 * two inputs), not a hook, an observer or the user, whose every reference would count here.
 * NumPy arrays only. 1 when donated (the caller empties ``donation`` after the rule), 0 when
 * not, -1 on error. */
static int
donate(PyObject *grads)
{
    if (donation == NULL || !PyList_CheckExact(grads) || Py_REFCNT(grads) != 1
            || PyList_GET_SIZE(grads) != 1)
        return 0;
    PyObject *g = PyList_GET_ITEM(grads, 0);
    if ((PyObject *)Py_TYPE(g) != ndarray_type || Py_REFCNT(g) != 1)
        return 0;
    return PyList_SetItem(donation, 0, Py_NewRef(g)) < 0 ? -1 : 1;
}

/* Set by ``configure_release``: ``graph``'s saved-entry kinds, its empty entry, the types of
 * constants that hold no buffer, and what ``ReleaseTracker`` keeps. */
static PyObject *KIND_INPUT, *KIND_OUTPUT, *KIND_CONST, *NOTHING, *no_buffer_types;
static PyObject *s_base, *s_nbytes, *s_freed, *s_seen, *s_by_node, *s_released;
static PyObject *s_grad, *s_post_hooks, *s_flags, *s_writeable, *s_c_contiguous, *s_data;

/* ``node._saved = _RELEASED`` (None), at the slot's offset. */
static void
mark_released(PyObject *node)
{
    PyObject **slot = &SLOT(node, slot_offsets[SAVED]);
    PyObject *old = *slot;
    *slot = Py_NewRef(Py_None);
    Py_XDECREF(old);
}

/* ``owner_of(arr)``: the array that owns the memory behind ``arr`` (a view's base,
 * recursively), a new reference. */
static PyObject *
owner_of(PyObject *arr)
{
    PyObject *owner = Py_NewRef(arr);
    PyObject *base = PyObject_GetAttr(owner, s_base);
    for (;;) {
        if (base == NULL) {  /* (getattr(arr, "base", None)) */
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                Py_DECREF(owner);
                return NULL;
            }
            PyErr_Clear();
            return owner;
        }
        int array = 0;  /* hasattr(base, "nbytes") */
        if (base != Py_None) {
            PyObject *nbytes = PyObject_GetAttr(base, s_nbytes);
            array = nbytes != NULL;
            Py_XDECREF(nbytes);
            if (!array && PyErr_ExceptionMatches(PyExc_AttributeError))
                PyErr_Clear();
            else if (!array)
                array = -1;
        }
        if (array <= 0) {
            Py_DECREF(base);
            if (array < 0)
                Py_CLEAR(owner);
            return owner;
        }
        Py_SETREF(owner, base);
        base = PyObject_GetAttr(owner, s_base);
    }
}

/* What ``ReleaseTracker.add`` works with, read off ``tracker``: its ``_seen`` set and its
 * ``_released`` list (new references). 0, 1 when the tracker keeps bytes per node for an
 * observer (the Python method does that), -1 on error. */
static int
tracker_parts(PyObject *tracker, PyObject **seen, PyObject **watched)
{
    *seen = *watched = NULL;
    PyObject *by_node = PyObject_GetAttr(tracker, s_by_node);
    if (by_node == NULL)
        return -1;
    Py_DECREF(by_node);
    if (by_node != Py_None)
        return 1;
    *seen = PyObject_GetAttr(tracker, s_seen);
    *watched = *seen ? PyObject_GetAttr(tracker, s_released) : NULL;
    if (*watched != NULL && PySet_Check(*seen) && PyList_Check(*watched))
        return 0;
    if (*watched != NULL)
        PyErr_SetString(PyExc_TypeError, "ReleaseTracker: _seen must be a set, _released a list");
    Py_CLEAR(*seen);
    Py_CLEAR(*watched);
    return -1;
}

/* ``ReleaseTracker.add``'s loop body for one released array ``arr``. ``sole``: nothing but
 * what was released holds ``arr``, so an array owning its memory dies when that goes, and its
 * bytes are added to ``*freed`` at once; any other is watched by a weak reference until the
 * pass ends, each buffer once. 0, or -1 on error. */
static int
track_one(PyObject *node, PyObject *arr, int sole, PyObject *seen, PyObject *watched,
          PyObject **freed)
{
    PyObject *base = PyObject_GetAttr(arr, s_base), *owner;
    if (base == NULL)
        return -1;
    Py_DECREF(base);
    int dies_now = base == Py_None && sole;
    if (base == Py_None)
        owner = Py_NewRef(arr);
    else if ((owner = owner_of(arr)) == NULL)
        return -1;
    int err = 0;
    PyObject *key = PyLong_FromVoidPtr(owner);  /* id(owner) */
    int known = key ? PySet_Contains(seen, key) : -1;
    PyObject *nbytes = known == 0 ? PyObject_GetAttr(owner, s_nbytes) : NULL;
    if (known == 0 && nbytes != NULL) {
        if (dies_now) {
            Py_SETREF(*freed, PyNumber_Add(*freed, nbytes));
            err = *freed == NULL;
        }
        else {
            PyObject *ref = PyWeakref_NewRef(owner, NULL);
            PyObject *entry = ref ? PyTuple_Pack(3, node, ref, nbytes) : NULL;
            err = entry == NULL || PySet_Add(seen, key) < 0 || PyList_Append(watched, entry) < 0;
            Py_XDECREF(ref);
            Py_XDECREF(entry);
        }
    }
    else if (known != 1) {
        err = 1;
    }
    Py_XDECREF(nbytes);
    Py_XDECREF(key);
    Py_DECREF(owner);
    return err ? -1 : 0;
}

/* ``tracker._freed += freed``. 0, or -1 on error. */
static int
add_freed(PyObject *tracker, PyObject *freed)
{
    PyObject *before = PyObject_GetAttr(tracker, s_freed);
    PyObject *total = before ? PyNumber_Add(before, freed) : NULL;
    int err = total == NULL || PyObject_SetAttr(tracker, s_freed, total) < 0;
    Py_XDECREF(before);
    Py_XDECREF(total);
    return err ? -1 : 0;
}

/* ``released = node.release(); tracker.add(node, released)`` for the two saves most nodes of a
 * chain make, without the two calls: ``x * number``'s constant (no buffer: nothing to count),
 * and a lone output array (``tanh``'s, ReLU's), accounted as ``add`` would account
 * ``(array,)``. ``saved`` is the node's ``_saved`` (this function's reference and the node's,
 * unless shared). 1 when done, 0 when not one of these cases or the tracker keeps bytes per
 * node (nothing changed: the Python methods run), -1 on error. */
static int
release_fast(PyObject *node, PyObject *saved, PyObject *tracker)
{
    if (KIND_OUTPUT == NULL || !PyObject_TypeCheck(node, NodeType) || !PyTuple_CheckExact(saved))
        return 0;
    Py_ssize_t n = PyTuple_GET_SIZE(saved);
    if (n == 2 && PyTuple_GET_ITEM(saved, 0) == NOTHING) {  /* ``x * c``: the factor alone */
        PyObject *entry = PyTuple_GET_ITEM(saved, 1);
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) < 2
                || PyTuple_GET_ITEM(entry, 0) != KIND_CONST)
            return 0;
        int plain = PySet_Contains(no_buffer_types,
                                   (PyObject *)Py_TYPE(PyTuple_GET_ITEM(entry, 1)));
        if (plain <= 0)
            return plain;
        mark_released(node);
        return 1;
    }
    if (n != 1)
        return 0;
    PyObject *entry = PyTuple_GET_ITEM(saved, 0);
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) < 2
            || PyTuple_GET_ITEM(entry, 0) != KIND_OUTPUT)
        return 0;
    PyObject *arr = PyTuple_GET_ITEM(entry, 1);
    if ((PyObject *)Py_TYPE(arr) != ndarray_type)
        return 0;
    PyObject *seen, *watched, *freed = NULL;
    int rc = tracker_parts(tracker, &seen, &watched);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    /* Sole holder: the entry alone holds the array, and the node (and this function) alone the
     * entry, so the array dies with the node's ``_saved`` as it would with ``release``'s tuple. */
    int sole = Py_REFCNT(arr) == 1 && Py_REFCNT(entry) == 1 && Py_REFCNT(saved) == 2;
    freed = PyLong_FromLong(0);
    rc = freed == NULL || track_one(node, arr, sole, seen, watched, &freed) < 0
         || add_freed(tracker, freed) < 0 ? -1 : 0;
    Py_XDECREF(freed);
    Py_DECREF(watched);
    Py_DECREF(seen);
    if (rc < 0)
        return -1;
    mark_released(node);  /* (a sole array dies when the caller lets ``saved`` go) */
    return 1;
}

/* ``tracker.add(node, arrays)`` (``memory.ReleaseTracker.add``, statement for statement): each
 * array by ``track_one``, sole when only ``arrays`` holds it. 0 when done, 1 when the tracker
 * keeps bytes per node or ``arrays`` is no tuple or list (the Python method does those), -1 on
 * error. */
static int
track_released(PyObject *tracker, PyObject *node, PyObject *arrays)
{
    if (!PyTuple_CheckExact(arrays) && !PyList_CheckExact(arrays))
        return 1;
    PyObject *seen, *watched;
    int rc = tracker_parts(tracker, &seen, &watched);
    if (rc != 0)
        return rc;
    PyObject *freed = PyLong_FromLong(0);
    int err = freed == NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(arrays);
    for (Py_ssize_t i = 0; !err && i < n; i++) {
        /* (Python's count: ``arrays``, the loop's variable and getrefcount's argument) */
        PyObject *arr = PySequence_Fast_GET_ITEM(arrays, i);
        err = track_one(node, arr, Py_REFCNT(arr) <= 1, seen, watched, &freed) < 0;
    }
    if (!err)
        err = add_freed(tracker, freed) < 0;
    Py_XDECREF(freed);
    Py_DECREF(watched);
    Py_DECREF(seen);
    return err ? -1 : 0;
}

/* ``node.release()`` for saved entries of the common kinds, without the call: the node marked
 * released, and a new list of the arrays its entries held (``_arrays_of``): an input tensor's
 * array, an output array, a constant array; a plain-number constant holds none. NULL without an
 * error where an entry is of another kind (a packed value, a constant of another type): nothing
 * changed, and the Python method runs. */
static PyObject *
release_entries(PyObject *node, PyObject *saved)
{
    if (KIND_INPUT == NULL || !PyObject_TypeCheck(node, NodeType) || !PyTuple_CheckExact(saved))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(saved);
    PyObject *arrays = PyList_New(0);
    if (arrays == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry = PyTuple_GET_ITEM(saved, i);
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) < 2)
            goto other;
        PyObject *kind = PyTuple_GET_ITEM(entry, 0), *value = PyTuple_GET_ITEM(entry, 1);
        PyObject *arr;  /* owned */
        if (kind == KIND_INPUT) {
            if ((arr = PyObject_GetAttr(value, s_data)) == NULL)
                goto other;
        }
        else if (kind == KIND_OUTPUT) {
            arr = Py_NewRef(value);
        }
        else if (kind == KIND_CONST && (PyObject *)Py_TYPE(value) == ndarray_type) {
            arr = Py_NewRef(value);
        }
        else if (kind == KIND_CONST) {
            int plain = PySet_Contains(no_buffer_types, (PyObject *)Py_TYPE(value));
            if (plain <= 0)  /* (an error, or a constant of another type) */
                goto other;
            continue;
        }
        else {
            goto other;
        }
        int rc = PyList_Append(arrays, arr);
        Py_DECREF(arr);
        if (rc < 0)
            goto other;
    }
    mark_released(node);
    return arrays;
other:  /* (or an error, set) */
    Py_DECREF(arrays);
    return NULL;
}

/* After ``node``'s backward: ``released = node.release(); tracker.add(node, released)``. */
static int
release_saved(PyObject *node, PyObject *tracker)
{
    PyObject *saved = node_slot(node, SAVED);
    if (saved == NULL)
        return -1;
    int has = PyObject_IsTrue(saved);
    int done = has > 0 ? release_fast(node, saved, tracker) : 0;
    PyObject *released = NULL;
    if (done == 0 && has > 0 && (released = release_entries(node, saved)) == NULL
            && PyErr_Occurred())
        done = -1;
    /* (a lone output array counted as freed dies here; so do the entries released above, and
     * the input tensors only they held: ``release``'s tuple dies as the method returns) */
    Py_DECREF(saved);
    if (has <= 0)  /* nothing saved, or an error */
        return has;
    if (done != 0) {
        Py_XDECREF(released);
        return done < 0 ? -1 : 0;
    }
    if (released == NULL && (released = PyObject_CallMethodNoArgs(node, s_release)) == NULL)
        return -1;
    int any = PyObject_IsTrue(released);
    if (any > 0) {
        any = track_released(tracker, node, released);
        if (any > 0) {  /* (bytes kept per node for an observer: the Python method) */
            PyObject *r = PyObject_CallMethodObjArgs(tracker, s_add, node, released, NULL);
            any = r == NULL ? -1 : 0;
            Py_XDECREF(r);
        }
    }
    Py_DECREF(released);
    return any < 0 ? -1 : 0;
}

/* ``_accumulate``'s first case, without calling it: a leaf with no ``.grad`` and no
 * post-accumulate hook, in a pass no observer watches, gets ``g`` itself as its ``.grad``
 * (``Tensor._make(g)``) when ``_owned(g)`` would keep it: an array that owns its memory or views
 * memory only it sees, writeable and C-contiguous, that nothing but this function holds (the
 * references ``_owned`` counts less its own three). 1: done; 0: not this case, the caller calls
 * ``_accumulate``; -1: an error. */
static int
accumulate_new(PyObject *leaf, PyObject *g, PyObject *observed)
{
    if (observed != Py_False || (PyObject *)Py_TYPE(g) != ndarray_type || Py_REFCNT(g) != 1)
        return 0;
    PyObject *old = PyObject_GetAttr(leaf, s_grad);
    if (old == NULL)
        return -1;
    int fresh = old == Py_None;
    Py_DECREF(old);
    if (!fresh)
        return 0;
    int hooked = attr_truth(leaf, s_post_hooks);
    if (hooked != 0)
        return hooked < 0 ? -1 : 0;
    PyObject *base = PyObject_GetAttr(g, s_base);
    if (base == NULL)
        return -1;
    int owned = 1;
    if (base != Py_None) {  /* a view: of an owner only the view holds (and this ``base``) */
        PyObject *above = Py_REFCNT(base) <= 2 ? PyObject_GetAttr(base, s_base) : NULL;
        if (above == NULL && PyErr_Occurred())
            PyErr_Clear();  /* (``getattr(base, "base", True)``: not an array, not owned) */
        owned = above == Py_None;
        Py_XDECREF(above);
    }
    Py_DECREF(base);
    if (!owned)
        return 0;
    PyObject *flags = PyObject_GetAttr(g, s_flags);
    if (flags == NULL)
        return -1;
    int ok = attr_truth(flags, s_writeable);
    if (ok > 0)
        ok = attr_truth(flags, s_c_contiguous);
    Py_DECREF(flags);
    if (ok <= 0)
        return ok;
    PyObject *t = PyObject_CallOneArg(make_fn, g);
    if (t == NULL)
        return -1;
    int rc = PyObject_SetAttr(leaf, s_grad, t);
    Py_DECREF(t);
    return rc < 0 ? -1 : 1;
}

/* The leaf's gradient: ``_accumulate(leaf, g, False, observed, Tensor)``. ``grads[0]`` is
 * cleared first, so ``_owned`` counts the same references to ``g`` as from the Python loop. */
static int
accumulate_leaf(PyObject *node, PyObject *grads, PyObject *observed)
{
    PyObject *g = PySequence_GetItem(grads, 0);
    if (g == NULL)
        return -1;
    if (g == Py_None) {
        Py_DECREF(g);
        return 0;
    }
    if (PySequence_SetItem(grads, 0, Py_None) < 0) {
        Py_DECREF(g);
        return -1;
    }
    PyObject *leaf = PyObject_GetAttr(node, s_variable);
    if (leaf == NULL) {
        Py_DECREF(g);
        return -1;
    }
    int done = accumulate_new(leaf, g, observed);
    if (done != 0) {
        Py_DECREF(leaf);
        Py_DECREF(g);
        return done < 0 ? -1 : 0;
    }
    PyObject *callargs[5] = {leaf, g, Py_False, observed, TensorClass};
    /* (``g`` is handed over: the call's frame and this function's local hold it) */
    PyObject *r = PyObject_Vectorcall(accumulate_fn, callargs, 5, NULL);
    Py_DECREF(leaf);
    Py_DECREF(g);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* Send one input's gradient ``g`` (borrowed; Py_None for none) to ``nxt``, the producer of
 * input ``i``: the body of ``_execute``'s send loop. ``*follow``/``*follow_grads`` are the
 * node kept in hand and its buffer (owned references). */
static int
send(PyObject *nxt, PyObject *g, PyObject *nrs, Py_ssize_t i, int fit, PyObject *deps,
     PyObject *buffers, PyObject *ready, PyObject **follow, PyObject **follow_grads)
{
    /* remaining = deps[nxt] - 1; deps[nxt] = remaining */
    PyObject *count = PyDict_GetItemWithError(deps, nxt);
    if (count == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, nxt);
        return -1;
    }
    long remaining = PyLong_AsLong(count);
    if (remaining == -1 && PyErr_Occurred())
        return -1;
    remaining -= 1;
    PyObject *rem = PyLong_FromLong(remaining);
    if (rem == NULL)
        return -1;
    int rc = PyDict_SetItem(deps, nxt, rem);
    Py_DECREF(rem);
    if (rc < 0)
        return -1;
    PyObject *buf;  /* owned */
    if (remaining) {
        if (g == Py_None)
            return 0;
        buf = PyDict_GetItemWithError(buffers, nxt);  /* buffers.get(nxt) */
        if (buf == NULL) {
            if (PyErr_Occurred())
                return -1;
            buf = Py_None;
        }
        Py_INCREF(buf);
    }
    else if (PyDict_GET_SIZE(buffers)) {
        buf = pop_buffer(buffers, nxt);
        if (buf == NULL)
            return -1;
    }
    else {
        buf = Py_NewRef(Py_None);
    }
    if (g != Py_None) {
        Py_INCREF(g);  /* (``g`` may be replaced by its fitted form: own it) */
        PyObject *nr = PyTuple_Check(nrs) ? Py_NewRef(PyTuple_GET_ITEM(nrs, i))
                                          : PySequence_GetItem(nrs, i);
        PyObject *num = nr ? PyObject_GetAttr(nxt, s_num_outputs) : NULL;
        int single = num ? PyObject_RichCompareBool(num, one, Py_EQ) : -1;
        Py_XDECREF(num);
        if (single < 0)
            goto fail_g;
        if (fit) {
            PyObject *shape = node_slot(nxt, SHAPE);
            PyObject *dtype = shape ? node_slot(nxt, DTYPE) : NULL;
            if (dtype && !single) {  /* one shape and dtype per output */
                Py_SETREF(shape, PyObject_GetItem(shape, nr));
                if (shape == NULL)
                    Py_CLEAR(dtype);
                else
                    Py_SETREF(dtype, PyObject_GetItem(dtype, nr));
            }
            int need = shape && dtype ? needs_fit(g, shape, dtype) : -1;
            if (need > 0) {  /* g = _fit(g, shape, dtype, False) */
                PyObject *fitted = PyObject_CallFunctionObjArgs(fit_fn, g, shape, dtype,
                                                                Py_False, NULL);
                Py_SETREF(g, fitted);
                need = fitted ? 0 : -1;
            }
            Py_XDECREF(shape);
            Py_XDECREF(dtype);
            if (need < 0)
                goto fail_g;
        }
        if (buf == Py_None) {
            Py_DECREF(buf);
            if (single) {  /* buf = [g] */
                buf = PyList_New(1);
                if (buf == NULL)
                    goto fail_g;
                PyList_SET_ITEM(buf, 0, g);
                g = NULL;
            }
            else {  /* buf = _one_hot(g, nr, nxt.num_outputs) */
                PyObject *n_out = PyObject_GetAttr(nxt, s_num_outputs);
                buf = n_out ? PyObject_CallFunctionObjArgs(one_hot_fn, g, nr, n_out, NULL)
                            : NULL;
                Py_XDECREF(n_out);
                if (buf == NULL)
                    goto fail_g;
                Py_CLEAR(g);
            }
            if (remaining && PyDict_SetItem(buffers, nxt, buf) < 0)
                goto fail_g;
        }
        else {  /* prev = buf[nr]; buf[nr] = g if prev is None else prev + g */
            PyObject *prev = PyObject_GetItem(buf, nr);
            if (prev == NULL)
                goto fail_g;
            if (prev != Py_None) {
                PyObject *sum = PyNumber_Add(prev, g);
                Py_SETREF(g, sum);
            }
            Py_DECREF(prev);
            if (g == NULL || PyObject_SetItem(buf, nr, g) < 0)
                goto fail_g;
            Py_CLEAR(g);
        }
        Py_DECREF(nr);
        goto sent;
    fail_g:
        Py_XDECREF(g);
        Py_XDECREF(nr);
        Py_XDECREF(buf);
        return -1;
    }
sent:
    if (remaining == 0) {
        if (*follow == NULL) {  /* follow, follow_grads = nxt, buf */
            *follow = Py_NewRef(nxt);
            *follow_grads = buf;
            return 0;
        }
        /* several became ready: keep the newest in hand, queue the other */
        long long s_nxt, s_follow;
        if (seq_of(nxt, &s_nxt) < 0 || seq_of(*follow, &s_follow) < 0) {
            Py_DECREF(buf);
            return -1;
        }
        PyObject *queued = Py_NewRef(nxt), *queued_buf = buf;
        if (s_nxt > s_follow) {
            queued = *follow;
            queued_buf = *follow_grads;
            *follow = Py_NewRef(nxt);
            *follow_grads = buf;
            Py_DECREF(nxt);  /* (the Py_NewRef above, for the queued branch) */
        }
        int err = 0;
        if (queued_buf != Py_None && PyDict_SetItem(buffers, queued, queued_buf) < 0)
            err = -1;
        if (!err && push_ready(ready, queued) < 0)
            err = -1;
        Py_DECREF(queued);
        Py_DECREF(queued_buf);
        return err;
    }
    Py_DECREF(buf);
    return 0;
}

/* execute(ready, deps, needed, buffers, tracker, accumulate, observed, counter) -> None
 *
 * ``engine._execute``'s loop for a pass where nothing intercepts gradients: run each node once,
 * newest first, when all its consumers ran. ``counter[0]`` gets the number of nodes run, also
 * when a rule raised. */
static PyObject *
execute(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "execute() takes 8 arguments");
        return NULL;
    }
    PyObject *ready = args[0], *deps = args[1], *needed = args[2], *buffers = args[3];
    PyObject *tracker = args[4], *observed = args[6], *counter = args[7];
    int accumulate = PyObject_IsTrue(args[5]);
    if (accumulate < 0)
        return NULL;
    if (!PyList_Check(ready) || !PyDict_Check(deps) || !PyDict_Check(buffers)) {
        PyErr_SetString(PyExc_TypeError, "execute(): ready, deps, buffers: list, dict, dict");
        return NULL;
    }
    if (needed == Py_None)
        needed = NULL;
    if (tracker == Py_None)
        tracker = NULL;
    long executed = 0;
    int err = 0;
    PyObject *follow = NULL, *follow_grads = NULL;  /* owned */
    PyObject *node = NULL, *grads = NULL, *results = NULL, *nrs = NULL;
    Edges e = {{NULL, NULL, NULL}, NULL, 0};

    for (;;) {
        /* node, grads: the node kept in hand, unless an older one in the heap is newer */
        int take_follow = 0;
        if (follow != NULL) {
            take_follow = 1;
            if (PyList_GET_SIZE(ready)) {
                long long top, s_follow;
                if (heap_top_seq(ready, &top) < 0 || seq_of(follow, &s_follow) < 0)
                    goto fail;
                take_follow = s_follow > top;
            }
        }
        if (take_follow) {
            node = follow;
            grads = follow_grads;
            follow = follow_grads = NULL;
        }
        else {
            if (follow != NULL) {  /* an older node is ready too: the heap orders them */
                if (follow_grads != Py_None && PyDict_SetItem(buffers, follow, follow_grads) < 0)
                    goto fail;
                if (push_ready(ready, follow) < 0)
                    goto fail;
                Py_CLEAR(follow);
                Py_CLEAR(follow_grads);
            }
            if (!PyList_GET_SIZE(ready))
                break;
            PyObject *entry = PyObject_CallOneArg(heappop, ready);
            if (entry == NULL)
                goto fail;
            node = PySequence_GetItem(entry, 1);
            Py_DECREF(entry);
            if (node == NULL)
                goto fail;
            grads = pop_buffer(buffers, node);
            if (grads == NULL)
                goto fail;
        }
        executed += 1;
        if ((PyObject *)Py_TYPE(node) == AccumulateGrad) {
            if (accumulate && grads != Py_None && accumulate_leaf(node, grads, observed) < 0)
                goto fail;
            Py_CLEAR(node);
            Py_CLEAR(grads);
            continue;
        }
        nrs = node_slot(node, NEXT_NR);
        if (nrs == NULL)
            goto fail;
        if (grads == Py_None) {  /* results = (None,) * len(node._next_nr) */
            Py_ssize_t n = PyObject_Length(nrs);
            if (n < 0 || (results = PyTuple_New(n)) == NULL)
                goto fail;
            for (Py_ssize_t i = 0; i < n; i++)
                PyTuple_SET_ITEM(results, i, Py_NewRef(Py_None));
        }
        else {
            int donated = donate(grads);
            if (donated < 0)
                goto fail;
            results = run_rule(node, grads);
            if (donated && PyList_SetItem(donation, 0, Py_NewRef(Py_None)) < 0)
                Py_CLEAR(results);
            if (results == NULL)
                goto fail;
        }
        if (tracker != NULL && release_saved(node, tracker) < 0)
            goto fail;
        Py_SETREF(nrs, node_slot(node, NEXT_NR));  /* (read after the rule, as Python does) */
        if (nrs == NULL)
            goto fail;
        /* Send: each input's gradient to the node that made that input. */
        int fit = class_flag(node, s_fit_grads);
        if (fit < 0 || edges_read(node, nrs, &e) < 0)
            goto fail;
        for (Py_ssize_t i = 0; i < e.n; i++) {
            PyObject *nxt = edge_at(&e, i);
            if (nxt == Py_None)
                continue;
            if (needed != NULL) {
                int in = PySet_Contains(needed, nxt);
                if (in < 0)
                    goto fail;
                if (!in)
                    continue;
            }
            PyObject *g;  /* results[i] */
            if (PyTuple_CheckExact(results) && i < PyTuple_GET_SIZE(results)) {
                g = Py_NewRef(PyTuple_GET_ITEM(results, i));
            }
            else {
                PyObject *index = PyLong_FromSsize_t(i);
                g = index ? PyObject_GetItem(results, index) : NULL;
                Py_XDECREF(index);
            }
            if (g == NULL)
                goto fail;
            int rc = send(nxt, g, nrs, i, fit, deps, buffers, ready, &follow, &follow_grads);
            Py_DECREF(g);
            if (rc < 0)
                goto fail;
        }
        edges_clear(&e);
        Py_CLEAR(nrs);
        Py_CLEAR(results);  /* (``del results, grads``: the gradients die here) */
        Py_CLEAR(grads);
        Py_CLEAR(node);
    }
    goto done;
fail:
    err = -1;
done:
    edges_clear(&e);
    Py_XDECREF(nrs);
    Py_XDECREF(results);
    Py_XDECREF(grads);
    Py_XDECREF(node);
    Py_XDECREF(follow);
    Py_XDECREF(follow_grads);
    {
        PyObject *type = NULL, *value = NULL, *tb = NULL;
        if (err)
            PyErr_Fetch(&type, &value, &tb);
        PyObject *count = PyLong_FromLong(executed);
        if (count == NULL) {
            if (err)
                PyErr_Restore(type, value, tb);
            return NULL;
        }
        int rc = -1;
        if (PyList_Check(counter))
            rc = PyList_SetItem(counter, 0, count);  /* (steals ``count``) */
        else
            Py_DECREF(count);
        if (rc < 0 && !err && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "execute(): counter must be a one-item list");
        if (err)
            PyErr_Restore(type, value, tb);
        if (err || rc < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

/* configure(zero_nrs, AccumulateGrad, heappush, heappop, accumulate, fit, one_hot,
 *           backward_on_tensors, runs_user_code, Tensor, ndarray, donation, Node) */
static PyObject *
configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 13 || !PyType_Check(args[12]) || !PyList_CheckExact(args[11])
            || PyList_GET_SIZE(args[11]) != 1) {
        PyErr_SetString(PyExc_TypeError,
                        "configure() takes 11 objects, a one-item list and the Node class");
        return NULL;
    }
    PyTypeObject *node = (PyTypeObject *)args[12];
    for (int i = 0; i < N_SLOTS; i++)
        if (slot_offset(node, slot_names[i], &slot_offsets[i]) < 0)
            return NULL;
    Py_XSETREF(NodeType, (PyTypeObject *)Py_NewRef(node));
    PyObject *zero_nrs = args[0];
    if (!PyTuple_Check(zero_nrs) || PyTuple_GET_SIZE(zero_nrs) < 4) {
        PyErr_SetString(PyExc_TypeError, "configure(): zero_nrs must be a tuple of 4");
        return NULL;
    }
    PyObject **slots[] = {&ZERO_NRS0, &ZERO_NRS1, &ZERO_NRS2, &ZERO_NRS3};
    for (int i = 0; i < 4; i++)
        Py_XSETREF(*slots[i], Py_NewRef(PyTuple_GET_ITEM(zero_nrs, i)));
    PyObject **objs[] = {&AccumulateGrad, &heappush, &heappop, &accumulate_fn, &fit_fn,
                         &one_hot_fn, &on_tensors_fn, &runs_user_code_fn, &TensorClass,
                         &ndarray_type, &donation};
    for (int i = 0; i < 11; i++)
        Py_XSETREF(*objs[i], Py_NewRef(args[i + 1]));
    Py_XSETREF(make_fn, PyObject_GetAttrString(TensorClass, "_make"));
    if (make_fn == NULL)
        return NULL;
    Py_RETURN_NONE;
}

/* configure_release(input_kind, output_kind, const_kind, nothing, no_buffer_types):
 * ``graph``'s objects that ``release_fast`` and ``release_entries`` compare saved entries
 * against. */
static PyObject *
configure_release(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyAnySet_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "configure_release() takes three kinds, the empty "
                        "entry and a set of types");
        return NULL;
    }
    PyObject **objs[] = {&KIND_INPUT, &KIND_OUTPUT, &KIND_CONST, &NOTHING, &no_buffer_types};
    for (int i = 0; i < 5; i++)
        Py_XSETREF(*objs[i], Py_NewRef(args[i]));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "Hand the loops the engine's objects they call or compare against."},
    {"configure_release", (PyCFunction)(void (*)(void))configure_release, METH_FASTCALL,
     "Hand the loop graph's saved-entry kinds, for releasing the common saves in C."},
    {"discover", (PyCFunction)(void (*)(void))discover, METH_FASTCALL,
     "engine._discover's walk over the graph."},
    {"execute", (PyCFunction)(void (*)(void))execute, METH_FASTCALL,
     "engine._execute's loop, for a pass where nothing intercepts gradients."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_loop", "The backward pass's per-node loops, compiled.", -1, methods,
};

PyMODINIT_FUNC
PyInit__loop(void)
{
    struct { PyObject **slot; const char *name; } names[] = {
        {&s_next, "_next"}, {&s_fit_grads, "fit_grads"}, {&s_num_outputs, "num_outputs"},
        {&s_shape, "shape"}, {&s_dtype, "dtype"},
        {&s_release, "release"}, {&s_add, "add"}, {&s_variable, "variable"},
        {&s_on_tensors, "on_tensors"}, {&s_backward, "backward"}, {&s_hooks, "_hooks"},
        {&s_pre_hooks, "_pre_hooks"}, {&s_tensor_hooks, "_tensor_hooks"},
        {&s_runs_user_code, "runs_user_code"}, {&s_base, "base"}, {&s_nbytes, "nbytes"},
        {&s_freed, "_freed"}, {&s_seen, "_seen"}, {&s_by_node, "_by_node"},
        {&s_released, "_released"}, {&s_grad, "_grad"}, {&s_post_hooks, "_post_hooks"},
        {&s_flags, "flags"}, {&s_writeable, "writeable"}, {&s_c_contiguous, "c_contiguous"},
        {&s_data, "_data"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *names[i].slot = PyUnicode_InternFromString(names[i].name);
        if (*names[i].slot == NULL)
            return NULL;
    }
    zero = PyLong_FromLong(0);
    one = PyLong_FromLong(1);
    if (zero == NULL || one == NULL)
        return NULL;
    for (int i = 0; i < N_SLOTS; i++) {
        slot_strings[i] = PyUnicode_InternFromString(slot_names[i]);
        if (slot_strings[i] == NULL)
            return NULL;
    }
    return PyModule_Create(&moduledef);
}
