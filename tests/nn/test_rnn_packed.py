"""Packed sequences and the recurrent layers on them, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import nn
from gradnb.nn.utils import rnn as grnn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _seqs(lengths, width=3):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((n, width)) for n in lengths]
    return ([gradnb.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _close(g, t):
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_pack_round_trip(batch_first):
    g_seqs, t_seqs = _seqs([2, 5, 3])
    g_pad = grnn.pad_sequence(g_seqs, batch_first=batch_first, padding_value=-1.0)
    t_pad = torch.nn.utils.rnn.pad_sequence(t_seqs, batch_first=batch_first, padding_value=-1.0)
    _close(g_pad, t_pad)
    g_packed = grnn.pack_padded_sequence(g_pad, [2, 5, 3], batch_first, enforce_sorted=False)
    t_packed = torch.nn.utils.rnn.pack_padded_sequence(t_pad, [2, 5, 3], batch_first,
                                                       enforce_sorted=False)
    for g, t in zip(g_packed, t_packed):
        _close(g, t)
    g_out, g_len = grnn.pad_packed_sequence(g_packed, batch_first, total_length=6)
    t_out, t_len = torch.nn.utils.rnn.pad_packed_sequence(t_packed, batch_first,
                                                          total_length=6)
    _close(g_out, t_out)
    assert g_len.tolist() == t_len.tolist()


def test_pack_sequence_needs_sorted_lengths():
    g_seqs, _ = _seqs([2, 5])
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        grnn.pack_sequence(g_seqs)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_recurrent_layer_on_a_packed_batch(cls, bidirectional):
    torch.manual_seed(0)
    t_rnn = getattr(torch.nn, cls)(3, 4, num_layers=2, bidirectional=bidirectional).double()
    g_rnn = getattr(nn, cls)(3, 4, num_layers=2, bidirectional=bidirectional).double()
    g_rnn.load_state_dict({k: gradnb.tensor(v.numpy()) for k, v in t_rnn.state_dict().items()})
    g_seqs, t_seqs = _seqs([2, 5, 3])
    g_out, g_h = g_rnn(grnn.pack_sequence(g_seqs, enforce_sorted=False))
    t_out, t_h = t_rnn(torch.nn.utils.rnn.pack_sequence(t_seqs, enforce_sorted=False))
    _close(g_out.data, t_out.data)
    g_states = g_h if isinstance(g_h, tuple) else (g_h,)
    t_states = t_h if isinstance(t_h, tuple) else (t_h,)
    for g, t in zip(g_states, t_states):
        _close(g, t)
    g_loss = g_out.data.sum() + g_states[0].pow(2).sum()
    t_loss = t_out.data.sum() + t_states[0].pow(2).sum()
    g_loss.backward()
    t_loss.backward()
    for g, t in zip(g_seqs, t_seqs):
        _close(g.grad, t.grad)
    for (name, g), t in zip(g_rnn.named_parameters(), t_rnn.parameters()):
        _close(g.grad, t.grad)


def test_lstm_parameters_and_repr_match_torch():
    t = torch.nn.LSTM(3, 5, num_layers=2, batch_first=True, proj_size=2, bidirectional=True)
    g = nn.LSTM(3, 5, num_layers=2, batch_first=True, proj_size=2, bidirectional=True)
    assert repr(g) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    bound = 1 / np.sqrt(5)
    assert all(float(p.abs().max()) <= bound for p in g.parameters())
