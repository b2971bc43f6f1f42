"""``DistributedDataParallel``: PyTorch's multi-process wrapper, which needs a process group.

gradnb has no ``torch.distributed`` and so never a process group: building the wrapper raises
what PyTorch raises before ``init_process_group``, so scripts that guard it (``if ddp:``) run
and scripts that need it stop with the message a PyTorch user knows.
"""

from __future__ import annotations

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Data parallelism across processes; needs a process group, which gradnb does not have."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers=None, init_sync: bool = True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 **kwargs) -> None:
        super().__init__()
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        if process_group is None and device_mesh is None:
            raise ValueError("Default process group has not been initialized, please make sure "
                             "to call init_process_group.")
        raise RuntimeError("gradnb has no distributed backend: DistributedDataParallel cannot "
                           "use the given process group")
