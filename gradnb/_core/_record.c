/* ``record``'s common case, compiled.
 *
 * Every op ends in ``gradnb._core.record.record``: decide whether to record, link a node to the
 * inputs' producers, wrap the output array in a tensor, keep what the node's backward reads.
 * On the tiny tensors of a chain of elementwise ops that bookkeeping cost more than the op's
 * NumPy call. This module does the same steps for the case nearly every op is in (one to three
 * tensor inputs, one output array, a one-input view op's output made by ``record._view``, no
 * in-place rebase, no custom Function context, no anomaly mode, no observer, no inference
 * tensors, no saved-tensor hooks), with the same objects, statement for statement (each block
 * names the Python it stands for). For
 * anything else, and before any side effect, it calls the Python ``record``: there is one
 * algorithm, and this module is an optional extension (without a C compiler the Python function
 * is ``record``).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_slots.h"

/* Set once by ``configure``. */
static PyTypeObject *TensorType, *NodeType, *ndarray_type;
static PyObject *OutputType;
static PyObject *grad_off_threads, *inference_threads, *grad_state, *switches, *observers;
static PyObject *sequence;                  /* graph._sequence (itertools.count) */
static PyObject *ZERO_NRS1, *ZERO_NRS2, *ZERO_NRS3, *SAVE_SECOND, *NOTHING, *KIND_INPUT,
    *KIND_OUTPUT, *KIND_CONST;
static PyObject *refresh_fn, *accumulator_fn, *keep_saved_fn, *save_input_fn, *python_record;
static PyObject *view_fn;                   /* record._view, set by ``configure_views`` */
static PyTypeObject *AccumulateGradType;    /* set by ``configure_leaves`` */
static Py_ssize_t a_variable;               /* its ``variable`` slot */

/* Offsets of the slots both classes declare in ``__slots__``. */
static Py_ssize_t t_data, t_requires_grad, t_grad_fn, t_output_nr, t_version_counter;
static Py_ssize_t n_next0, n_next1, n_next2, n_next_nr, n_seq, n_shape, n_dtype, n_saved;

static PyObject *s_save, *s_attrs, *s_operands, *s_into, *s_ctx, *s_is_view, *s_enabled,
    *s_anomaly, *s_saved_tensor_hooks, *s_grad_fn_version, *s_save_spec, *s_prepare, *s_shape,
    *s_dtype, *s_inference, *s_index, *s_accumulator, *s_grad_through_base, *zero, *one;

/* The last node's output shape and the last ``x * number`` saved pair, shared with the next
 * node when equal: a chain of ops on one shape, multiplying by one number, then adds no object
 * per op for the cyclic garbage collector to count and walk (both hold only numbers). */
static PyObject *last_shape, *last_number, *last_number_saved;

/* The same for ``x * c`` of a constant tensor ``c``: the last pair ``(_NOTHING, (_INPUT, c,
 * version))`` is shared while its node lives and still holds it, and ``c`` has not been written
 * since. The cache owns nothing of it (a weak reference to that node, the pair borrowed from
 * it), so it keeps no tensor alive a moment longer than the graph does. */
static PyObject *pair_holder;  /* weakref to the node holding ``pair`` */
static PyObject *pair;         /* borrowed from that node */

static PyObject *
shared_tensor_pair(PyObject *t)
{
    if (pair_holder == NULL)
        return NULL;
    PyObject *holder = PyWeakref_GetObject(pair_holder);
    if (holder == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (holder == Py_None || SLOT(holder, n_saved) != pair)
        return NULL;
    /* (the node may hold another tuple at the same address by now: check what it says) */
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2
            || PyTuple_GET_ITEM(pair, 0) != NOTHING)
        return NULL;
    PyObject *entry = PyTuple_GET_ITEM(pair, 1);
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3
            || PyTuple_GET_ITEM(entry, 0) != KIND_INPUT || PyTuple_GET_ITEM(entry, 1) != t)
        return NULL;
    PyObject *vc = SLOT(t, t_version_counter);
    if (vc == NULL || !PyList_Check(vc) || PyList_GET_SIZE(vc) < 1)
        return NULL;
    int same = PyObject_RichCompareBool(PyList_GET_ITEM(vc, 0), PyTuple_GET_ITEM(entry, 2), Py_EQ);
    if (same <= 0) {
        PyErr_Clear();
        return NULL;
    }
    return Py_NewRef(pair);
}

