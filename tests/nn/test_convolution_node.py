"""The one ConvolutionBackward0 of every convolution, against PyTorch: what the graph shows for
the padding forms op_db does not sample, the string-padding errors, and gradients to second
order for plain and transposed, grouped, strided and dilated convolutions."""

import numpy as np
import pytest

import gradnb


def _graph(y):
    node = y.grad_fn
    return (node.name(), node.next_functions[0][0].name(), node._saved_padding,
            node._saved_output_padding)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_string_padding_records_what_pytorch_records(torch, padding):
    x, w = np.ones((1, 2, 6, 5)), np.ones((3, 2, 4, 3))
    graphs = []
    for lib in (torch, gradnb):
        y = lib.nn.functional.conv2d(lib.tensor(x, requires_grad=True), lib.tensor(w), None,
                                     padding=padding)
        graphs.append(_graph(y))
    assert graphs[1][0] == graphs[0][0] == "ConvolutionBackward0"
    assert graphs[1][1].rsplit("::", 1)[-1] == graphs[0][1].rsplit("::", 1)[-1]
    assert graphs[1][2:] == graphs[0][2:]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"padding": "same", "stride": 2}, "not supported for strided"),
    ({"padding": "full"}, "Invalid padding string: 'full'"),
])
def test_string_padding_errors(kwargs, message):
    with pytest.raises(RuntimeError, match=message):
        gradnb.nn.functional.conv2d(gradnb.zeros(1, 2, 5, 5), gradnb.zeros(3, 2, 3, 3), **kwargs)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize(("name", "x_shape", "w_shape", "kwargs"), [
    ("conv1d", (2, 4, 9), (6, 2, 3), {"stride": 2, "padding": 1, "groups": 2}),
    ("conv2d", (2, 4, 6, 5), (6, 2, 4, 3), {"padding": "same", "dilation": (1, 2), "groups": 2}),
    ("conv3d", (1, 2, 5, 4, 6), (3, 2, 2, 3, 2), {"stride": (2, 1, 2), "dilation": (1, 1, 2)}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"stride": 3, "output_padding": 2, "groups": 2,
                                                "dilation": 2}),
    ("conv_transpose2d", (2, 2, 4, 3), (2, 3, 3, 2), {"stride": (2, 1), "padding": 1,
                                                      "output_padding": (1, 0)}),
    ("conv_transpose3d", (1, 2, 3, 2, 3), (2, 2, 2, 2, 3), {"stride": 2, "padding": (0, 1, 1)}),
])
def test_gradients_match_pytorch_to_second_order(torch, name, x_shape, w_shape, kwargs):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    results = []
    for lib in (torch, gradnb):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = getattr(lib.nn.functional, name)(xt, wt, **kwargs)
        gx, gw = lib.autograd.grad((y ** 2).sum(), (xt, wt), create_graph=True)
        hx, hw = lib.autograd.grad((gx ** 2).sum() + (gw ** 3).sum(), (xt, wt))
        results.append([t.detach().numpy() for t in (y, gx, gw, hx, hw)])
    for mine, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-9)
