#!/usr/bin/env python3
"""Writes a convgen spec from a trained network: every convolution convgen
serves, with a following BatchNorm folded into `scale_shift`, a following
residual add into `residual` (PyTorch models; dense convolutions), and a
following ReLU, ReLU6, SiLU or Hardswish into the activation.

From an ONNX file (the `onnx` package and its shape inference):

  tools/spec_from_model.py model.onnx --batch 1 64 --library mnv2 --out mnv2.yaml

Tensors the model keeps in external files are not read unless asked
(--external-data): the shapes a spec needs are in the model itself.

or from a PyTorch module (torch.fx symbolic trace and shape propagation),
named as `package.module:callable` and built with random weights:

  tools/spec_from_model.py torchvision.models:mobilenet_v2 --input 3 224 224 \\
      --batch 1 64 --library mnv2 --out mnv2.yaml

The workloads get the dtype the model's weights have (float32, float16 or
bfloat16) and the layout NCHW, unless --dtype and --channels-last say what the
model runs in (`model.half().to(memory_format=torch.channels_last)`: float16,
NHWC). --math tf32 (or 3xtf32) lets the float32 dense convolutions run on
TF32 tensor cores, as PyTorch's default `allow_tf32` does: their workloads
get `math: tf32` (depthwise convolutions keep fp32).

The spec holds one workload per distinct problem at each batch asked, in the
order the model first uses it (so the output is the same on every run). What
is left out, and why, is printed and written at the top of the spec. When
convgen serves no layer of the model, no spec is written: the message lists
the layers seen, each convolution with the reason it was left out.
Exit status: 0 success; 1 the model cannot be read; 2 usage error; 3 no
layer of the model is served (nothing written).
"""
import argparse
import collections
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integrations", "torch"))
from library_name import check_library_name  # noqa: E402  convgen's rule for a library name

ACTIVATIONS = ("relu", "relu6", "silu", "hardswish")
DTYPES = ("float32", "float16", "bfloat16")
MATHS = ("fp32", "tf32", "3xtf32")


@dataclass
class Conv:
    """One convolution of the model, with what follows it folded in."""
    name: str
    c: int
    h: int
    w: int
    c_out: int
    kh: int
    kw: int
    stride: tuple
    dilation: tuple
    pads: tuple  # top, bottom, left, right
    groups: int
    dtype: str = "float32"
    bias: bool = False
    batch_norm: bool = False
    residual: bool = False  # a tensor shaped like the output is added before the activation
    activation: str = "none"
    math: str = "fp32"  # a dense float32 convolution's: what its products may be rounded to
    folded: list = field(default_factory=list)  # names of the nodes folded in

    def workload(self, batch):
        """The spec workload (a flow mapping), or (None, why) if convgen does not serve it."""
        if self.dtype not in DTYPES:
            return None, f"dtype {self.dtype} (convgen serves {', '.join(DTYPES)})"
        if self.groups == 1:
            op = {"op": "conv2d", "c_out": self.c_out}
        elif self.groups == self.c and self.c_out % self.c == 0:
            op = {"op": "depthwise_conv2d", "multiplier": self.c_out // self.c}
        else:
            return None, (f"grouped convolution (groups={self.groups} of {self.c} channels; convgen serves "
                          "groups=1 and depthwise, groups=channels)")
        epilogue = "scale_shift" if self.batch_norm else "bias" if self.bias else "none"
        fields = {"op": op["op"], "n": batch, "c": self.c}
        if "c_out" in op:
            fields["c_out"] = op["c_out"]
        fields.update({"h": self.h, "w": self.w, "filter": pair(self.kh, self.kw),
                       "stride": pair(*self.stride), "dilation": pair(*self.dilation),
                       "padding": "[%d, %d, %d, %d]" % self.pads})
        if "multiplier" in op:
            fields["multiplier"] = op["multiplier"]
        fields["epilogue"] = epilogue
        if self.residual:
            fields["residual"] = "true"
        fields["activation"] = self.activation
        if self.math != "fp32" and op["op"] == "conv2d" and self.dtype == "float32":
            fields["math"] = self.math
        return "{" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}", None


def pair(a, b):
    return str(a) if a == b else f"[{a}, {b}]"


@dataclass
class Layer:
    """One node of the model, as a message names it: its name, its kind (the
    ONNX op type or the PyTorch module or function) and its shapes."""
    name: str
    kind: str
    shape_in: object  # a list of dims (None where unknown), or None
    shape_out: object

    def __str__(self):
        return f"{self.name}: {self.kind} {shape_text(self.shape_in)} -> {shape_text(self.shape_out)}"