/* Set a slot: takes a new reference to ``v``, releases what the slot held. */
static inline void
set_slot(PyObject *obj, Py_ssize_t off, PyObject *v)
{
    PyObject *old = SLOT(obj, off);
    SLOT(obj, off) = Py_NewRef(v);
    Py_XDECREF(old);
}

/* A slot's value (borrowed); NULL with AttributeError when it was never set. */
static inline PyObject *
get_slot(PyObject *obj, Py_ssize_t off, const char *name)
{
    PyObject *v = SLOT(obj, off);
    if (v == NULL)
        PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '%s'",
                     Py_TYPE(obj)->tp_name, name);
    return v;
}

static inline int
truth(PyObject *v)
{
    return v == Py_True ? 1 : v == Py_False || v == Py_None ? 0 : PyObject_IsTrue(v);
}

/* Whether input ``t`` (a tensor, None, or NULL for no second input) requires grad: 1 or 0,
 * -1 with AttributeError for a tensor whose slot was never set. */
static int
requires_grad(PyObject *t)
{
    if (t == NULL || t == Py_None)
        return 0;
    PyObject *v = get_slot(t, t_requires_grad, "_requires_grad");
    return v == NULL ? -1 : truth(v);
}

/* ---- the Python ``record``, for everything this module leaves to it ----------------------- */
static PyObject *
slow(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return PyObject_Vectorcall(python_record, args, nargs, kwnames);
}

/* ``Tensor._make(data, requires_grad, grad_fn)`` (no inference tensor: checked before). */
static PyObject *
make_tensor(PyObject *data, PyObject *requires_grad, PyObject *grad_fn)
{
    PyObject *t = TensorType->tp_alloc(TensorType, 0);
    if (t == NULL)
        return NULL;
    PyObject *version = PyList_New(1);
    if (version == NULL) {
        Py_DECREF(t);
        return NULL;
    }
    PyList_SET_ITEM(version, 0, Py_NewRef(zero));
    /* A version counter only ever holds an int, so it can take part in no reference cycle:
     * the cyclic garbage collector need not walk it (one object less per op for every
     * collection to visit, on a live graph). */
    PyObject_GC_UnTrack(version);
    set_slot(t, t_data, data);
    set_slot(t, t_requires_grad, requires_grad);
    set_slot(t, t_grad_fn, grad_fn);
    set_slot(t, t_output_nr, zero);
    SLOT(t, t_version_counter) = version;
    return t;
}

/* ``if t._grad_fn_version is not None and t._grad_fn_version != t._version_counter[0]:
 * refresh(t)`` -- a view whose base was written in place since its grad_fn was made. */
static int
refresh_if_stale(PyObject *t)
{
    PyObject *seen = PyObject_GetAttr(t, s_grad_fn_version);
    if (seen == NULL)
        return -1;
    int rc = 0;
    if (seen != Py_None) {
        PyObject *vc = get_slot(t, t_version_counter, "_version_counter");
        PyObject *now = vc ? PySequence_GetItem(vc, 0) : NULL;
        int stale = now ? PyObject_RichCompareBool(seen, now, Py_NE) : -1;
        Py_XDECREF(now);
        if (stale > 0) {
            PyObject *r = PyObject_CallOneArg(refresh_fn, t);
            stale = r ? 0 : -1;
            Py_XDECREF(r);
        }
        rc = stale;
    }
    Py_DECREF(seen);
    return rc;
}

/* ``graph.accumulator(t)`` for leaf ``t``, statement for statement: the AccumulateGrad node its
 * weak reference still reaches, or a new one, made as ``AccumulateGrad.__init__`` makes it and
 * kept by a new weak reference. NULL without an error where the Python function answers: a view
 * that requires grad through its base alone, or before ``configure_leaves``. */
