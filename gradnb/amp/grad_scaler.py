"""``GradScaler``: loss scaling for float16 training, as ``torch.amp.GradScaler``.

Multiplies the loss by ``scale`` so small float16 gradients do not underflow, unscales the
gradients before the step, skips a step whose gradients hold inf/NaN and then halves the
scale, and doubles it after ``growth_interval`` clean steps.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GradScaler"]


class GradScaler:
    """Scale the loss, unscale the gradients, skip steps with inf/NaN gradients.

    >>> import gradnb
    >>> w = gradnb.nn.Parameter(gradnb.ones(2))
    >>> opt = gradnb.optim.SGD([w], lr=0.1)
    >>> scaler = gradnb.amp.GradScaler("cpu")
    >>> scaler.scale((w * w).sum()).backward()
    >>> scaler.step(opt); scaler.update()
    >>> w.tolist()
    [0.800000011920929, 0.800000011920929]
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._found_inf = {}  # id(optimizer) -> whether its gradients held inf/NaN
        self._unscaled = set()

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def scale(self, outputs):
        """``outputs`` (a tensor or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale (once per step) and note inf/NaN."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        inv = 1.0 / self._scale
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if getattr(g, "is_sparse", False):
                    g = g.coalesce()
                    p.grad = g
                    data = g._vals
                else:
                    data = g._data
                data *= np.asarray(inv, dtype=data.dtype)
                found = found or not bool(np.isfinite(data.astype(np.float32)).all())
        self._found_inf[id(optimizer)] = found
        self._unscaled.add(id(optimizer))

    def step(self, optimizer, *args, **kwargs):
        """Unscale if not done yet, then ``optimizer.step()`` unless a gradient held inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._found_inf[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        """Halve the scale after a skipped step; double it after ``growth_interval`` clean ones."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(self._found_inf.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._found_inf.clear()
        self._unscaled.clear()

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
