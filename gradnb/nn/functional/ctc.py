"""ctc_loss: the connectionist temporal classification loss, by the forward (alpha) recursion
in log space, written in gradnb's ops so its gradient comes from autograd.

Unreachable states hold a large negative number rather than ``-inf``: a ``logsumexp`` over
only ``-inf`` has a NaN gradient, which would leak into the reachable states' gradients.
"""

from __future__ import annotations

import numpy as np

from ..._core.tensor import Tensor
from ...ops import elementwise
from ...ops.creation import full
from ...ops.creation import tensor as _tensor
from ...ops.indexing import index_select
from ...ops.reductions import logsumexp
from ...ops.shape import cat, stack
from .loss import _check_reduction

__all__ = ["ctc_loss"]

_UNREACHABLE = -1e30


def _lengths(lengths, batch: int) -> list[int]:
    if isinstance(lengths, Tensor):
        values = lengths.detach().cpu().numpy().reshape(-1).tolist()
    elif isinstance(lengths, int):
        values = [lengths]
    else:
        values = list(lengths)
    if len(values) != batch:
        raise RuntimeError(f"Expected tensor to have size at least {batch} at dimension 1, but "
                           f"got size {len(values)} for argument #2 'input_lengths'")
    return [int(v) for v in values]


def _sequence_nll(emit: Tensor, ext: np.ndarray, blank: int) -> Tensor:
    """``-log p(labels)`` from the emissions ``(T, L)`` of the extended label sequence."""
    length = len(ext)
    skip = np.zeros(length, dtype=bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    skip_mask = _tensor(skip, device=emit.device)
    start = _tensor(np.arange(length) < 2, device=emit.device)
    alpha = elementwise.where(start, emit[0], _UNREACHABLE)
    pad1 = full((1,), _UNREACHABLE, dtype=emit.dtype, device=emit.device)
    pad2 = full((2,), _UNREACHABLE, dtype=emit.dtype, device=emit.device)
    for t in range(1, emit.shape[0]):
        stay = alpha
        step = cat([pad1, alpha[:-1]], 0)
        jump = elementwise.where(skip_mask, cat([pad2, alpha[:-2]], 0)[:length], _UNREACHABLE)
        alpha = logsumexp(stack([stay, step, jump], 0), 0) + emit[t]
    return -logsumexp(alpha[-2:], 0)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """CTC loss of ``log_probs`` ``(T, N, C)`` (or ``(T, C)``) against ``targets`` (padded
    ``(N, S)`` or concatenated 1-D). ``mean`` divides each loss by its target length, then
    averages over the batch.

    The gradient with respect to ``log_probs`` is PyTorch's: the derivative of the loss plus
    ``exp(log_probs)`` at the steps within each input length, which is what reaches the logits
    through the ``log_softmax`` that produced ``log_probs`` (there the extra term sums to zero).
    """
    _check_reduction(reduction)
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    batch = lp.shape[1]
    in_lens = _lengths(input_lengths, batch)
    tgt_lens = _lengths(target_lengths, batch)
    labels_all = targets.detach().cpu().numpy().astype(np.int64)
    concatenated = labels_all.ndim == 1 and not unbatched
    offsets = np.concatenate([[0], np.cumsum(tgt_lens)])
    losses = []
    for b in range(batch):
        steps, count = in_lens[b], tgt_lens[b]
        if concatenated:
            labels = labels_all[offsets[b]:offsets[b] + count]
        else:
            labels = labels_all.reshape(batch, -1)[b, :count]
        ext = np.full(2 * count + 1, blank, dtype=np.int64)
        ext[1::2] = labels
        sample = lp[:steps, b]
        nll = _sequence_nll(index_select(sample, 1, _tensor(ext, device=lp.device)), ext, blank)
        if float(nll.detach().item()) > -_UNREACHABLE / 10:
            nll = full((), 0.0 if zero_infinity else float("inf"), dtype=lp.dtype,
                       device=lp.device)
        else:
            weights = elementwise.exp(sample).detach()
            extra = (weights * sample).sum()
            nll = nll + (extra - extra.detach())
        losses.append(nll)
    loss = stack(losses, 0)
    if reduction == "mean":
        denom = _tensor(np.maximum(np.array(tgt_lens, dtype=np.float64), 1), dtype=loss.dtype,
                        device=loss.device)
        return (loss / denom).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
