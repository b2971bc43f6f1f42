"""Sparse gradients: the SparseTensor type, Embedding(sparse=True), and optimizers on them."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import nn, optim
from gradnb.sparse import SparseTensor, sparse_coo_tensor


def test_coalesce_sums_duplicates_and_sorts():
    g = sparse_coo_tensor([[2, 0, 2]], [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], (4, 2))
    assert g.is_sparse and not g.is_coalesced() and g._nnz() == 3
    c = g.coalesce()
    assert c.is_coalesced()
    assert c.indices().tolist() == [[0, 2]]
    assert c.values().tolist() == [[2.0, 2.0], [4.0, 4.0]]
    assert g.to_dense().tolist() == [[2.0, 2.0], [0.0, 0.0], [4.0, 4.0], [0.0, 0.0]]
    with pytest.raises(RuntimeError, match="uncoalesced"):
        g.values()


def test_multi_dim_sparse_indices():
    g = sparse_coo_tensor([[0, 1, 0], [2, 0, 2]], [1.0, 2.0, 3.0], (2, 3))
    assert g.to_dense().tolist() == [[0.0, 0.0, 4.0], [2.0, 0.0, 0.0]]
    assert g.coalesce().indices().tolist() == [[0, 1], [2, 0]]


def test_addition_with_sparse_and_dense():
    a = sparse_coo_tensor([[0]], [[1.0, 2.0]], (3, 2))
    b = sparse_coo_tensor([[2, 0]], [[1.0, 1.0], [1.0, 1.0]], (3, 2))
    both = a + b
    assert isinstance(both, SparseTensor) and both._nnz() == 3
    assert both.to_dense().tolist() == [[2.0, 3.0], [0.0, 0.0], [1.0, 1.0]]
    dense = gradnb.ones(3, 2)
    assert (dense + a).tolist() == [[2.0, 3.0], [1.0, 1.0], [1.0, 1.0]]
    assert (a + dense).tolist() == [[2.0, 3.0], [1.0, 1.0], [1.0, 1.0]]
    assert (np.ones((3, 2)) + a).tolist() == [[2.0, 3.0], [1.0, 1.0], [1.0, 1.0]]
    assert (a * 2).to_dense().tolist() == [[2.0, 4.0], [0.0, 0.0], [0.0, 0.0]]


def test_embedding_sparse_gradient_holds_only_looked_up_rows():
    emb = nn.Embedding(1000, 4, sparse=True)
    idx = gradnb.tensor([[3, 7, 3], [999, 0, 7]])
    emb(idx).sum().backward()
    g = emb.weight.grad
    assert g.is_sparse and g.shape == (1000, 4) and g._nnz() == 6
    assert g.coalesce().indices().tolist() == [[0, 3, 7, 999]]
    assert g.coalesce().values().tolist() == [[1.0] * 4, [2.0] * 4, [2.0] * 4, [1.0] * 4]
    assert g.nbytes < emb.weight.nbytes / 100

    dense = nn.Embedding(1000, 4)
    dense.weight.data = emb.weight.data
    dense(idx).sum().backward()
    np.testing.assert_array_equal(g.to_dense().numpy(), dense.weight.grad.numpy())


def test_sparse_gradients_accumulate_across_backward_calls():
    emb = nn.Embedding(10, 2, sparse=True)
    emb(gradnb.tensor([1, 2])).sum().backward()
    emb(gradnb.tensor([2, 5])).sum().backward()
    g = emb.weight.grad
    assert g.is_sparse
    assert g.to_dense()[:, 0].tolist() == [0, 1, 2, 0, 0, 1, 0, 0, 0, 0]


def test_sparse_gradient_onto_an_existing_dense_gradient():
    emb = nn.Embedding(4, 2, sparse=True)
    emb.weight.grad = gradnb.ones(4, 2)
    emb(gradnb.tensor([1, 1])).sum().backward()
    assert emb.weight.grad.tolist() == [[1.0, 1.0], [3.0, 3.0], [1.0, 1.0], [1.0, 1.0]]


def test_padding_idx_rows_get_no_sparse_gradient():
    emb = nn.Embedding(5, 2, padding_idx=0, sparse=True)
    assert emb.weight.tolist()[0] == [0.0, 0.0]
    emb(gradnb.tensor([0, 3, 0])).sum().backward()
    assert emb.weight.grad.coalesce().indices().tolist() == [[3]]


def _train(sparse: bool, opt_factory, steps: int = 5):
    gradnb.manual_seed(0)
    emb = nn.Embedding(50, 3, sparse=sparse, dtype=gradnb.float64)
    head = nn.Linear(3, 1, dtype=gradnb.float64)
    opt = opt_factory([emb.weight, *head.parameters()])
    rng = np.random.default_rng(1)
    for _ in range(steps):
        idx = gradnb.tensor(rng.integers(0, 50, (8, 2)))
        opt.zero_grad()
        loss = (head(emb(idx)).sum(1) ** 2).mean()
        loss.backward()
        opt.step()
    return emb.weight.detach().numpy().copy()


@pytest.mark.parametrize("kwargs", [{}, {"momentum": 0.9}, {"momentum": 0.9, "weight_decay": 0.1}])
def test_sgd_sparse_and_dense_training_give_the_same_parameters(kwargs):
    sparse = _train(True, lambda ps: optim.SGD(ps, lr=0.1, **kwargs))
    dense = _train(False, lambda ps: optim.SGD(ps, lr=0.1, **kwargs))
    np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=1e-14)


def test_sparse_sgd_step_touches_only_used_rows():
    emb = nn.Embedding(100, 2, sparse=True)
    before = emb.weight.detach().numpy().copy()
    opt = optim.SGD(emb.parameters(), lr=1.0)
    emb(gradnb.tensor([4, 4, 9])).sum().backward()
    opt.step()
    changed = np.flatnonzero((emb.weight.detach().numpy() != before).any(axis=1))
    assert changed.tolist() == [4, 9]
    np.testing.assert_allclose(emb.weight.detach().numpy()[4], before[4] - 2.0)


def test_adam_refuses_sparse_gradients_and_sparse_adam_dense_ones():
    emb = nn.Embedding(5, 2, sparse=True)
    emb(gradnb.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match="Adam does not support sparse gradients"):
        optim.Adam(emb.parameters()).step()
    lin = nn.Linear(2, 1)
    lin(gradnb.ones(1, 2)).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        optim.SparseAdam([lin.weight]).step()


def test_clip_grad_norm_on_sparse_matches_dense():
    g = sparse_coo_tensor([[1, 1, 3]], [[3.0, 0.0], [1.0, 0.0], [0.0, 3.0]], (5, 2))
    p = nn.Parameter(gradnb.zeros(5, 2))
    p._grad = g
    total = nn.utils.clip_grad_norm_([p], 1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(np.linalg.norm(p.grad.to_dense().numpy()), 1.0, rtol=1e-5)


@pytest.mark.torch
def test_sparse_adam_matches_torch(torch):
    rng = np.random.default_rng(0)
    table = rng.standard_normal((20, 3))
    g_emb = nn.Embedding(20, 3, sparse=True, _weight=gradnb.tensor(table))
    t_emb = torch.nn.Embedding(20, 3, sparse=True, _weight=torch.tensor(table))
    g_opt = optim.SparseAdam(g_emb.parameters(), lr=0.05)
    t_opt = torch.optim.SparseAdam(t_emb.parameters(), lr=0.05)
    for _ in range(6):
        idx = rng.integers(0, 20, 7)
        for emb, opt, mod in ((g_emb, g_opt, gradnb), (t_emb, t_opt, torch)):
            opt.zero_grad()
            (emb(mod.tensor(idx)) ** 2).sum().backward()
            opt.step()
    np.testing.assert_allclose(g_emb.weight.detach().numpy(), t_emb.weight.detach().numpy(),
                               rtol=1e-12)


@pytest.mark.torch
def test_sparse_gradient_matches_torch(torch):
    idx = np.array([[3, 1, 3], [0, 1, 2]])
    g_emb = nn.Embedding(6, 2, sparse=True)
    t_emb = torch.nn.Embedding(6, 2, sparse=True)
    t_emb.weight.data = torch.tensor(g_emb.weight.detach().numpy())
    g_emb(gradnb.tensor(idx)).pow(2).sum().backward()
    t_emb(torch.tensor(idx)).pow(2).sum().backward()
    assert t_emb.weight.grad.is_sparse and g_emb.weight.grad.is_sparse
    np.testing.assert_array_equal(g_emb.weight.grad._indices().numpy(),
                                  t_emb.weight.grad._indices().numpy())
    np.testing.assert_allclose(g_emb.weight.grad.to_dense().numpy(),
                               t_emb.weight.grad.to_dense().numpy(), rtol=1e-6)


# -- autograd through sparse tensors, compared with PyTorch ----------------------------------
def _torch():
    return pytest.importorskip("torch")


def _spelled(text: str) -> str:
    return text.replace("torch.", "gradnb.")


def _graph_run(lib):
    x = lib.tensor([[0.0, 2.0], [3.0, 0.0]], requires_grad=True)
    s = x.to_sparse()
    seen = [repr(s), type(s.grad_fn).__name__,
            [type(n[0]).__name__ for n in s.grad_fn.next_functions]]
    d = s.to_dense()
    seen += [type(d.grad_fn).__name__, [type(n[0]).__name__ for n in d.grad_fn.next_functions]]
    (d * d).sum().backward()
    seen.append(repr(x.grad))
    x.grad = None
    w = lib.ones(2, 3, requires_grad=True)
    m = lib.sparse.mm(s, w)
    n = m.grad_fn
    seen += [repr(m), [type(k[0]).__name__ if k[0] is not None else None
                       for k in n.next_functions],
             n._saved_alpha, n._saved_beta, tuple(n._saved_mat2_sym_sizes),
             tuple(n._saved_mat2_sym_strides)]
    m.sum().backward()
    seen += [repr(x.grad), repr(w.grad)]
    x.grad = None
    v = s.coalesce().values()
    (v * 2).sum().backward()
    seen += [repr(v), repr(x.grad)]
    seen += [s.is_sparse, s.is_sparse_csr, repr(s.layout), repr(x.layout), x.is_sparse_csr,
             repr(s.indices().dtype), s._nnz()]
    seen.append(repr(lib.tensor([[1.0, 1.0], [1.0, 1.0]]).sparse_mask(s)))
    seen.append(repr(lib.tensor([[1.0, 0, 0], [0, 0, 5.0]]).to_sparse(1)))
    return [_spelled(str(item)) for item in seen]


def test_gradients_through_to_sparse_to_dense_mm_values_match_torch():
    import warnings

    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _graph_run(gradnb) == _graph_run(torch)


def test_sparse_leaf_gets_a_sparse_gradient_as_in_torch():
    import warnings

    torch = _torch()

    def run(lib):
        sp = lib.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2), requires_grad=True)
        lib.sparse.mm(sp, lib.ones(2, 2)).sum().backward()
        return [_spelled(repr(sp)), sp.is_leaf, _spelled(repr(sp.grad)), sp.grad.is_sparse]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(gradnb) == run(torch)


def test_sparse_mm_of_dense_operands_is_mm():
    a = gradnb.ones(2, 3)
    assert gradnb.sparse.mm(a, gradnb.ones(3, 2)).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied"):
        gradnb.sparse.mm(a.to_sparse(), gradnb.ones(2, 2))


def test_coalesce_and_scaling_stay_in_the_graph_as_in_torch():
    import warnings

    torch = _torch()

    def run(lib):
        sp = lib.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1.0, 2.0, 3.0], (2, 2),
                                   requires_grad=True)
        c = sp.coalesce()
        m = c * 2
        m.to_dense().sum().backward()
        return [c.grad_fn.name(), m.grad_fn.name(), _spelled(repr(sp.grad))]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(gradnb) == run(torch)


def test_sparse_plus_dense_carries_the_gradient():
    x = gradnb.ones(2, 2, requires_grad=True)
    (x.to_sparse() + gradnb.ones(2, 2)).sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
