"""The magics: ``%%trace``, ``%tracediff``, ``%backward``, ``%grad``, ``%memory``,
``%gradflow``, ``%why`` and ``%watch``.

Each parses its options with IPython's ``magic_arguments`` (so ``%backward?`` shows help),
checks every input before doing anything (a bad name, a non-tensor, a tensor that needs no
grad or a malformed option is a one-line ``UsageError``, and no graph is freed, no ``.grad``
touched) and shows its view with an explicit ``display()``.
"""

from __future__ import annotations

import ast
import contextlib
import re

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from gradnb._core.tensor import Tensor
from gradnb.autograd.trace import Trace, snapshot
from gradnb.notebook import torch_adapter
from gradnb.notebook.backward_run import backward_problem, watched_backward
from gradnb.notebook.backward_view import BackwardView
from gradnb.notebook.explain import WatchedTrace, watch_session, watcher
from gradnb.notebook.explain.inplace_view import InplaceErrorView, is_inplace_error
from gradnb.notebook.explain.why import Why, explain
from gradnb.notebook.grad_flow import GradFlow
from gradnb.notebook.grad_table import GradTable
from gradnb.notebook.graph_view import GraphView
from gradnb.notebook.memory_meter import MemoryMeter, session_log
from gradnb.notebook.naming import Names
from gradnb.notebook.prompts import running_prompt
from gradnb.notebook.step_view import StepThrough
from gradnb.notebook.tensors import is_tensor
from gradnb.notebook.torch_adapter.why import explain_torch
from gradnb.notebook.trace_diff import TraceDiff
from gradnb.notebook.widgets import LiveGraph, WithStaticForm, widgets_available

__all__ = ["GradnbMagics"]