static PyObject *
leaf_node(PyObject *t)
{
    if (AccumulateGradType == NULL)
        return NULL;
    PyObject *ref = PyObject_GetAttr(t, s_accumulator);
    if (ref == NULL)
        return NULL;
    PyObject *node = ref == Py_None ? Py_NewRef(Py_None) : PyObject_CallNoArgs(ref);
    Py_DECREF(ref);
    if (node != Py_None)  /* alive (or an error) */
        return node;
    Py_DECREF(node);
    PyObject *through = PyObject_GetAttr(t, s_grad_through_base);
    int flag = through ? PyObject_IsTrue(through) : -1;
    Py_XDECREF(through);
    if (flag != 0)
        return NULL;
    PyObject *data = get_slot(t, t_data, "_data");
    PyObject *shape = data ? PyObject_GetAttr(data, s_shape) : NULL;
    PyObject *dtype = shape ? PyObject_GetAttr(data, s_dtype) : NULL;
    PyObject *seq = dtype ? PyIter_Next(sequence) : NULL;
    node = seq ? AccumulateGradType->tp_alloc(AccumulateGradType, 0) : NULL;
    if (node != NULL) {
        PyObject *empty = PyTuple_New(0);
        if (empty == NULL) {
            Py_CLEAR(node);
        }
        else {
            set_slot(node, a_variable, t);
            set_slot(node, n_next_nr, empty);
            set_slot(node, n_saved, empty);
            set_slot(node, n_shape, shape);
            set_slot(node, n_dtype, dtype);
            set_slot(node, n_seq, seq);
            Py_DECREF(empty);
        }
    }
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    Py_XDECREF(seq);
    if (node == NULL)
        return NULL;
    PyObject *weak = PyWeakref_NewRef(node, NULL);
    if (weak == NULL || PyObject_SetAttr(t, s_accumulator, weak) < 0)
        Py_CLEAR(node);
    Py_XDECREF(weak);
    return node;
}

/* The producer of input ``t`` and its output number: ``t._grad_fn`` (``accumulator(t)`` for
 * a leaf) and ``t._output_nr`` (0 for a leaf). New reference in ``*fn``, borrowed ``*nr``. */
static int
producer(PyObject *t, PyObject **fn, PyObject **nr)
{
    PyObject *f = get_slot(t, t_grad_fn, "_grad_fn");
    if (f == NULL)
        return -1;
    if (f == Py_None) {
        *fn = leaf_node(t);
        if (*fn == NULL && !PyErr_Occurred())
            *fn = PyObject_CallOneArg(accumulator_fn, t);
        *nr = zero;
        return *fn ? 0 : -1;
    }
    *nr = get_slot(t, t_output_nr, "_output_nr");
    if (*nr == NULL)
        return -1;
    *fn = Py_NewRef(f);
    return 0;
}

/* Whether saving goes through saved-tensor hooks now (``switches.saved_tensor_hooks``): then
 * the Python ``graph.save`` packs each value. 1, 0, or -1 on error. */
static int
saving_packs(void)
{
    PyObject *hooks = PyObject_GetAttr(switches, s_saved_tensor_hooks);
    int packing = hooks ? truth(hooks) : -1;
    Py_XDECREF(hooks);
    return packing;
}

/* Whether ``t`` is an inference tensor, which ``graph.save`` refuses to save. 1, 0, -1. */
static int
inference_tensor(PyObject *t)
{
    PyObject *inf = PyObject_GetAttr(t, s_inference);
    int refused = inf ? truth(inf) : -1;
    Py_XDECREF(inf);
    return refused;
}

/* ``(_INPUT, t, t._version_counter[0])``: ``graph._save_input(t)`` without hooks. */
static PyObject *
input_entry(PyObject *t)
{
    PyObject *vc = get_slot(t, t_version_counter, "_version_counter");
    PyObject *v = vc ? PySequence_GetItem(vc, 0) : NULL;
    if (v == NULL)
        return NULL;
    PyObject *entry = PyTuple_Pack(3, KIND_INPUT, t, v);
    Py_DECREF(v);
    return entry;
}

/* ``graph.save``'s entries for a plain spec, with no saved-tensor hooks, or 1 when the spec
 * needs the Python function (an inference tensor to refuse, an item kind not handled here). */
