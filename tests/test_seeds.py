"""The seed articles' examples, run with ``import gradnb as torch``.

Each example is the article's code as a user would paste it. It must print what PyTorch prints
(checked against PyTorch itself where it is installed, and against the article's stated output
always). Where an article's example is wrong, gradnb raises the error PyTorch raises.
"""

from __future__ import annotations

import contextlib
import io
import textwrap

import pytest

SEED_000_EXP_SUM = """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.exp(x)
z = torch.sum(y)
z.backward()
print(x.grad)
"""

# The article calls x.backward(gradient) on the *leaf* x with a gradient shaped like z (a
# scalar). PyTorch rejects that: the gradient must have x's shape.
SEED_000_LEAF_BACKWARD = """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.exp(x)
z = torch.sum(y)
gradient = torch.ones_like(z)
x.backward(gradient)
print(x.grad)
"""

SEED_001_SCALAR = """
import torch
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
y = w * x + b
loss = y * y
print(f"Gradient for x before backward: {x.grad}")
print(f"Gradient for w before backward: {w.grad}")
print(f"Gradient for b before backward: {b.grad}")
loss.backward()
print(f"Gradient for x after backward: {x.grad}")
print(f"Gradient for w after backward: {w.grad}")
print(f"Gradient for b after backward: {b.grad}")
"""

SEED_001_NON_SCALAR = """
import torch
x_vector = torch.tensor([2.0, 4.0], requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
y_non_scalar = w * x_vector + b
try:
    y_non_scalar.backward()
except RuntimeError as e:
    print(f"Error calling backward() on non-scalar: {e}")
grad_tensor = torch.ones_like(y_non_scalar)
y_non_scalar.backward(gradient=grad_tensor)
print(f"Gradient for x_vector after y_non_scalar.backward(gradient=...): {x_vector.grad}")
print(f"Gradient for w after y_non_scalar.backward(gradient=...): {w.grad}")
"""

# Seed 004's training-step fragment, with the model/data/loss/optimizer it assumes defined.
SEED_004_TRAINING_STEP = """
import torch
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3]]))
    model.bias.fill_(0.5)
loss_function = torch.nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
targets = torch.tensor([[1.0], [2.0]])
outputs = model(inputs)
loss = loss_function(outputs, targets)
loss.backward()
optimizer.step()
optimizer.zero_grad()
print(loss.item() == loss.item(), model.weight, model.bias, model.weight.grad)
"""

SEED_004_SQUARE = """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x ** 2
z = y.sum()
loss = z
loss.backward()
print(x.grad)
"""

EXPECTED_WITHOUT_TORCH = {
    "SEED_000_EXP_SUM": "tensor([ 2.7183,  7.3891, 20.0855])\n",
    "SEED_001_SCALAR": textwrap.dedent("""\
        Gradient for x before backward: None
        Gradient for w before backward: None
        Gradient for b before backward: None
        Gradient for x after backward: 42.0
        Gradient for w after backward: 28.0
        Gradient for b after backward: 14.0
        """),
    "SEED_001_NON_SCALAR": textwrap.dedent("""\
        Error calling backward() on non-scalar: grad can be implicitly created only for scalar outputs
        Gradient for x_vector after y_non_scalar.backward(gradient=...): tensor([3., 3.])
        Gradient for w after y_non_scalar.backward(gradient=...): 6.0
        """),
    "SEED_004_SQUARE": "tensor([2., 4.])\n",
}

EXAMPLES = {name: code for name, code in globals().items() if name.startswith("SEED_")}


def run(code: str, module_name: str):
    """Run ``code`` with ``import torch`` bound to ``module_name``; return (stdout, error)."""
    source = code.replace("import torch", f"import {module_name} as torch")
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(source, f"<{module_name} example>", "exec"), {})  # noqa: S102 - the point
        except Exception as exc:  # noqa: BLE001 - the article's own mistakes raise
            error = exc
    return out.getvalue(), error


@pytest.mark.parametrize("name", sorted(EXPECTED_WITHOUT_TORCH))
def test_article_output(name):
    out, error = run(EXAMPLES[name], "gradnb")
    assert error is None
    assert out == EXPECTED_WITHOUT_TORCH[name]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_same_output_as_pytorch(name, torch):
    ours, our_error = run(EXAMPLES[name], "gradnb")
    theirs, their_error = run(EXAMPLES[name], "torch")
    assert ours.replace("gradnb.", "torch.") == theirs
    assert type(our_error) is type(their_error)
    if their_error is not None:
        leading = str(their_error).split(":")[0]
        assert str(our_error).startswith(leading)


def test_leaf_backward_example_raises_pytorch_error():
    _, error = run(SEED_000_LEAF_BACKWARD, "gradnb")
    assert isinstance(error, RuntimeError)
    assert str(error).startswith("Mismatch in shape: grad_output[0] has a shape of")