def _unquote(text: str) -> str:
    """``"expr"`` or ``'expr'`` -> ``expr`` (IPython's argument splitter keeps the quotes)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


_BACKWARD_FLAGS = ("--retain-graph", "--create-graph", "--step", "--no-saved")
_GRADIENT_OPTION = re.compile(r"(?:^|\s)--gradient(?:=|\s+|$)")


def _split_backward_line(line: str) -> tuple[str, str | None, list[str]]:
    """``%backward``'s line as (expression, gradient expression or None, flags).

    ``--gradient`` takes the rest of the line (less any flags at its end), so an expression
    with spaces, brackets or quotes needs no quoting: ``--gradient torch.ones(3) * 2``.
    """
    match = _GRADIENT_OPTION.search(line)
    head, gradient = (line, None) if match is None else (line[:match.start()],
                                                          line[match.end():])
    flags: list[str] = []
    if gradient is not None:
        words = gradient.split()
        while words and words[-1] in _BACKWARD_FLAGS:
            flags.insert(0, words.pop())
        gradient = " ".join(words)
    words = head.split()
    flags = [w for w in words if w.startswith("--")] + flags
    expr = " ".join(w for w in words if not w.startswith("--"))
    return expr, gradient, flags


def split_expressions(line: str, known=frozenset()) -> list[str] | None:
    """``%why``'s line as the expressions it names, or None if a part is not one.

    Expressions are separated by spaces, but may hold spaces themselves (``f(a, b)``,
    ``w[0, 1]``): each is the longest run of words that parses as an expression, or that is a
    name in ``known`` (``model.0.weight``, as the views name a Sequential's layers).

    >>> split_expressions("x model[0].weight f(a, b) w - 1")
    ['x', 'model[0].weight', 'f(a, b)', 'w - 1']
    """
    words = line.split()
    found = []
    start = 0
    while start < len(words):
        for end in range(len(words), start, -1):
            text = " ".join(words[start:end])
            if text in known or _is_expression(text):
                found.append(text)
                start = end
                break
        else:
            return None
    return found


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


@magics_class
class GradnbMagics(Magics):
    """gradnb's notebook magics (registered by ``%load_ext gradnb``)."""

    # -- helpers --------------------------------------------------------------------------------
    @staticmethod
    def _parse(magic, line: str):
        """``parse_argstring`` with shell-splitting errors (an unbalanced quote) as a one-line
        UsageError, like argparse's own errors."""
        try:
            return parse_argstring(magic, line)
        except ValueError as error:
            raise UsageError(f"%{magic.__name__}: {error} in {line!r}") from None

    def _evaluate(self, magic: str, source: str):
        """Evaluate ``source`` in the user's namespace; any failure is a UsageError."""
        try:
            return self.shell.ev(source)
        except Exception as error:  # noqa: BLE001 - every failure becomes the one-line message
            raise UsageError(f"%{magic}: cannot evaluate {source!r}: {_one_line(error)}") from None

    def _show(self, view, live_widget=None) -> None:
        if live_widget is not None and widgets_available(self.shell):
            display(WithStaticForm(live_widget(), view))
        else:
            display(view)

    # -- %%trace --------------------------------------------------------------------------------
    @magic_arguments()
    @argument("-o", "--store", metavar="VAR",
              help="store the trace's GraphView in the variable VAR")
    @argument("-q", "--quiet", action="store_true", help="do not display the graph")
    @argument("--no-saved", action="store_true", help="do not draw the saved-tensor boxes")
    @argument("--no-live", action="store_true",
              help="do not redraw the graph while the cell runs (only at the end)")
    @cell_magic
    def trace(self, line: str, cell: str):
        """Run the cell and show the computation graph of every op it ran.

        The graph grows live while the cell runs (in a notebook with ipywidgets) and settles on
        the final graph. With torch imported (in an earlier cell), torch code is traced too: the
        graph is torch's ``grad_fn`` graph, with the modules that ran each op framed. Boxes carry your variable names, op names as in ``grad_fn``, shapes and
        dtypes. The cell's last expression is its result, as without the magic; an error in the
        cell is a normal cell error (the graph so far is still shown).
        """
        __tracebackhide__ = True  # an error in the cell shows the user's line, not this frame
        args = self._parse(self.trace, line)
        if args.store is not None and not args.store.isidentifier():
            raise UsageError(f"%%trace: --store needs a variable name, got {args.store!r}")
        body, last = self._compile_cell(line, cell)
        namespace = self.shell.user_ns
        # One recording per engine, each fed by its engine's watcher (lines, cuts) as it runs.
        recordings = [WatchedTrace(), *torch_adapter.live_traces()]

        def view() -> GraphView:
            recording = next((r for r in recordings if r.ops), recordings[0])
            return GraphView(recording, namespace=namespace, show_saved=not args.no_saved)

        live = None
        if not args.quiet and not args.no_live and widgets_available(self.shell):
            live = LiveGraph(lambda: view().to_svg())
            for recording in recordings:
                recording.listeners.append(live)
            display(live)
        try:
            with contextlib.ExitStack() as recording_all:
                for recording in recordings:
                    recording_all.enter_context(recording)
                exec(body, namespace)  # noqa: S102 - running the cell is the point
                result = eval(last, namespace) if last is not None else None
        except RuntimeError as error:
            if is_inplace_error(error) and recordings[0].ops:  # gradnb's own graph
                nodes = [op.node() for op in recordings[0].ops]
                display(InplaceErrorView(recordings[0], nodes, error, namespace))
            raise
        finally:
            final = view()
            if live is not None:
                live.close()
            if args.store is not None:
                namespace[args.store] = final
            if not args.quiet:
                # The final graph is the view itself, not a widget: its HTML form is interactive
                # without ipywidgets (VS Code, Colab, Notebook 7), its SVG static elsewhere.
                display(final)
        return result

    def _compile_cell(self, line: str, cell: str):
        """Parse and transform the cell as IPython would; split off a last expression.

        The whole cell, ``%%trace`` line included, is registered with ``linecache`` under
        IPython's name for the cell (``Cell In[4]``), and line numbers count from that first
        line, so a traceback shows the user's code at the right line.
        """
        shell = self.shell
        source = shell.transform_cell(cell)
        prompt = running_prompt(shell)
        filename = shell.compile.cache(f"%%trace {line}".rstrip() + "\n" + cell,
                                       shell.execution_count if prompt is None else prompt)
        tree = shell.transform_ast(shell.compile.ast_parse(source))
        ast.increment_lineno(tree, 1)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = shell.compile(ast.Expression(tree.body[-1].value), filename, "eval")
            tree.body = tree.body[:-1]
        return shell.compile(tree, filename, "exec"), last

    # -- %tracediff ------------------------------------------------------------------------------
    @magic_arguments()
    @argument("before", help="a graph stored by %%%%trace -o NAME (or a Trace)")
    @argument("after", help="a later one, to compare with BEFORE")
    @line_magic
    def tracediff(self, line: str) -> None:
        """Show what changed between two traced runs: ops added or removed, outputs whose shape
        or dtype changed, and leaves whose gradient changed.

        Examples::

            %%trace -o before
            loss = model(x).sum()

            %%trace -o after
            loss = model(x2).sum()

            %tracediff before after
        """
        args = self._parse(self.tracediff, line)
        views = [self._evaluate("tracediff", name) for name in (args.before, args.after)]
        for name, value in zip((args.before, args.after), views):
            if not (isinstance(value, Trace)
                    or (isinstance(value, GraphView) and value.trace is not None)):
                raise UsageError(f"%tracediff: {name} is a {type(value).__name__}, not a traced "
                                 "graph (store one with %%trace -o NAME)")
        display(TraceDiff(*views))

    # -- %backward ------------------------------------------------------------------------------
    @magic_arguments()
    @argument("expr", nargs="+", help="the tensor to differentiate (an expression)")
    @argument("--gradient", metavar="EXPR",
              help="the gradient w.r.t. EXPR (needed when it is not a scalar); the rest of the "
                   "line, so it needs no quotes")
    @argument("--retain-graph", action="store_true", help="keep the graph for another backward")
    @argument("--create-graph", action="store_true",
              help="record the backward pass itself, for higher-order gradients")
    @argument("--step", action="store_true", help="step through the pass node by node")
    @argument("--no-saved", action="store_true", help="do not draw the saved-tensor boxes")
    @line_magic
    def backward(self, line: str) -> None:
        """Run ``EXPR.backward()`` and show what it did.

        The report shows the graph with the path the gradient took, the ``.grad`` table of every
        leaf it reached (values or summary, norm, NaN/Inf/zero flags, fresh or accumulated) and
        the bytes the call freed. ``--step`` plays the pass node by node. Bad input changes
        nothing: no graph is freed and no ``.grad`` is touched. When a saved tensor was
        modified in place, the graph shows which one, the node that saved it and the write
        (with their lines, for code that ran watched).

        Examples::

            %backward loss
            %backward y --gradient torch.tensor([1.0, 1.0, 1.0])
            %backward y.sum() --retain-graph
            %backward loss --step
        """
        expr, gradient_source, flags = _split_backward_line(line)
        self._parse(self.backward, " ".join([expr or "", *flags]))  # flags, help, errors
        label = _unquote(expr)
        root = self._evaluate("backward", label)
        gradient = None
        if gradient_source is not None:
            if not gradient_source:
                raise UsageError("%backward: --gradient needs an expression")
            gradient = self._evaluate("backward", _unquote(gradient_source))
        args = self._parse(self.backward, " ".join(["_", *flags]))
        check, run_backward = backward_problem, watched_backward
        if torch_adapter.is_torch_tensor(root):
            # Imports torch: loaded only once a torch tensor is met (import time).
            from gradnb.notebook.torch_adapter import backward as torch_backward

            check, run_backward = torch_backward.backward_problem, torch_backward.watched_backward
        problem = check(root, gradient, label)
        if problem is not None:
            raise UsageError(f"%backward: {problem}")
        try:
            run = run_backward(root, gradient, retain_graph=args.retain_graph or None,
                               create_graph=args.create_graph, keep_steps=args.step)
        except RuntimeError as error:
            if not is_inplace_error(error):
                raise UsageError(f"%backward: {_one_line(error)}") from None
            # The drawing is the answer: which saved tensor, saved where, written where.
            display(InplaceErrorView(snapshot([root]), [root.grad_fn], error,
                                     self.shell.user_ns, label))
            return
        view = BackwardView(run, self.shell.user_ns, label, show_saved=not args.no_saved)
        if args.step:
            stepper = StepThrough(view)
            self._show(stepper, stepper.widget)
        else:
            display(view)

    # -- %grad ----------------------------------------------------------------------------------
    @magic_arguments()
    @argument("names", nargs="*", help="tensors to show (default: all that require grad)")
    @line_magic
    def grad(self, line: str) -> None:
        """Show the ``.grad`` table of the named tensors, or of every tensor in the namespace
        that requires grad."""
        args = self._parse(self.grad, line)
        if not args.names:
            display(GradTable(namespace=self.shell.user_ns))
            return
        pairs = []
        named = dict(Names(self.shell.user_ns).tensors())  # also ``model.0.weight``
        for name in args.names:
            value = named[name] if name in named else self._evaluate("grad", name)
            if not is_tensor(value):
                raise UsageError(f"%grad: {name} is a {type(value).__name__}, not a tensor")
            if not value.requires_grad:
                raise UsageError(f"%grad: {name} does not require grad, so it has no .grad")
            pairs.append((name, value))
        display(GradTable(pairs))

    # -- %memory --------------------------------------------------------------------------------
    @magic_arguments()
    @argument("--live", action="store_true", help="a widget that redraws after every backward")
    @line_magic
    def memory(self, line: str) -> None:
        """Show freed, released and retained bytes of every backward since ``%load_ext``."""
        args = self._parse(self.memory, line)
        meter = MemoryMeter(session_log())
        self._show(meter, meter.widget if args.live else None)

    # -- %gradflow ------------------------------------------------------------------------------
    @magic_arguments()
    @argument("model", nargs="?", help="a model (default: every tensor that requires grad)")
    @argument("--live", action="store_true", help="a widget that redraws after every backward")
    @line_magic
    def gradflow(self, line: str) -> None:
        """Show per-parameter gradient norm, mean and max across a model's layers."""
        args = self._parse(self.gradflow, line)
        if args.model is None:
            flow = GradFlow(Names(self.shell.user_ns))
        else:
            model = self._evaluate("gradflow", args.model)
            if not callable(getattr(model, "named_parameters", None)):
                raise UsageError(
                    f"%gradflow: {args.model} is a {type(model).__name__}, not a model "
                    "(it has no named_parameters())")
            flow = GradFlow(model)
        self._show(flow, flow.widget if args.live else None)

    # -- %why -----------------------------------------------------------------------------------
    @magic_arguments()
    @argument("exprs", nargs="+", metavar="EXPR",
              help="tensors to explain: names or any expression (model[0].weight, h.grad_fn)")
    @line_magic
    def why(self, line: str) -> None:
        """Say why each tensor's ``.grad`` is what it is (None, zero, NaN, accumulated...), with
        the line where it happened, and how to fix it.

        Each EXPR is evaluated in the notebook's namespace, as ``%timeit`` does (subscripts,
        attributes and calls are your own code); expressions are separated by spaces.
        Examples: ``%why w``, ``%why h model.fc1.weight``, ``%why model[0].weight``. Lines are
        known for code that ran watched: inside ``%%trace``, ``%backward``, or after
        ``%watch on``.
        """
        if not line.strip():
            self._parse(self.why, line)  # argparse's own message for a missing argument
        names = Names(self.shell.user_ns)
        found = dict(names.tensors())
        exprs = split_expressions(line, found)
        if exprs is None:
            raise UsageError(f"%why: {line.strip()!r} is not a list of expressions (separate "
                             "them by spaces: %why w model[0].weight)")
        reasons = []
        for expr in exprs:
            if expr in found:
                value = found[expr]
            elif expr.isidentifier() and expr not in self.shell.user_ns \
                    and expr not in self.shell.user_global_ns:
                raise UsageError(f"%why: no variable named {expr!r}")
            else:
                value = self._evaluate("why", expr)
            if torch_adapter.is_torch_tensor(value):
                reasons.append(explain_torch(expr, value, names))
            elif isinstance(value, Tensor):
                reasons.append(explain(expr, value, names))
            elif is_tensor(value):
                raise UsageError(f"%why: {expr} is a {type(value).__module__} tensor; "
                                 "%why explains gradnb and torch tensors")
            else:
                raise UsageError(f"%why: {expr} is a {type(value).__name__}, not a tensor")
        display(Why(reasons))

    # -- %watch ---------------------------------------------------------------------------------
    @magic_arguments()
    @argument("state", nargs="?", choices=["on", "off"],
              help="on: remember source lines, cuts and in-place writes in every cell; off: stop")
    @line_magic
    def watch(self, line: str) -> None:
        """Watch every cell (``%watch on``) so graphs show source lines and cut edges and
        ``%why`` can say where things happened; ``%watch off`` stops. Costs nothing when off."""
        args = self._parse(self.watch, line)
        if args.state is not None:
            watch_session(args.state == "on")
        print(f"watching: {'on' if watcher().session else 'off'}")
