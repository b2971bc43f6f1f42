"""gradnb's compiled parts: the hot paths of recording an op and of the backward pass.

Both are optional C extensions with the same steps written in Python beside them: where no C
compiler is found the install goes on without them, and gradnb runs its Python code
(``gradnb/_core/record.py``, ``gradnb/autograd/engine.py``). Everything else is in
pyproject.toml.
"""

from setuptools import Extension, setup

SLOTS = ["gradnb/_core/_slots.h"]  # (both read slots at their offsets)

setup(ext_modules=[
    Extension("gradnb._core._record", ["gradnb/_core/_record.c"], depends=SLOTS, optional=True),
    Extension("gradnb.autograd._loop", ["gradnb/autograd/_loop.c"], depends=SLOTS,
              optional=True),
])
