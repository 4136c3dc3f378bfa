"""The diff's work on the uploaded bytes themselves (protobuf parsing, shape inference), run in a sandbox
child like the engines: the parent receives plain Python values and arrays only."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import onnx
from onnx import helper, numpy_helper

from clipbridge.diff import inputs as gen
from clipbridge.diff import shapes
from clipbridge.scan.constant_reader import read
from clipbridge.scan.patterns import ClipLike, constants, find
from clipbridge.scan.wire import is_external
from clipbridge.core.errors import ArtifactError, ClipBridgeError
from clipbridge.core.ondisk import folder_of, like


T = TypeVar("T")
# Any one tensor of the model, as shape inference knows it (bytes): past it the model is refused before an
# engine computes anything (a few hundred bytes of ConstantOfShape/Expand/Tile can ask for gigabytes). The default
# where no budget is given; a diff's limit is its memory budget's share per engine (clipbridge.diff.run.Options
# .tensor_limit), which the user sets: no fixed cap refuses a model the machine can run (issue 46).
MAX_TENSOR_BYTES = 128 * 2**20
Limit = tuple[int, str]  # bytes, and the setting that raises them (`--memory`, the server's variable)


class TensorTooLarge(ClipBridgeError):
    """A tensor of the model would pass MAX_TENSOR_BYTES (known from shape inference, before any engine runs)."""

    status = 422
    title = "The model's tensors are too large to diff"


class BudgetTooSmall(TensorTooLarge):
    """The diff's memory budget cannot hold one node's tensors (every engine's copy): no cut of the graph fits.
    Raised before any run, from shape inference: here for one tensor past the budget's share per engine, by
    clipbridge.diff.passes for one node's tensors together."""

    title = "The diff's memory budget is too small for the model"


def model_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """Any failure reading the uploaded model (a tensor onnx cannot decode, a malformed attribute) is the
    model's: a 400 naming it, never a 500."""
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except ClipBridgeError:
            raise
        except Exception as exc:  # noqa: BLE001 - onnx/numpy decode errors on the user's bytes
            raise ArtifactError(f"the model cannot be read: {type(exc).__name__}: "
                                f"{' '.join(str(exc).split())[:300]}", "model") from None
    return wrapped


@dataclass
class NodeInfo:
    name: str
    op: str
    inputs: list[str]
    outputs: list[str]


@dataclass
class Plan:
    nodes: list[NodeInfo]  # the main graph in its (topological) order, Constant nodes left out
    clips: dict[str, ClipLike]
    feeds: dict[str, np.ndarray]
    given: bool
    outputs: list[str]
    constants: set[str] = field(default_factory=set)
    dtypes: dict[str, str] = field(default_factory=dict)  # tensor -> numpy dtype name, where declared
    sizes: dict[str, int] = field(default_factory=dict)  # tensor -> element count, where inference knows it
    symbolic: list[dict] = field(default_factory=list)  # each symbolic input dimension and the value it ran with

    def nbytes(self, tensor: str) -> int:
        """The tensor's bytes where inference knows its shape and type (0 where it does not)."""
        return self.sizes.get(tensor, 0) * np.dtype(self.dtypes.get(tensor, "float64")).itemsize


def load(model_bytes: bytes) -> onnx.ModelProto:
    try:
        m = onnx.load_from_string(model_bytes)
        # the bytes as given: checking the proto would serialise it again
        onnx.checker.check_model(model_bytes if folder_of(model_bytes) is None else stubs_as_inputs(m))
    except Exception as exc:  # protobuf's DecodeError or the checker's ValidationError: the user's bytes
        raise ArtifactError(f"the model is not a valid ONNX model: {' '.join(str(exc).split())[:400]}",
                            "model") from None
    if not m.graph.node:
        raise ArtifactError("the model's graph has no nodes", "model")
    return m


def stubs_as_inputs(m: onnx.ModelProto) -> onnx.ModelProto:
    """An OnDisk model for the checker: its initializers whose data stays in a file become graph inputs of their
    type and dims (the checker looks for the file relative to its working directory; the engines read it)."""
    return _as_inputs(m, [t for t in m.graph.initializer if is_external(t)])


def _as_inputs(m: onnx.ModelProto, tensors: list[onnx.TensorProto]) -> onnx.ModelProto:
    """A copy of `m` with these initializers as graph inputs of their type and dims (none of their data copied)."""
    names, declared = {t.name for t in tensors}, {i.name for i in m.graph.input}
    light = onnx.ModelProto()
    _copy_fields(m, light, "graph")
    _copy_fields(m.graph, light.graph, "initializer")
    light.graph.initializer.extend(t for t in m.graph.initializer if t.name not in names)
    light.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                             for t in tensors if t.name not in declared)
    return light