static int
build_entries(PyObject *spec, PyObject *inputs, PyObject *out, PyObject *operands,
              PyObject **result)
{
    Py_ssize_t n = PyTuple_GET_SIZE(spec);
    PyObject *entries = PyTuple_New(n);
    if (entries == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(spec, i), *entry = NULL;
        if (PyLong_CheckExact(item)) {  /* an input position */
            Py_ssize_t k = PyLong_AsSsize_t(item);
            if (k < 0 || k >= PyTuple_GET_SIZE(inputs))
                goto python_clear;  /* (an OverflowError, or a position Python will refuse) */
            PyObject *t = PyTuple_GET_ITEM(inputs, k);
            if (t == Py_None) {  /* (_CONST, operands[item]) */
                PyObject *v = operands == NULL || operands == Py_None ? NULL
                                                                      : PySequence_GetItem(operands, k);
                if (v == NULL)
                    goto python_clear;
                entry = PyTuple_Pack(2, KIND_CONST, v);
                Py_DECREF(v);
            }
            else {  /* (_INPUT, t, t._version_counter[0]); an inference tensor: refused */
                int refused = inference_tensor(t);
                if (refused) {
                    if (refused < 0) {
                        Py_DECREF(entries);
                        return -1;
                    }
                    goto python;
                }
                entry = input_entry(t);
            }
        }
        else if (item == Py_None) {
            entry = Py_NewRef(NOTHING);
        }
        else if ((PyObject *)Py_TYPE(item) == OutputType) {
            /* (_OUTPUT, t._data, t._version_counter, t._version_counter[0], t._output_nr) */
            PyObject *index = PyObject_GetAttr(item, s_index);
            int first = index ? PyObject_RichCompareBool(index, zero, Py_EQ) : -1;
            Py_XDECREF(index);
            if (first != 1)
                goto python_clear;
            PyObject *vc = SLOT(out, t_version_counter);
            PyObject *v = PySequence_GetItem(vc, 0);
            if (v == NULL)
                goto python_clear;
            entry = PyTuple_Pack(5, KIND_OUTPUT, SLOT(out, t_data), vc, v, zero);
            Py_DECREF(v);
        }
        else if (PyTuple_CheckExact(item)) {
            entry = Py_NewRef(item);
        }
        else {
            goto python;
        }
        if (entry == NULL) {
            Py_DECREF(entries);
            return -1;
        }
        PyTuple_SET_ITEM(entries, i, entry);
    }
    *result = entries;
    return 0;
python_clear:
    PyErr_Clear();
python:
    Py_DECREF(entries);
    return 1;
}

/* ``x * 0.5``'s saved value, ``(_NOTHING, (_CONST, operands[1]))``: shared with the last
 * node that saved the same number object. */
static PyObject *
number_pair(PyObject *operands)
{
    PyObject *v = PyObject_GetItem(operands ? operands : Py_None, one);
    if (v == NULL)
        return NULL;
    if (v == last_number) {
        Py_DECREF(v);
        return Py_NewRef(last_number_saved);
    }
    PyObject *entry = PyTuple_Pack(2, KIND_CONST, v);
    PyObject *saved = entry ? PyTuple_Pack(2, NOTHING, entry) : NULL;
    Py_XDECREF(entry);
    if (saved != NULL && (PyFloat_CheckExact(v) || PyLong_CheckExact(v))) {
        Py_XSETREF(last_number, Py_NewRef(v));
        Py_XSETREF(last_number_saved, Py_NewRef(saved));
    }
    Py_DECREF(v);
    return saved;
}

/* ``x * c``'s saved value for a constant tensor ``t``, ``(_NOTHING, save_input(t))``: shared
 * with the last node that saved ``t`` at its current version, while that node holds it. With
 * saved-tensor hooks, or for an inference tensor, ``graph._save_input`` makes the entry. */
static PyObject *
tensor_pair(PyObject *node, PyObject *t)
{
    int python = saving_packs();
    if (python == 0)
        python = inference_tensor(t);
    if (python < 0)
        return NULL;
    PyObject *saved, *entry;
    if (python) {
        entry = PyObject_CallOneArg(save_input_fn, t);
        saved = entry ? PyTuple_Pack(2, NOTHING, entry) : NULL;
        Py_XDECREF(entry);
        return saved;
    }
    saved = shared_tensor_pair(t);
    if (saved != NULL)
        return saved;
    entry = input_entry(t);
    saved = entry ? PyTuple_Pack(2, NOTHING, entry) : NULL;
    Py_XDECREF(entry);
    PyObject *ref = saved ? PyWeakref_NewRef(node, NULL) : NULL;
    if (ref == NULL) {
        Py_XDECREF(saved);
        return NULL;
    }
    Py_XSETREF(pair_holder, ref);
    pair = saved;
    return saved;
}

