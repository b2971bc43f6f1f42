"""Recurrent layers: RNN, LSTM, GRU (stacked, bidirectional, batch_first, packed input, LSTM
projections) and their single-step cells, with PyTorch's parameter names, shapes and
initialisation (every weight and bias uniform in ``±1/sqrt(hidden_size)``).

A layer projects the whole input sequence through ``W_ih`` in one product, then steps through
time. Sequences are held packed (``data`` plus ``batch_sizes``): at step ``t`` only the first
``batch_sizes[t]`` rows (the sequences still running) are updated, which serves padded input
(every step full) and ``PackedSequence`` alike, in both directions.
"""

from __future__ import annotations

import math

import numpy as np

from ..._core.tensor import Tensor
from ...ops import elementwise
from ...ops.creation import empty, zeros
from ...ops.indexing import index_select
from ...ops.shape import cat
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _step(mode: str, gi: Tensor, h: Tensor, c: Tensor | None, w_hh: Tensor,
          b_hh: Tensor | None, w_hr: Tensor | None):
    """One time step: ``gi`` is the input's projection, ``h`` (and ``c``) the state."""
    gh = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = elementwise.sigmoid(f) * c + elementwise.sigmoid(i) * elementwise.tanh(g)
        h = elementwise.sigmoid(o) * elementwise.tanh(c)
        if w_hr is not None:
            h = F.linear(h, w_hr)
        return h, c
    if mode == "GRU":
        ir, iz, in_ = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r = elementwise.sigmoid(ir + hr)
        z = elementwise.sigmoid(iz + hz)
        n = elementwise.tanh(in_ + r * hn)
        return n + z * (h - n), None
    pre = gi + gh
    return (elementwise.tanh(pre) if mode == "RNN_TANH" else elementwise.relu(pre)), None


def _run_direction(mode, proj, sizes, h, c, w_hh, b_hh, w_hr, reverse):
    """Step through a packed sequence; returns per-step outputs (in time order) and the final
    state of every sequence."""
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    outputs = [None] * len(sizes)
    order = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
    for t in order:
        b = int(sizes[t])
        gi = proj[int(offsets[t]):int(offsets[t]) + b]
        full_batch = b == h.shape[0]
        h_new, c_new = _step(mode, gi, h if full_batch else h[:b],
                             None if c is None else (c if full_batch else c[:b]),
                             w_hh, b_hh, w_hr)
        outputs[t] = h_new
        h = h_new if full_batch else cat([h_new, h[b:]], 0)
        if c is not None:
            c = c_new if full_batch else cat([c_new, c[b:]], 0)
    return outputs, h, c


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        names = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix,
                            Parameter(empty(*shape, device=device, dtype=dtype)))
                    names.append(name + suffix)
        self._flat_weights_names = names
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _layer_params(self, layer: int, direction: int):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = self._parameters.get
        return (get("weight_ih" + suffix), get("weight_hh" + suffix),
                get("bias_ih" + suffix), get("bias_hh" + suffix), get("weight_hr" + suffix))

    def _initial(self, hx, batch: int, like: Tensor, size: int) -> Tensor:
        directions = 2 if self.bidirectional else 1
        if hx is not None:
            return hx
        return zeros(self.num_layers * directions, batch, size, dtype=like.dtype,
                     device=like.device)

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size or self.hidden_size
        unbatched = False
        if packed:
            data, sizes = input.data, input.batch_sizes.detach().cpu().numpy().astype(np.int64)
            batch = int(sizes[0])
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                                 f"{input.ndim}D instead")
            unbatched = input.ndim == 2
            seq = input.unsqueeze(1) if unbatched else (
                input.transpose(0, 1) if self.batch_first else input)
            steps, batch = seq.shape[0], seq.shape[1]
            data = seq.reshape(steps * batch, seq.shape[2])
            sizes = np.full(steps, batch, dtype=np.int64)
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {data.shape[-1]}")
        h0, c0 = (hx if isinstance(hx, tuple) else (hx, None)) if hx is not None else (None, None)
        if unbatched:
            h0 = None if h0 is None else h0.unsqueeze(1)
            c0 = None if c0 is None else c0.unsqueeze(1)
        if packed and input.sorted_indices is not None:
            h0 = None if h0 is None else index_select(h0, 1, input.sorted_indices)
            c0 = None if c0 is None else index_select(c0, 1, input.sorted_indices)
        h0 = self._initial(h0, batch, data, real_hidden)
        if self.mode == "LSTM":
            c0 = self._initial(c0, batch, data, self.hidden_size)
        h_n, c_n = [], []
        layer_data = data
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, direction)
                index = layer * directions + direction
                proj = F.linear(layer_data, w_ih, b_ih)
                steps_out, h, c = _run_direction(
                    self.mode, proj, sizes, h0[index], None if c0 is None else c0[index],
                    w_hh, b_hh, w_hr, reverse=bool(direction))
                outs.append(cat(steps_out, 0))
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_data = outs[0] if directions == 1 else cat(outs, 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_data = F.dropout(layer_data, self.dropout, True)
        h_n = _stack0(h_n)
        c_n = _stack0(c_n) if c_n else None
        if packed:
            if input.unsorted_indices is not None:
                h_n = index_select(h_n, 1, input.unsorted_indices)
                c_n = None if c_n is None else index_select(c_n, 1, input.unsorted_indices)
            output = PackedSequence(layer_data, input.batch_sizes, input.sorted_indices,
                                    input.unsorted_indices)
        else:
            output = layer_data.reshape(len(sizes), batch, layer_data.shape[-1])
            if unbatched:
                output = output.squeeze(1)
                h_n = h_n.squeeze(1)
                c_n = None if c_n is None else c_n.squeeze(1)
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _stack0(tensors) -> Tensor:
    return cat([t.unsqueeze(0) for t in tensors], 0)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU)."""

    def __init__(self, *args, nonlinearity: str = "tanh", **kwargs) -> None:
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory: input, forget, cell and output gates (in that order in the
    weights); ``proj_size`` projects the hidden state."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit: reset, update and new gates (in that order in the weights)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """One step of a recurrent layer, on ``(N, input_size)`` or ``(input_size,)`` input."""

    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gate = num_chunks * hidden_size
        self.weight_ih = Parameter(empty(gate, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(gate, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(gate, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(gate, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _run(self, input: Tensor, h: Tensor | None, c: Tensor | None):
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.ndim}D instead")
        unbatched = input.ndim == 1
        if unbatched:
            input = input.unsqueeze(0)
            h = None if h is None else h.unsqueeze(0)
            c = None if c is None else c.unsqueeze(0)
        if h is None:
            h = zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
        if c is None and self._mode == "LSTM":
            c = zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        h, c = _step(self._mode, gi, h, c, self.weight_hh, self.bias_hh, None)
        if unbatched:
            h = h.squeeze(0)
            c = None if c is None else c.squeeze(0)
        return h, c

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """One step of ``RNN``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._run(input, hx, None)[0]


class LSTMCell(RNNCellBase):
    """One step of ``LSTM``: returns ``(h, c)``."""

    _mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx=None):
        h, c = (None, None) if hx is None else hx
        return self._run(input, h, c)


class GRUCell(RNNCellBase):
    """One step of ``GRU``."""

    _mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._run(input, hx, None)[0]