# An initializer of at least this many elements is never read by value in shape inference: the inputs whose
# values inference reads (a Reshape's shape, Slice's starts, Pad's pads, Resize's scales, TopK's k) hold one
# number per axis at most.
BY_VALUE_MAX = 1024


def _repeated(fd: Any) -> bool:
    """Whether a field is repeated (protobuf 6 names it `is_repeated`; older ones compare `label`)."""
    flag = getattr(fd, "is_repeated", None)
    return bool(flag) if flag is not None else fd.label == fd.LABEL_REPEATED


def _copy_fields(src: Any, dst: Any, skip: str) -> None:
    """Every set field of message `src` but `skip` into the empty message `dst` (no large field is copied)."""
    for fd, value in src.ListFields():
        if fd.name == skip:
            continue
        if _repeated(fd):
            getattr(dst, fd.name).extend(value)
        elif fd.message_type is not None:
            getattr(dst, fd.name).CopyFrom(value)
        else:
            setattr(dst, fd.name, value)


def for_inference(m: onnx.ModelProto, model_bytes: bytes | None = None) -> tuple[bytes | onnx.ModelProto, set[str]]:
    """(the model as shape inference needs it, the initializers it turned into graph inputs that the model does
    not itself list as inputs: those are left out of what inference reports). Each main-graph
    initializer of BY_VALUE_MAX elements or more becomes a graph input of its type and dims: inference then reads,
    writes back and parses again kilobytes instead of the weights (a 21 MB model: 21 ms -> 3 ms)."""
    big = [t for t in m.graph.initializer if np.prod(t.dims, dtype=np.float64) >= BY_VALUE_MAX]
    if not big:
        return (m if model_bytes is None else model_bytes), set()
    declared = {i.name for i in m.graph.input}
    return _as_inputs(m, big), {t.name for t in big} - declared


def _types(m: onnx.ModelProto, model_bytes: bytes | None = None) -> tuple[dict[str, str], dict[str, int]]:
    """(tensor -> numpy dtype name, tensor -> element count where every dimension is known) for the tensors of
    the graph (its inputs, node outputs and outputs; not its weights); `model_bytes`, the bytes `m` was read from,
    spares serialising `m` again."""
    light, weights = for_inference(m, model_bytes)
    try:
        g = onnx.shape_inference.infer_shapes(light, strict_mode=False).graph
    except Exception:  # a best effort: declared types still come from the graph's own value_info
        g = m.graph
    dtypes, sizes = {}, {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if vi.name in weights:
            continue
        tt = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and tt.elem_type:
            try:
                dtypes[vi.name] = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type)).name
            except (KeyError, TypeError, ValueError):
                continue
            dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
            if tt.HasField("shape") and all(d >= 0 for d in dims):
                sizes[vi.name] = int(np.prod(dims, dtype=np.float64))
    return dtypes, sizes


@model_errors
def prepare(model_bytes: bytes, npz: bytes | None, seed: int = gen.SEED, sample: str = "ordinary",
            given: shapes.Shapes = (), limit: Limit = (MAX_TENSOR_BYTES, "model")) -> Plan:
    """The model's nodes, clip-like nodes and the inputs to run (the .npz's, or generated with `seed`: an
    ordinary sample, or the edge probe's values, at the `given` shapes); no tensor past `limit` (check_footprint)."""
    m = load(model_bytes)
    clips = find(m)
    shapes.check_names(given, [vi.name for vi in gen.graph_inputs(m)], npz is not None)
    feeds = gen.read_npz(npz, m) if npz is not None else gen.generate(m, list(clips.values()), seed, sample, given)
    consts = {t.name for t in m.graph.initializer} | {o for n in m.graph.node if n.op_type == "Constant"
                                                      for o in n.output}
    nodes = [NodeInfo(n.name or n.output[0], n.op_type, list(n.input), list(n.output))
             for n in m.graph.node if n.op_type != "Constant"]
    dtypes, sizes = _types(m, model_bytes)
    plan = Plan(nodes, clips, feeds, npz is not None, [o.name for o in m.graph.output], consts, dtypes, sizes,
                shapes.symbolic(gen.graph_inputs(m), feeds))
    check_footprint(plan, limit)
    return plan


def check_footprint(plan: Plan, limit: Limit = (MAX_TENSOR_BYTES, "model")) -> None:
    """TensorTooLarge naming the largest tensor shape inference knows past the limit's bytes, before any run, and
    the setting that raises the limit."""
    most, option = limit
    big = max(plan.sizes, key=plan.nbytes, default=None)
    if big is not None and plan.nbytes(big) > most:
        raise (TensorTooLarge if option == "model" else BudgetTooSmall)(f"tensor {big[:80]!r} would hold {plan.nbytes(big)} bytes ({plan.sizes[big]} x "
                             f"{plan.dtypes.get(big, 'float64')}); this diff runs tensors of at most {most} bytes"
                             + ("" if option == "model" else f" (its memory budget's share per engine: raise "
                                                             f"{option})"), option)


