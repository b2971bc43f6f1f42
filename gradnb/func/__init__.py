"""``gradnb.func``: PyTorch's function transforms (``torch.func``).

``grad``, ``grad_and_value``, ``vjp`` and ``jacrev`` run reverse mode; ``jvp``, ``jacfwd`` and
``hessian`` (``jacfwd(jacrev(f))``) forward mode through :mod:`gradnb.autograd.forward_ad`;
``functional_call`` swaps a module's parameters for a call; ``vmap`` is a Python loop over the
batch dimension (see :mod:`gradnb.func._vmap`). Transforms compose: ``grad(grad(f))``,
``jacrev(jacrev(f))``, ``jacfwd(jacrev(f))``; forward over forward does not (one dual level at
a time, as in ``torch.autograd.forward_ad``).

>>> import gradnb
>>> from gradnb.func import grad, hessian
>>> f = lambda x: (x ** 3).sum()
>>> grad(f)(gradnb.tensor([1.0, 2.0]))
tensor([ 3., 12.])
>>> hessian(f)(gradnb.tensor([1.0, 2.0]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from __future__ import annotations

from ._forward import hessian, jacfwd, jvp
from ._functional_call import functional_call
from ._reverse import grad, grad_and_value, jacrev, vjp
from ._vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "vjp", "vmap"]
