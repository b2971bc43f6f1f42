"""%load_ext gradnb / %unload_ext gradnb: what is registered, and that unloading removes it."""

from __future__ import annotations

import pytest

pytest.importorskip("IPython")

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import gradnb
from gradnb.autograd import events
from gradnb.notebook import extension
from gradnb.notebook.memory_meter import MemoryLog

MAGICS = {"line": {"backward", "grad", "memory", "gradflow"}, "cell": {"trace"}}


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    yield ip
    if extension.is_loaded(ip):
        ip.run_line_magic("unload_ext", "gradnb")
    ip.reset()


def registered(ip) -> dict[str, set[str]]:
    magics = ip.magics_manager.magics
    return {kind: names & set(magics[kind]) for kind, names in MAGICS.items()}


def display_tensor(ip, name):
    data, _ = ip.display_formatter.format(ip.user_ns[name])
    return data


def test_load_registers_magics_formatter_and_log(shell):
    shell.run_line_magic("load_ext", "gradnb")
    assert registered(shell) == MAGICS
    assert extension.is_loaded(shell)
    assert isinstance(extension.session_log(), MemoryLog)
    assert any(isinstance(o, MemoryLog) for o in events.observers)
    shell.run_cell("import gradnb as torch\nt = torch.tensor([[1.0, 2.0]], requires_grad=True)")
    data = display_tensor(shell, "t")
    assert data["text/plain"] == repr(shell.user_ns["t"])
    assert "<table" in data["text/html"]


def test_text_repr_stays_torchs(shell):
    shell.run_line_magic("load_ext", "gradnb")
    shell.run_cell("import gradnb as torch\nbig = torch.ones(100)")
    data = display_tensor(shell, "big")
    assert set(data) == {"text/plain"}  # too big for a table: text only
    assert data["text/plain"] == repr(shell.user_ns["big"])


def test_unload_removes_everything(shell):
    shell.run_line_magic("load_ext", "gradnb")
    shell.run_line_magic("unload_ext", "gradnb")
    assert registered(shell) == {"line": set(), "cell": set()}
    assert not extension.is_loaded(shell)
    assert not any(isinstance(o, MemoryLog) for o in events.observers)
    shell.run_cell("import gradnb as torch\nt = torch.tensor([1.0])")
    assert set(display_tensor(shell, "t")) == {"text/plain"}
    with capture_output():
        result = shell.run_cell("%backward t")
    assert isinstance(result.error_in_exec, UsageError)
    shell.run_line_magic("load_ext", "gradnb")  # and it loads again
    assert registered(shell) == MAGICS


def test_loading_twice_registers_once(shell):
    shell.run_line_magic("load_ext", "gradnb")
    gradnb.load_ipython_extension(shell)
    assert sum(isinstance(o, MemoryLog) for o in events.observers) == 1


def test_memory_log_counts_only_since_load(shell):
    w = gradnb.ones(4, requires_grad=True)
    (w * 2).exp().sum().backward()  # before load: not in the session's log
    shell.run_line_magic("load_ext", "gradnb")
    (w * 2).exp().sum().backward()
    assert [e.freed for e in extension.session_log().entries] == [16]