/* What the node keeps: ``record``'s ``save`` handling. */
static int
keep_saved(PyObject *cls, PyObject *node, PyObject *save, PyObject *inputs, PyObject *out,
           PyObject *operands)
{
    PyObject *spec;
    if (save == NULL || save == Py_None) {  /* spec = cls._save_spec (prepared if need be) */
        spec = _PyType_Lookup((PyTypeObject *)cls, s_save_spec);  /* (a class attribute) */
        spec = spec != NULL && Py_TYPE(spec)->tp_descr_get == NULL
            ? Py_NewRef(spec) : PyObject_GetAttr(cls, s_save_spec);
        if (spec == NULL)
            return -1;
        if (!PyTuple_CheckExact(spec)) {
            PyObject *prepare = PyObject_GetAttr(spec, s_prepare);
            Py_DECREF(spec);
            if (prepare == NULL)
                return -1;
            spec = PyObject_CallFunctionObjArgs(prepare, node, inputs, NULL);
            Py_DECREF(prepare);
            if (spec == NULL)
                return -1;
        }
    }
    else if (PyTuple_CheckExact(save)) {
        spec = Py_NewRef(save);
    }
    else {
        spec = PyObject_CallNoArgs(save);
        if (spec == NULL)
            return -1;
    }
    int any = PyObject_IsTrue(spec);
    PyObject *saved = NULL;
    if (any < 0)
        goto done;
    if (!any) {
        saved = PyTuple_New(0);
    }
    else if (spec == SAVE_SECOND) {  /* (_NOTHING, what the second input's entry is) */
        PyObject *second = PySequence_GetItem(inputs, 1);
        saved = second == NULL ? NULL
            : second == Py_None ? number_pair(operands) : tensor_pair(node, second);
        Py_XDECREF(second);
    }
    else {
        int python = 1;
        int packing = saving_packs();
        if (packing < 0) {
            any = -1;
            goto done;
        }
        if (!packing && PyTuple_CheckExact(spec)) {
            python = build_entries(spec, inputs, out, operands, &saved);
            if (python < 0) {
                any = -1;
                goto done;
            }
        }
        if (python) {  /* graph.save(node, spec, inputs, outputs, operands) */
            PyObject *r = PyObject_CallFunctionObjArgs(keep_saved_fn, node, spec, inputs, out,
                                                       operands ? operands : Py_None, NULL);
            any = r ? 0 : -1;
            Py_XDECREF(r);
            goto done;
        }
    }
    if (saved == NULL) {
        any = -1;
        goto done;
    }
    set_slot(node, n_saved, saved);
    Py_DECREF(saved);
    any = 0;
done:
    Py_DECREF(spec);
    return any < 0 ? -1 : 0;
}