def shape_text(dims):
    if dims is None:
        return "?"
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


# --------------------------------------------------------------------- ONNX

def convs_from_onnx(path, external_data=False):
    """The model's convolutions. Its tensors kept in external files (as
    large models keep their weights) are read only with `external_data`:
    a spec needs shapes, which the model itself states, and an external
    file is named by the model, so reading it follows paths the model
    chooses. Unread, such a tensor is an unknown constant (a Clip whose
    bounds are external is then not taken for a ReLU6)."""
    import onnx
    from onnx import numpy_helper, shape_inference
    from onnx.external_data_helper import uses_external_data

    model = shape_inference.infer_shapes(onnx.load(path, load_external_data=external_data))
    graph = model.graph
    shapes, dtypes = {}, {}
    for value in list(graph.value_info) + list(graph.input) + list(graph.output):
        t = value.type.tensor_type
        if t.HasField("shape"):
            shapes[value.name] = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        dtypes[value.name] = onnx.TensorProto.DataType.Name(t.elem_type).lower()
    initializers = {i.name: i for i in graph.initializer}
    for name, init in initializers.items():
        shapes.setdefault(name, list(init.dims))
        dtypes.setdefault(name, onnx.TensorProto.DataType.Name(init.data_type).lower())
    consumers = {}
    for node in graph.node:
        for i in node.input:
            consumers.setdefault(i, []).append(node)
    graph_outputs = {o.name for o in graph.output}

    def only_consumer(tensor):
        """The one node reading `tensor`, if exactly one does and it is not a graph output."""
        users = consumers.get(tensor, [])
        return users[0] if len(users) == 1 and tensor not in graph_outputs else None

    def attr(node, name, default):
        for a in node.attribute:
            if a.name == name:
                return onnx.helper.get_attribute_value(a)
        return default

    def constant(name):
        if name in initializers:
            if uses_external_data(initializers[name]):
                return None  # not loaded: to_array would read the file the model names
            return numpy_helper.to_array(initializers[name])
        for node in graph.node:
            if node.op_type == "Constant" and node.output[0] == name:
                value = attr(node, "value", None)
                return None if value is None or uses_external_data(value) else numpy_helper.to_array(value)
        return None

    convs, skipped = [], []
    layers = [Layer(node.name or node.output[0], node.op_type, shapes.get(node.input[0]) if node.input else None,
                    shapes.get(node.output[0])) for node in graph.node if node.op_type != "Constant"]
    for node in graph.node:
        if node.op_type != "Conv":
            continue
        x, w = node.input[0], node.input[1]
        x_shape, w_shape = shapes.get(x), shapes.get(w)
        if not x_shape or not w_shape or len(x_shape) != 4 or None in x_shape[1:] or None in w_shape:
            skipped.append((node.name or node.output[0], "not a 2-D convolution of known shape"))
            continue
        _, c, h, wd = x_shape
        c_out, _, kh, kw = w_shape
        kh, kw = attr(node, "kernel_shape", [kh, kw])
        stride = tuple(attr(node, "strides", [1, 1]))
        dilation = tuple(attr(node, "dilations", [1, 1]))
        pads = onnx_pads(attr(node, "auto_pad", b"NOTSET"), attr(node, "pads", [0, 0, 0, 0]), (h, wd), (kh, kw),
                         stride, dilation)
        conv = Conv(node.name or node.output[0], c, h, wd, c_out, kh, kw, stride, dilation, pads,
                    attr(node, "group", 1), dtypes.get(x, "float"), bias=len(node.input) > 2 and node.input[2] != "")
        if conv.dtype == "float":
            conv.dtype = "float32"
        out = node.output[0]
        nxt = only_consumer(out)
        if nxt is not None and nxt.op_type == "BatchNormalization" and nxt.input[0] == out:
            conv.batch_norm = True
            conv.folded.append(nxt.name or nxt.output[0])
            out = nxt.output[0]
            nxt = only_consumer(out)
        activation, out = onnx_activation(nxt, out, consumers, only_consumer, constant)
        if activation:
            conv.activation = activation[0]
            conv.folded.extend(activation[1])
        convs.append(conv)
    return convs, skipped, layers