def replay_inputs(names: Iterable[str], feeds: dict[str, np.ndarray], consts: dict[str, np.ndarray],
                  node: str) -> tuple[list[onnx.ValueInfoProto], list[onnx.TensorProto]]:
    """The graph inputs (typed like the captured `feeds`) and initializers (`consts`) of a replay of `node`, in
    the order of `names`; an input that is neither was not captured."""
    inits, ins = [], []
    for name in dict.fromkeys(i for i in names if i):
        if name in feeds:
            a = feeds[name]
            ins.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)))
        elif name in consts:
            inits.append(numpy_helper.from_array(consts[name], name))
        else:
            raise ClipBridgeError(f"input {name!r} of node {node!r} was not captured", "node")
    return ins, inits


@model_errors
def single_node(model_bytes: bytes, node: str, feeds: dict[str, np.ndarray]) -> bytes:
    """A model of the one node `node`: its constant inputs as initializers, the others as graph inputs typed
    like `feeds` (the captured tensors), every output a graph output."""
    m = onnx.load_from_string(model_bytes)
    proto = next((n for n in m.graph.node if (n.name or n.output[0]) == node), None)
    if proto is None:
        raise ClipBridgeError(f"the model has no node {node!r}", "node")
    consts = dict(constants(m.graph))
    for t in m.graph.initializer:  # the node's own constant inputs, whatever their size (checked reader)
        if t.name in proto.input and t.name not in consts and (v := read(t, limit=None)) is not None:
            consts[t.name] = v
    stubs = external_inputs(m.graph, proto)
    ins, inits = replay_inputs([i for i in proto.input if i not in stubs], feeds, consts, node)
    inits += stubs.values()
    outs = [helper.make_empty_tensor_value_info(o) for o in proto.output if o]
    g = helper.make_graph([proto], f"single_{proto.op_type}", ins, outs, inits)
    single = helper.make_model(g, opset_imports=list(m.opset_import), ir_version=m.ir_version,
                               producer_name="clipbridge-diff")
    return single.SerializeToString()


def external_inputs(g: onnx.GraphProto, proto: onnx.NodeProto) -> dict[str, onnx.TensorProto]:
    """The node's initializers whose data stays in a file (an OnDisk model's weights: clipbridge.core.ondisk),
    copied as their stubs: the replay's engine reads them where the model's do, never this process."""
    return {t.name: t for t in g.initializer if t.name in proto.input and is_external(t)}


def replay_name(k: int, name: str) -> str:
    """The name of tensor (or node) `name` in the k-th replay copy."""
    return f"clipbridge_replay_{k}/{name}"


def appended(model_bytes: bytes, nodes: Iterable[onnx.NodeProto] = (), inputs: Iterable[onnx.ValueInfoProto] = (),
             outputs: Iterable[onnx.ValueInfoProto] = ()) -> bytes:
    """The model with `nodes`, graph inputs and graph outputs appended to its main graph, without serialising the
    model again (~14 ms on a 21 MB model, each time). Protobuf merges a repeated occurrence of a singular embedded
    message (ModelProto.graph) into the first and appends to its repeated fields (the protobuf encoding guide,
    "Last One Wins"): the model's own bytes followed by those of a ModelProto holding only the additions parse, in
    onnx, onnxruntime and OpenVINO alike, as the model with them appended."""
    extra = onnx.ModelProto(graph=onnx.GraphProto(node=list(nodes), input=list(inputs), output=list(outputs)))
    return like(model_bytes, model_bytes + extra.SerializeToString())  # an OnDisk model's weights: still its folder


@model_errors
def with_replays(model_bytes: bytes, copies: dict[str, dict[str, tuple[str, list[int]]]]) -> bytes:
    """The model plus, per named node, a copy of it fed by graph inputs of its own (typed as given: the first
    engine's captured tensors) and giving graph outputs of its own. One compile then also replays every
    clip-like node alone on the same input; its constants stay shared with the original node."""
    m = onnx.load_from_string(model_bytes)
    protos = {(n.name or n.output[0]): n for n in m.graph.node}
    nodes, ins, outs = [], [], []
    for k, (node, inputs) in enumerate(copies.items()):
        p = protos[node]
        c = onnx.NodeProto()
        c.CopyFrom(p)
        c.name = replay_name(k, node)
        del c.input[:]
        c.input.extend(replay_name(k, i) if i in inputs else i for i in p.input)
        del c.output[:]
        c.output.extend(replay_name(k, o) if o else o for o in p.output)
        nodes.append(c)
        for i, (dtype, shape) in inputs.items():
            elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
            ins.append(helper.make_tensor_value_info(replay_name(k, i), elem, shape))
        outs.extend(helper.make_empty_tensor_value_info(replay_name(k, o)) for o in p.output if o)
    return appended(model_bytes, nodes, ins, outs)