/* record(cls, inputs, data, *, save=None, attrs=None, operands=None, into=None, ctx=None) */
static PyObject *
record(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs != 3)
        return slow(args, nargs, kwnames);
    PyObject *cls = args[0], *inputs = args[1], *data = args[2];
    PyObject *save = NULL, *attrs = NULL, *operands = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i), *value = args[nargs + i];
        if (name == s_save)
            save = value;
        else if (name == s_operands)
            operands = value;
        else if (name == s_attrs)
            attrs = value;
        else if ((name == s_into || name == s_ctx) && value == Py_None)
            ;
        else  /* into=, ctx=, or a name spelled by a caller's own string */
            return slow(args, nargs, kwnames);
    }
    if ((attrs != NULL && attrs != Py_None && !PyDict_CheckExact(attrs))
            || Py_TYPE(data) != ndarray_type || !PyTuple_CheckExact(inputs)
            || PyTuple_GET_SIZE(inputs) < 1 || PyTuple_GET_SIZE(inputs) > 3
            || !PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, NodeType))
        return slow(args, nargs, kwnames);
    Py_ssize_t n = PyTuple_GET_SIZE(inputs);
    PyObject *a = PyTuple_GET_ITEM(inputs, 0), *b = n >= 2 ? PyTuple_GET_ITEM(inputs, 1) : NULL;
    PyObject *c = n == 3 ? PyTuple_GET_ITEM(inputs, 2) : NULL;  /* (addmm: every F.linear) */
    if ((a == Py_None && n == 1) || (a != Py_None && !PyObject_TypeCheck(a, TensorType))
            || (b != NULL && b != Py_None && !PyObject_TypeCheck(b, TensorType))
            || (c != NULL && c != Py_None && !PyObject_TypeCheck(c, TensorType)))
        return slow(args, nargs, kwnames);
    /* (inference tensors are made by the Python function) */
    PyObject *count = PyList_GET_ITEM(inference_threads, 0);
    if (count != zero && truth(count))
        return slow(args, nargs, kwnames);
    /* cls.is_view, from the class's attribute cache (a plain class attribute): a one-input
     * view op (``weight.t()`` in every linear layer, ``x.view()``, ``x[i]``) makes its output
     * with ``record._view``; other views go to the Python function. */
    PyObject *is_view = _PyType_Lookup((PyTypeObject *)cls, s_is_view);
    int view = is_view == NULL || Py_TYPE(is_view)->tp_descr_get != NULL ? -1 : truth(is_view);
    if (view < 0 || (view && (n != 1 || view_fn == NULL)))
        return slow(args, nargs, kwnames);

    /* on = grad mode on and an input requires grad */
    int on = 1;
    count = PyList_GET_ITEM(grad_off_threads, 0);
    if (count != zero && truth(count)) {
        PyObject *enabled = PyObject_GetAttr(grad_state, s_enabled);
        if (enabled == NULL)
            return NULL;
        on = truth(enabled);
        Py_DECREF(enabled);
        if (on < 0)
            return NULL;
    }
    int ra = 0, rb = 0, rc = 0;
    if (on) {
        if ((ra = requires_grad(a)) < 0 || (rb = requires_grad(b)) < 0
                || (rc = requires_grad(c)) < 0)
            return NULL;
        on = ra || rb || rc;
    }
    if (!on)  /* the common case without a graph: ``_make(data)`` (a view: ``_view``) */
        return view ? PyObject_CallFunctionObjArgs(view_fn, data, a, Py_None, NULL)
                    : make_tensor(data, Py_False, Py_None);
    PyObject *anomaly = PyObject_GetAttr(switches, s_anomaly);
    if (anomaly == NULL)
        return NULL;
    Py_DECREF(anomaly);
    if (anomaly != Py_None || PyList_GET_SIZE(observers))
        return slow(args, nargs, kwnames);

    /* Bring stale views up to date (which can make a view require grad), then link the node
     * to each input's producer: one input is linked as it is, two or three by whether each
     * requires grad now. */
    if ((a != Py_None && refresh_if_stale(a) < 0)
            || (b != NULL && b != Py_None && refresh_if_stale(b) < 0)
            || (c != NULL && c != Py_None && refresh_if_stale(c) < 0))
        return NULL;
    if (n == 1)
        ra = 1;
    else if ((ra = requires_grad(a)) < 0 || (rb = requires_grad(b)) < 0
             || (rc = requires_grad(c)) < 0)
        return NULL;
    PyObject *node = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (node == NULL)
        return NULL;
    PyObject *out = NULL, *fa = NULL, *fb = NULL, *fc = NULL, *nra = zero, *nrb = zero,
        *nrc = zero, *nrs = NULL;
    if (ra && producer(a, &fa, &nra) < 0)
        goto fail;
    if (rb && producer(b, &fb, &nrb) < 0)
        goto fail;
    if (rc && producer(c, &fc, &nrc) < 0)
        goto fail;
    int nonzero_a = truth(nra), nonzero_b = truth(nrb), nonzero_c = truth(nrc);
    if (nonzero_a < 0 || nonzero_b < 0 || nonzero_c < 0)
        goto fail;
    if (n == 3) {  /* tuple(nrs) if any(nrs) else _ZERO_NRS[3] */
        nrs = nonzero_a || nonzero_b || nonzero_c ? PyTuple_Pack(3, nra, nrb, nrc)
                                                  : Py_NewRef(ZERO_NRS3);
        set_slot(node, n_next1, fb ? fb : Py_None);
        set_slot(node, n_next2, fc ? fc : Py_None);
    }
    else if (n == 2) {  /* (ra, rb) if ra or rb else _ZERO_NRS2 */
        nrs = nonzero_a || nonzero_b ? PyTuple_Pack(2, nra, nrb) : Py_NewRef(ZERO_NRS2);
        set_slot(node, n_next1, fb ? fb : Py_None);
    }
    else {
        nrs = nonzero_a ? PyTuple_Pack(1, nra) : Py_NewRef(ZERO_NRS1);
    }
    if (nrs == NULL)
        goto fail;
    set_slot(node, n_next0, fa ? fa : Py_None);
    Py_XSETREF(SLOT(node, n_next_nr), nrs);
    PyObject *seq = PyIter_Next(sequence);  /* node._seq = next(_sequence) */
    if (seq == NULL)
        goto fail;
    Py_XSETREF(SLOT(node, n_seq), seq);
    if (attrs != NULL && attrs != Py_None) {  /* setattr(node, name, value) for each */
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(attrs, &pos, &key, &value))
            if (PyObject_SetAttr(node, key, value) < 0)
                goto fail;
    }
    /* The output tensor; the node keeps its shape and dtype. */
    PyObject *shape = PyObject_GetAttr(data, s_shape);
    if (shape == NULL)
        goto fail;
    if (last_shape != NULL && shape != last_shape) {
        int same = PyObject_RichCompareBool(shape, last_shape, Py_EQ);
        if (same < 0) {
            Py_DECREF(shape);
            goto fail;
        }
        if (same)
            Py_SETREF(shape, Py_NewRef(last_shape));
    }
    if (shape != last_shape)
        Py_XSETREF(last_shape, Py_NewRef(shape));
    Py_XSETREF(SLOT(node, n_shape), shape);  /* (``attrs`` may have set any slot) */
    PyObject *dtype = PyObject_GetAttr(data, s_dtype);
    if (dtype == NULL)
        goto fail;
    Py_XSETREF(SLOT(node, n_dtype), dtype);
    out = view ? PyObject_CallFunctionObjArgs(view_fn, data, a, node, NULL)
               : make_tensor(data, Py_True, node);
    if (out == NULL || keep_saved(cls, node, save, inputs, out, operands) < 0)
        goto fail;
    Py_XDECREF(fa);
    Py_XDECREF(fb);
    Py_XDECREF(fc);
    Py_DECREF(node);
    return out;