def onnx_pads(auto_pad, pads, size, kernel, stride, dilation):
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        result = []
        for extent, k, s, d in zip(size, kernel, stride, dilation):
            out = -(-extent // s)
            total = max(0, (out - 1) * s + d * (k - 1) + 1 - extent)
            small, large = total // 2, total - total // 2
            result.append((small, large) if auto_pad == "SAME_UPPER" else (large, small))
        return (result[0][0], result[0][1], result[1][0], result[1][1])
    if auto_pad == "VALID":
        return (0, 0, 0, 0)
    top, left, bottom, right = pads
    return (top, bottom, left, right)


def onnx_activation(node, out, consumers, only_consumer, constant):
    """(activation, folded node names) for the activation reading `out`, and its output.
    `node` is the one node reading `out`, if only one does."""
    # x * sigmoid(x): SiLU as exporters write it. `out` feeds both nodes.
    users = consumers.get(out, [])
    if len(users) == 2:
        sigmoid = next((u for u in users if u.op_type == "Sigmoid"), None)
        mul = next((u for u in users if u.op_type == "Mul"), None)
        if sigmoid is not None and mul is not None and set(mul.input) == {out, sigmoid.output[0]} \
                and consumers.get(sigmoid.output[0], []) == [mul]:
            return ("silu", [sigmoid.name or sigmoid.output[0], mul.name or mul.output[0]]), mul.output[0]
    if node is None:
        return None, out
    name = node.name or node.output[0]
    if node.op_type == "Relu":
        return ("relu", [name]), node.output[0]
    if node.op_type == "HardSwish":
        return ("hardswish", [name]), node.output[0]
    if node.op_type == "Clip":
        low = constant(node.input[1]) if len(node.input) > 1 and node.input[1] else None
        high = constant(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        if low is not None and high is not None and float(low) == 0.0 and float(high) == 6.0:
            return ("relu6", [name]), node.output[0]
        return None, out
    return None, out


# -------------------------------------------------------------------- torch

def torch_conv_padding(conv):
    """A torch Conv2d's padding as convgen's (top, bottom, left, right)."""
    kh, kw = conv.kernel_size
    if isinstance(conv.padding, str):
        if conv.padding == "valid":
            return (0, 0, 0, 0)
        # "same": PyTorch puts the odd one at the end
        th, tw = conv.dilation[0] * (kh - 1), conv.dilation[1] * (kw - 1)
        return (th // 2, th - th // 2, tw // 2, tw - tw // 2)
    return (conv.padding[0], conv.padding[0], conv.padding[1], conv.padding[1])


def convs_from_torch(target, input_chw):
    """The convolutions of a PyTorch model (traced in float32 on the CPU:
    the shapes are the same in any dtype), its other layers, and those
    convolutions left out with the reason."""
    import torch
    from torch import fx, nn
    from torch.fx.passes.shape_prop import ShapeProp

    module_name, _, attr_name = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attr_name)
    torch.manual_seed(0)
    model = factory().eval()
    traced = fx.symbolic_trace(model)
    ShapeProp(traced).propagate(torch.randn(1, *input_chw))
    convs, skipped = [], []
    layers = torch_layers(traced)
    for node in traced.graph.nodes:
        m = traced.get_submodule(node.target) if node.op == "call_module" else None
        if isinstance(m, nn.modules.conv._ConvNd) and not isinstance(m, nn.Conv2d):
            skipped.append((node.target, f"{type(m).__name__} (convgen serves 2-D convolutions)"))
    for group in torch_conv_groups(traced):
        node, m = group.nodes[0], group.conv
        if m.padding_mode != "zeros":
            skipped.append((node.target, f"padding_mode {m.padding_mode} (convgen pads with zeros)"))
            continue
        _, c, h, w = node.args[0].meta["tensor_meta"].shape
        kh, kw = m.kernel_size
        conv = Conv(node.target, c, h, w, m.out_channels, kh, kw, tuple(m.stride), tuple(m.dilation),
                    torch_conv_padding(m), m.groups, str(m.weight.dtype).replace("torch.", ""),
                    bias=m.bias is not None, batch_norm=group.batch_norm is not None,
                    residual=group.residual is not None, activation=group.activation,
                    folded=[str(n.target if n.op == "call_module" else n.name) for n in group.nodes[1:]])
        convs.append(conv)
    return convs, skipped, layers


def torch_layers(traced):
    """Every module, function and method call of an FX-traced module, as a
    Layer (modules named by their path, as the left-out lines name them)."""
    def dims(node):
        shape = getattr(node.meta.get("tensor_meta"), "shape", None) if hasattr(node, "meta") else None
        return list(shape) if shape is not None else None

    layers = []
    for node in traced.graph.nodes:
        if node.op == "call_module":
            name, kind = str(node.target), type(traced.get_submodule(node.target)).__name__
        elif node.op == "call_function":
            name, kind = node.name, getattr(node.target, "__name__", str(node.target))
        elif node.op == "call_method":
            name, kind = node.name, f"Tensor.{node.target}"
        else:
            continue  # inputs, outputs and parameters
        first = next((a for a in node.args if hasattr(a, "meta")), None)
        layers.append(Layer(name, kind, dims(first) if first is not None else None, dims(node)))
    return layers


@dataclass
class ConvGroup:
    """A Conv2d node of an FX graph with what follows it alone: a BatchNorm2d,
    then (a dense convolution) the add of a tensor shaped like its output,
    then a ReLU, ReLU6, SiLU or Hardswish (module or function)."""
    nodes: list  # the conv's node, then those folded into it, in graph order
    conv: object
    batch_norm: object  # the BatchNorm2d module, or None
    activation: str  # "none" or one of ACTIVATIONS
    residual: object = None  # the node whose value is added (ResNet's identity, MobileNetV2's block input), or None


def torch_conv_groups(traced):
    """Every Conv2d group of an FX-traced module (tools/spec_from_model.py
    writes them as workloads; integrations/torch swaps them for convgen)."""
    import operator

    import torch
    from torch import fx, nn
    import torch.nn.functional as F

    by_module = {nn.ReLU: "relu", nn.ReLU6: "relu6", nn.SiLU: "silu", nn.Hardswish: "hardswish"}
    by_function = {F.relu: "relu", torch.relu: "relu", F.relu6: "relu6", F.silu: "silu", F.hardswish: "hardswish"}

    def module_of(node):
        return traced.get_submodule(node.target) if node.op == "call_module" else None

    def only_user(node):
        users = list(node.users)
        return users[0] if len(users) == 1 else None

    def added_to(node, value):
        """The other operand where `node` adds a tensor of value's shape and
        dtype to `value` (the shapes known from shape propagation), else None."""
        if node.op != "call_function" or node.target not in (operator.add, operator.iadd, torch.add):
            return None
        if len(node.args) != 2 or node.kwargs:
            return None  # torch.add's alpha, or a third operand
        if node.target is operator.iadd and node.args[0] is not value:
            return None  # `identity += conv(x)` writes into identity: fused, that write would be lost
        other = node.args[1] if node.args[0] is value else node.args[0] if node.args[1] is value else None
        if not isinstance(other, fx.Node) or other is value or other.op == "get_attr":
            return None  # a parameter (a [1, C, H, W] map) broadcasts over the batch: not a residual
        meta = [getattr(n, "meta", {}).get("tensor_meta") for n in (value, other)]
        if any(m is None or not hasattr(m, "shape") for m in meta):
            return None  # shapes unknown: broadcasting cannot be ruled out
        return other if (meta[0].shape, meta[0].dtype) == (meta[1].shape, meta[1].dtype) else None

    def activation_of(node):
        m = module_of(node)
        if m is not None:
            if isinstance(m, nn.Hardtanh) and m.min_val == 0.0 and m.max_val == 6.0:
                return "relu6"
            return by_module.get(type(m))
        return by_function.get(node.target) if node.op == "call_function" else None

    groups = []
    claimed = set()  # nodes folded into a group already (ResNet's add sums two conv groups: the first takes it)
    for node in list(traced.graph.nodes):
        conv = module_of(node)
        if not isinstance(conv, nn.Conv2d):
            continue
        group = ConvGroup([node], conv, None, "none")
        nxt = only_user(node)
        bn = module_of(nxt) if nxt is not None else None
        if isinstance(bn, nn.BatchNorm2d) and bn.track_running_stats and bn.running_var is not None:
            group.batch_norm = module_of(nxt)
            group.nodes.append(nxt)
            nxt = only_user(nxt)
        residual = added_to(nxt, group.nodes[-1]) if nxt is not None and nxt not in claimed else None
        if residual is not None and conv.groups == 1:
            group.residual = residual
            group.nodes.append(nxt)
            nxt = only_user(nxt)
        if nxt is not None and activation_of(nxt) is not None:
            group.activation = activation_of(nxt)
            group.nodes.append(nxt)
        claimed.update(group.nodes)
        groups.append(group)
    return groups


# --------------------------------------------------------------------- spec

def write_spec(convs, skipped, batches, library, source, dtype=None, layout="NCHW", refusals=None, math="fp32"):
    """The spec text, the lines saying what was left out and the number of
    workloads (0: no layer is served, and the text is no valid spec). The
    workloads are in `dtype` (None: each in its weights' dtype) and `layout`;
    the float32 dense ones in `math`.
    refusals(texts, dtype, layout), where given, returns {text: reason} for
    the workloads convgen refuses (convgen_refusals): those are left out."""
    for conv in convs:
        conv.math = math
        if dtype is not None:
            conv.dtype = dtype
    dtypes = collections.Counter(conv.dtype for conv in convs if conv.dtype in DTYPES)
    default_dtype = dtypes.most_common(1)[0][0] if dtypes else "float32"
    texts = []  # per conv, its workload at each batch (None: left out, with the reason)
    for conv in convs:
        texts.append([])
        for batch in batches:
            text, why = conv.workload(batch)
            if text is not None and conv.dtype != default_dtype:
                text = text[:-1] + f", dtype: {conv.dtype}}}"
            texts[-1].append((batch, text, why))
    candidates = list(dict.fromkeys(t for rows in texts for _, t, _ in rows if t is not None))
    refused = refusals(candidates, default_dtype, layout) if refusals and candidates else {}
    workloads, left_out, served, first_reason = [], [], 0, {}
    for conv, rows in zip(convs, texts):
        reasons, refused_batches = [], 0
        for batch, text, why in rows:
            if text is None or text in refused:
                refused_batches += 1
                reason = why if text is None else f"{refused[text]} (convgen check)"
                if reason not in [r for _, r in reasons]:
                    reasons.append((batch, reason))
            elif text not in workloads:
                workloads.append(text)
        served += refused_batches < len(batches)
        every_batch_alike = refused_batches == len(batches) and len(reasons) == 1
        if reasons:
            first_reason.setdefault(conv.name, reasons[0][1])
        for batch, reason in reasons:
            left_out.append(f"{conv.name}{'' if every_batch_alike else f' (batch {batch})'}: {reason}")
    left_out += [f"{name}: {why}" for name, why in skipped]
    lines = [f"# Generated by tools/spec_from_model.py from {source} at batch {', '.join(map(str, batches))}:",
             f"# {len(convs) + len(skipped)} convolutions, {served} served, {len(workloads)} distinct workloads.",
             "# Left out:" if left_out else "# Left out: none."]
    lines += [f"#   {line}" for line in left_out]
    lines += [f"library: {library}", f"defaults: {{dtype: {default_dtype}, layout: {layout}}}", "workloads:"]
    lines += [f"  - {w}" for w in workloads]
    return "\n".join(lines) + "\n", left_out, len(workloads), first_reason


def convgen_refusals(convgen):
    """A refusals function for write_spec: `convgen check --skip-invalid` on
    a scratch spec of the workloads, one a line, each with its dtype and
    layout (so that every message points at its workload's line). convgen
    knows its limits and which algorithm serves what; this tool does not
    repeat them."""
    def refusals(texts, dtype, layout):
        lines = ["library: spec_from_model_check", "workloads:"]
        for text in texts:
            extra = ("" if ", dtype: " in text else f", dtype: {dtype}") + f", layout: {layout}"
            lines.append(f"  - {text[:-1]}{extra}}}")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "check.yaml")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            proc = subprocess.run([convgen, "check", "--skip-invalid", path], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{convgen} check failed: {proc.stderr.strip()}")
        refused = {}
        for match in re.finditer(r"^skipped: [^\n]*?:(\d+):\d+: error: (.*)$", proc.stderr, re.MULTILINE):
            index = int(match.group(1)) - 3  # line 3 holds the first workload
            if 0 <= index < len(texts):
                refused.setdefault(texts[index], match.group(2))
        return refused
    return refusals


MAX_LAYERS_SHOWN = 12


def nothing_served(source, reasons, skipped, layers):
    """The message when no layer is served: why, then the layers seen, the
    convolutions first with the reason each was left out (reasons: write_spec's)."""
    why = dict(reasons)
    why.update(dict(skipped))
    n_convs = len(why)
    if n_convs == 0:
        reason = "it has no 2-D convolution, and convolutions are all that convgen serves"
    else:
        reason = f"convgen serves none of its {n_convs} convolution{'s' if n_convs > 1 else ''}"
    ordered = [layer for layer in layers if layer.name in why] + [layer for layer in layers if layer.name not in why]
    lines = [f"error: no layer of {source} is served, so no spec is written: {reason}.",
             f"its {len(layers)} layer{'s' if len(layers) != 1 else ''}:"]
    for layer in ordered[:MAX_LAYERS_SHOWN]:
        lines.append(f"  {layer}" + (f": left out: {why[layer.name]}" if layer.name in why else ""))
    rest = ordered[MAX_LAYERS_SHOWN:]
    if rest:
        kinds = collections.Counter(layer.kind for layer in rest)
        lines.append(f"  ... and {len(rest)} more: " + ", ".join(f"{n} {kind}" for kind, n in kinds.most_common()))
    return "\n".join(f"spec_from_model: {line}" for line in lines)


def write_whole(path, text):
    """Writes `text` to `path` through a temporary file in the same folder,
    renamed into place: a reader (or a killed run) never sees part of it."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        # mkstemp makes the file private; the spec gets the mode any new file would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="an .onnx file, or a PyTorch factory as package.module:callable")
    parser.add_argument("--out", required=True, help="the spec to write ('-' for standard output)")
    parser.add_argument("--library", required=True, help="the library name (a C identifier)")
    parser.add_argument("--batch", type=int, nargs="+", default=[1], help="batch sizes (default: 1)")
    parser.add_argument("--input", type=int, nargs=3, metavar=("C", "H", "W"), default=[3, 224, 224],
                        help="a PyTorch model's input shape (default: 3 224 224)")
    parser.add_argument("--dtype", choices=DTYPES,
                        help="the dtype the model runs in (default: its weights', float32 for ONNX)")
    parser.add_argument("--channels-last", action="store_true",
                        help="the model runs channels_last: the workloads' layout is NHWC (default: NCHW)")
    parser.add_argument("--math", choices=MATHS, default="fp32",
                        help="what the float32 dense convolutions' products may be: tf32 lets them run on TF32 "
                             "tensor cores (PyTorch's allow_tf32), 3xtf32 on tensor cores at fp32's accuracy "
                             "(default: fp32)")
    parser.add_argument("--convgen", default=shutil.which("convgen"),
                        help="the convgen executable that checks each workload (its size limits, the dtypes and "
                             "layouts its algorithms serve); what it refuses is left out with its message "
                             "(default: the convgen on PATH; without one, nothing is checked)")
    parser.add_argument("--external-data", action="store_true",
                        help="an ONNX model's tensors kept in external files: read them (off by default: the "
                             "spec needs only shapes, and those files are paths the model names)")
    args = parser.parse_args(argv)
    try:
        check_library_name(args.library)
    except ValueError as e:
        parser.error("--library: " + str(e).replace("convgen_torch: ", "", 1))
    if args.out != "-":
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            parser.error(f"--out {args.out}: its folder does not exist")
        if os.path.isdir(args.out):
            parser.error(f"--out {args.out} is a folder; name the spec file to write")
    if any(b < 1 for b in args.batch):
        parser.error("batch sizes must be at least 1")
    try:
        if args.model.endswith(".onnx"):
            convs, skipped, layers = convs_from_onnx(args.model, args.external_data)
        else:
            convs, skipped, layers = convs_from_torch(args.model, args.input)
    except Exception as e:  # the model's own error, named: never a traceback for a bad model
        print(f"spec_from_model: cannot read {args.model}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    refusals = convgen_refusals(args.convgen) if args.convgen else None
    try:
        text, left_out, n_workloads, reasons = write_spec(convs, skipped, args.batch, args.library, args.model,
                                                          args.dtype, "NHWC" if args.channels_last else "NCHW",
                                                          refusals, args.math)
    except (OSError, RuntimeError) as e:  # convgen missing, or its check failing: named, no traceback
        print(f"spec_from_model: cannot check the workloads with {args.convgen}: {e}", file=sys.stderr)
        return 1
    if n_workloads == 0:
        print(nothing_served(args.model, reasons, skipped, layers), file=sys.stderr)
        return 3
    if args.out == "-":
        sys.stdout.write(text)
    else:
        try:
            write_whole(args.out, text)
        except OSError as e:
            print(f"spec_from_model: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
            return 1
    for line in left_out:
        print(f"spec_from_model: left out {line}", file=sys.stderr)
    print(f"spec_from_model: {text.splitlines()[1][2:]} -> {args.out}", file=sys.stderr)
    if args.convgen is None:
        print("spec_from_model: no convgen on PATH (--convgen): the workloads were not checked against its limits "
              "and algorithms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