fail:
    Py_XDECREF(fa);
    Py_XDECREF(fb);
    Py_XDECREF(fc);
    Py_XDECREF(out);
    Py_DECREF(node);
    return NULL;
}

/* configure(Tensor, Node, ndarray, Output, grad_off_threads, inference_threads, grad_state,
 *           switches, observers, sequence, zero_nrs, SAVE_SECOND, NOTHING, kinds,
 *           refresh, accumulator, keep_saved, save_input, python_record) */
static PyObject *
configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 19) {
        PyErr_SetString(PyExc_TypeError, "configure() takes 19 arguments");
        return NULL;
    }
    for (int i = 0; i < 3; i++)
        if (!PyType_Check(args[i])) {
            PyErr_SetString(PyExc_TypeError, "configure(): Tensor, Node, ndarray: types");
            return NULL;
        }
    PyObject *zero_nrs = args[10], *kinds = args[13];
    if (!PyList_Check(args[4]) || !PyList_Check(args[5]) || !PyList_Check(args[8])
            || !PyTuple_Check(zero_nrs) || PyTuple_GET_SIZE(zero_nrs) < 4
            || !PyTuple_Check(kinds) || PyTuple_GET_SIZE(kinds) != 3) {
        PyErr_SetString(PyExc_TypeError, "configure(): unexpected arguments");
        return NULL;
    }
    PyTypeObject *tensor = (PyTypeObject *)args[0], *node = (PyTypeObject *)args[1];
    if (slot_offset(tensor, "_data", &t_data) < 0
            || slot_offset(tensor, "_requires_grad", &t_requires_grad) < 0
            || slot_offset(tensor, "_grad_fn", &t_grad_fn) < 0
            || slot_offset(tensor, "_output_nr", &t_output_nr) < 0
            || slot_offset(tensor, "_version_counter", &t_version_counter) < 0
            || slot_offset(node, "_next0", &n_next0) < 0
            || slot_offset(node, "_next1", &n_next1) < 0
            || slot_offset(node, "_next2", &n_next2) < 0
            || slot_offset(node, "_next_nr", &n_next_nr) < 0
            || slot_offset(node, "_seq", &n_seq) < 0
            || slot_offset(node, "_shape", &n_shape) < 0
            || slot_offset(node, "_dtype", &n_dtype) < 0
            || slot_offset(node, "_saved", &n_saved) < 0)
        return NULL;
    PyObject **types[] = {(PyObject **)&TensorType, (PyObject **)&NodeType,
                          (PyObject **)&ndarray_type, &OutputType};
    for (int i = 0; i < 4; i++)
        Py_XSETREF(*types[i], Py_NewRef(args[i]));
    PyObject **objs[] = {&grad_off_threads, &inference_threads, &grad_state, &switches,
                         &observers, &sequence};
    for (int i = 0; i < 6; i++)
        Py_XSETREF(*objs[i], Py_NewRef(args[4 + i]));
    Py_XSETREF(ZERO_NRS1, Py_NewRef(PyTuple_GET_ITEM(zero_nrs, 1)));
    Py_XSETREF(ZERO_NRS2, Py_NewRef(PyTuple_GET_ITEM(zero_nrs, 2)));
    Py_XSETREF(ZERO_NRS3, Py_NewRef(PyTuple_GET_ITEM(zero_nrs, 3)));
    Py_XSETREF(SAVE_SECOND, Py_NewRef(args[11]));
    Py_XSETREF(NOTHING, Py_NewRef(args[12]));
    Py_XSETREF(KIND_INPUT, Py_NewRef(PyTuple_GET_ITEM(kinds, 0)));
    Py_XSETREF(KIND_OUTPUT, Py_NewRef(PyTuple_GET_ITEM(kinds, 1)));
    Py_XSETREF(KIND_CONST, Py_NewRef(PyTuple_GET_ITEM(kinds, 2)));
    PyObject **fns[] = {&refresh_fn, &accumulator_fn, &keep_saved_fn, &save_input_fn,
                        &python_record};
    for (int i = 0; i < 5; i++)
        Py_XSETREF(*fns[i], Py_NewRef(args[14 + i]));
    Py_RETURN_NONE;
}

/* configure_views(view): ``record._view``, which makes a one-input view op's output tensor
 * (sharing its input's version counter and base). */
static PyObject *
configure_views(PyObject *module, PyObject *view)
{
    if (!PyCallable_Check(view)) {
        PyErr_SetString(PyExc_TypeError, "configure_views() takes record._view");
        return NULL;
    }
    Py_XSETREF(view_fn, Py_NewRef(view));
    Py_RETURN_NONE;
}

/* configure_leaves(AccumulateGrad): the leaf node class, for ``leaf_node``. */
static PyObject *
configure_leaves(PyObject *module, PyObject *cls)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, NodeType)) {
        PyErr_SetString(PyExc_TypeError, "configure_leaves() takes graph.AccumulateGrad");
        return NULL;
    }
    if (slot_offset((PyTypeObject *)cls, "variable", &a_variable) < 0)
        return NULL;
    Py_XSETREF(AccumulateGradType, (PyTypeObject *)Py_NewRef(cls));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "Hand the compiled record the objects it reads, makes and calls."},
    {"configure_views", (PyCFunction)configure_views, METH_O,
     "Hand the compiled record the function that makes a view op's output."},
    {"configure_leaves", (PyCFunction)configure_leaves, METH_O,
     "Hand the compiled record the leaf node class, AccumulateGrad."},
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL | METH_KEYWORDS,
     "record(cls, inputs, data, *, save=None, attrs=None, operands=None, into=None, ctx=None)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_record", "record's common case, compiled.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__record(void)
{
    struct { PyObject **slot; const char *name; } names[] = {
        {&s_save, "save"}, {&s_attrs, "attrs"}, {&s_operands, "operands"}, {&s_into, "into"},
        {&s_ctx, "ctx"}, {&s_is_view, "is_view"}, {&s_enabled, "enabled"},
        {&s_anomaly, "anomaly"}, {&s_saved_tensor_hooks, "saved_tensor_hooks"},
        {&s_grad_fn_version, "_grad_fn_version"}, {&s_save_spec, "_save_spec"},
        {&s_prepare, "prepare"}, {&s_shape, "shape"}, {&s_dtype, "dtype"},
        {&s_inference, "_inference"}, {&s_index, "index"}, {&s_accumulator, "_accumulator"},
        {&s_grad_through_base, "_grad_through_base"},
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
    return PyModule_Create(&moduledef);
}
