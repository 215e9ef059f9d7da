"""convgen kernels inside PyTorch.

    import convgen_torch
    convgen_torch.load("build/", "torchvision")        # build + load the operators (once)
    model = model.eval().half().to(memory_format=torch.channels_last)
    fast = convgen_torch.swap(model, x)                # conv(+BN)(+add)(+act) -> torch.ops.convgen.*
    fast.convgen_report                                # what was swapped, what was kept, and why
    y = fast(x)                                        # or torch.compile(fast, fullgraph=True)(x)
    torch.ops.convgen.fallbacks()                      # calls that ran on ATen instead

load() builds convgen_torch.cpp with torch.utils.cpp_extension against a
generated library (its header and static archive, from convgen_add_library)
and the convgen runtime, and registers the operators' fake implementations
(torch.compile); the operators are torch.ops.convgen.depthwise_conv2d and
torch.ops.convgen.conv2d (see convgen_torch.cpp), in float32, float16 and
bfloat16, contiguous (NCHW) or channels_last (NHWC), and their backward
(ATen operations: the kernels compute the forward only). swap() traces a module
with torch.fx and replaces each Conv2d, with the BatchNorm2d, the residual add
and the ReLU/ReLU6/SiLU/Hardswish that follow it alone, by one fused operator
call: every such group (policy "all"), or those where convgen's kernel is
faster than what PyTorch runs for the group on the example input (policy
"faster", the default).
"""
import hashlib
import os
import shutil
import statistics
import sys

import torch
from torch import fx, nn
import torch.nn.functional as F

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))
sys.path.insert(0, os.path.join(_ROOT, "tools"))
sys.path.insert(0, _HERE)
# One reading of a Conv2d (its padding) and of what follows it (its groups).
from spec_from_model import torch_conv_groups, torch_conv_padding  # noqa: E402
from library_name import check_library_name  # noqa: E402

POLICIES = ("faster", "all")


def _content_hash(paths):
    """16 hex digits of the files' bytes, in order."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _installed_prefix(prefix):
    """The folder convgen is installed under: `prefix`, else $CONVGEN_ROOT,
    else the one above the bin/ that holds the `convgen` on PATH."""
    if prefix:
        return os.path.abspath(prefix)
    if os.environ.get("CONVGEN_ROOT"):
        return os.path.abspath(os.environ["CONVGEN_ROOT"])
    executable = shutil.which("convgen")
    return os.path.dirname(os.path.dirname(os.path.realpath(executable))) if executable else None


def _runtime(build_dir, prefix, runtime_dir=None):
    """The runtime archive and the folder of its headers: the build tree's
    (convgen built in it, or added with add_subdirectory; `runtime_dir` when
    the library lies in a subfolder of that tree), else an installed
    convgen's (find_package: PREFIX/lib*/libconvgen_runtime.a and
    PREFIX/include)."""
    archive = os.path.join(runtime_dir or build_dir, "libconvgen_runtime.a")
    if os.path.exists(archive):
        return archive, os.path.join(_ROOT, "runtime", "include")
    installed = _installed_prefix(prefix)
    tried = [archive]
    if installed:
        for lib in ("lib", "lib64"):
            candidate = os.path.join(installed, lib, "libconvgen_runtime.a")
            tried.append(candidate)
            if os.path.exists(candidate):
                return candidate, os.path.join(installed, "include")
    raise FileNotFoundError("convgen_torch.load: no convgen runtime archive; looked for " + ", ".join(tried) +
                            " (build convgen in the build folder, or pass prefix= or set CONVGEN_ROOT to where "
                            "it is installed)")


def _loaded_extension():
    """The name of the convgen extension this process loaded (load()), or
    None. Torch registers the convgen operators once a process, and a
    second TORCH_LIBRARY(convgen) aborts it; so this asks torch, which keeps
    the paths of the libraries it loaded for the whole process
    (torch.ops.loaded_libraries), not a variable of this module, which a
    reload of the module (or a second copy of it) would not share."""
    for path in torch.ops.loaded_libraries:
        name = os.path.splitext(os.path.basename(path))[0]
        if name.startswith("convgen_torch_"):
            return name
    return None


def _require_loaded(what):
    if _loaded_extension() is None:
        raise RuntimeError(f"convgen_torch.{what}: no convgen library is loaded in this process; call "
                           "convgen_torch.load(build_dir, library) first")


def load(build_dir, library, prefix=None, verbose=False, runtime_dir=None):
    """Builds (or reuses) and loads the operators over library `library`,
    whose header and archive convgen_add_library left under `build_dir`; the
    runtime comes from the build folder (`runtime_dir` where that is another
    folder of the build tree than the library's) or an installed convgen
    (`prefix`, $CONVGEN_ROOT, or the `convgen` on PATH). Returns the
    extension's name, which names the archives' content: a rebuilt library
    (a new schedule leaves its header as it was) gets an extension of its
    own. One process loads one: torch registers the operators once, so
    loading another library (or the same one rebuilt) after the first
    raises RuntimeError; loading the same one again returns its name."""
    from torch.utils import cpp_extension

    check_library_name(library)
    build_dir = os.path.abspath(build_dir)  # the extension builds in its own folder
    header_dir = os.path.join(build_dir, f"convgen_{library}.convgen")
    archive = os.path.join(build_dir, f"libconvgen_{library}.a")
    for path in (os.path.join(header_dir, f"{library}.h"), archive):
        if not os.path.exists(path):
            raise FileNotFoundError(f"convgen_torch.load: {path} is missing; build the library first")
    runtime, runtime_include = _runtime(build_dir, prefix, runtime_dir and os.path.abspath(runtime_dir))
    # The one header convgen_torch.cpp includes: the library's, and an alias
    # for its namespace.
    alias_dir = os.path.join(build_dir, f"convgen_torch_{library}")
    os.makedirs(alias_dir, exist_ok=True)
    alias = (f'#pragma once\n#include "{library}.h"\n'
             f"namespace convgen_torch_library = convgen::{library};\n")
    alias_path = os.path.join(alias_dir, "convgen_torch_library.h")
    current = None
    if os.path.exists(alias_path):
        with open(alias_path) as f:
            current = f.read()
    if current != alias:
        with open(alias_path, "w") as f:
            f.write(alias)
    cuda_lib = os.path.join(cpp_extension.CUDA_HOME or "/usr/local/cuda", "lib64")
    # cpp_extension rebuilds when a source or a flag changes, not when an
    # archive it links does: the name carries the archives' content instead.
    name = f"convgen_torch_{library}_{_content_hash([archive, runtime])}"
    loaded = _loaded_extension()
    if loaded == name:
        return name
    if loaded is not None:
        raise RuntimeError(f"convgen_torch.load: this process loaded {loaded} already, and torch registers the "
                           f"convgen operators once a process; {name} (another library, or this one rebuilt) "
                           "needs a new process")
    cpp_extension.load(
        name=name,
        sources=[os.path.join(_HERE, "convgen_torch.cpp")],
        extra_include_paths=[alias_dir, header_dir, runtime_include],
        extra_cflags=["-O2"],
        # The archive's kernels register themselves with the CUDA runtime when
        # the extension loads: keep every object of it. The C++ runtime is the
        # shared one the Python process already has: a compiler whose search
        # path offers only libstdc++.a would otherwise copy a second one in,
        # whose uninitialized locale crashes the first stream that is used.
        extra_ldflags=["-Wl,--whole-archive", archive, "-Wl,--no-whole-archive", runtime, f"-L{cuda_lib}",
                       "-lcudart", "-l:libstdc++.so.6"],
        with_cuda=True, is_python_module=False, verbose=verbose)
    _register_python_parts()
    return name


# ------------------------------------------------------------ torch.compile

def _nhwc(input, weight_only_nhwc):
    """convgen_torch.cpp's layout_of: NHWC where the input is channels_last,
    and, where it is contiguous too (the same bytes), where the weight lies
    as only NHWC reads it."""
    return (input.dim() == 4 and input.is_contiguous(memory_format=torch.channels_last)
            and (not input.is_contiguous() or weight_only_nhwc))


def _output(input, weight, c_out, stride, padding, dilation, nhwc):
    """An empty output as the operator makes it: its shape, dtype, device
    and memory format."""
    n, _, h, w = input.shape
    kh, kw = weight.shape[2], weight.shape[3]
    out_h = (h + padding[0] + padding[1] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (w + padding[2] + padding[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    return torch.empty((n, c_out, out_h, out_w), dtype=input.dtype, device=input.device,
                       memory_format=torch.channels_last if nhwc else torch.contiguous_format)


def _depthwise_fake(input, weight, bias, scale, shift, stride, padding, dilation, activation):
    only_nhwc = weight.dim() == 4 and weight.permute(2, 3, 0, 1).is_contiguous() and not weight.is_contiguous()
    return _output(input, weight, weight.shape[0], stride, padding, dilation, _nhwc(input, only_nhwc))


def _conv2d_fake(input, weight, bias, scale, shift, residual, stride, padding, dilation, activation):
    only_nhwc = (weight.dim() == 4 and weight.is_contiguous(memory_format=torch.channels_last)
                 and not weight.is_contiguous())
    return _output(input, weight, weight.shape[0], stride, padding, dilation, _nhwc(input, only_nhwc))


# ----------------------------------------------------------------- autograd
#
# The backward of y = act(conv(x, w) [+ bias | * scale + shift] [+ residual]),
# in ATen operations (so that torch.compile traces it too). It computes the
# convolution again rather than keeping it from the forward: the kernels
# write only y, and silu's and hardswish's derivatives need the value
# before the activation.

_ACTIVATION_BACKWARD = {
    "none": lambda grad, z: grad,
    "relu": lambda grad, z: torch.ops.aten.threshold_backward(grad, z, 0),
    "relu6": lambda grad, z: torch.ops.aten.hardtanh_backward(grad, z, 0.0, 6.0),
    "silu": torch.ops.aten.silu_backward,
    "hardswish": torch.ops.aten.hardswish_backward,
}


def _setup_depthwise(ctx, inputs, output):
    input, weight, bias, scale, shift, stride, padding, dilation, activation = inputs
    ctx.save_for_backward(input, weight, bias, scale, shift, None)
    ctx.window = (list(stride), list(padding), list(dilation), activation, input.shape[1])
    ctx.takes_residual = False


def _setup_conv2d(ctx, inputs, output):
    input, weight, bias, scale, shift, residual, stride, padding, dilation, activation = inputs
    ctx.save_for_backward(input, weight, bias, scale, shift, residual)
    ctx.window = (list(stride), list(padding), list(dilation), activation, 1)
    ctx.takes_residual = True


def _conv_backward(ctx, grad):
    """The gradients of the operator's tensor arguments (None for those
    that need none), in its argument order less the trailing window and
    activation."""
    input, weight, bias, scale, shift, residual = ctx.saved_tensors
    stride, padding, dilation, activation, groups = ctx.window
    needs = ctx.needs_input_grad
    padded = F.pad(input, (padding[2], padding[3], padding[0], padding[1]))
    conv = torch.ops.aten.convolution(padded, weight, bias, stride, [0, 0], dilation, False, [0, 0], groups)
    z = conv
    if scale is not None:
        z = conv * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1)
    if residual is not None:
        z = z + residual
    dz = _ACTIVATION_BACKWARD[activation](grad, z)
    dconv = dz * scale.view(1, -1, 1, 1) if scale is not None else dz
    d_padded, d_weight, d_bias = torch.ops.aten.convolution_backward(
        dconv, padded, weight, [weight.shape[0]] if bias is not None else None, stride, [0, 0], dilation, False,
        [0, 0], groups, [needs[0], needs[1], bias is not None and needs[2]])
    d_input = None
    if needs[0]:
        h, w = input.shape[2], input.shape[3]
        d_input = d_padded[:, :, padding[0]:padding[0] + h, padding[2]:padding[2] + w]
    d_scale = (dz * conv).sum((0, 2, 3)) if scale is not None and needs[3] else None
    d_shift = dz.sum((0, 2, 3)) if shift is not None and needs[4] else None
    grads = [d_input, d_weight, d_bias, d_scale, d_shift]
    if ctx.takes_residual:
        grads.append(dz if residual is not None and needs[5] else None)
    return tuple(grads) + (None,) * (len(needs) - len(grads))


def _register_python_parts():
    """What the operators have in Python: their fake implementations
    (shapes, dtypes and memory formats without computing, which
    torch.compile traces with) and their backward. Once per process, right
    after load() loaded the extension that defines the operators."""
    torch.library.register_fake("convgen::depthwise_conv2d")(_depthwise_fake)
    torch.library.register_fake("convgen::conv2d")(_conv2d_fake)
    torch.library.register_autograd("convgen::depthwise_conv2d", _conv_backward, setup_context=_setup_depthwise)
    torch.library.register_autograd("convgen::conv2d", _conv_backward, setup_context=_setup_conv2d)


# --------------------------------------------------------------------- swap

def folded_batch_norm(bn, bias):
    """An eval-mode BatchNorm2d after a conv with `bias` (or None) as the
    epilogue's scale and shift, in float32 (a BN without affine parameters
    scales by 1 and shifts by 0)."""
    scale = torch.rsqrt(bn.running_var.detach().float() + bn.eps)
    if bn.weight is not None:
        scale = scale * bn.weight.detach().float()
    shift = -bn.running_mean.detach().float() * scale
    if bn.bias is not None:
        shift = shift + bn.bias.detach().float()
    if bias is not None:
        shift = shift + bias.detach().float() * scale
    return scale, shift


def depthwise_nhwc_weight(weight):
    """A depthwise weight [c*m, 1, kh, kw] as the NHWC kernels read it: the
    same shape, viewing memory laid out [kh, kw, c*m]."""
    return weight.permute(2, 3, 0, 1).contiguous().permute(2, 3, 0, 1)


class ConvgenConv2d(nn.Module):
    """A Conv2d with its batch norm folded (scale, shift), its residual add
    and its activation, on one convgen operator. The weights keep the conv's
    dtype and lie as the layout needs them (channels_last: NHWC); an input
    in the other memory format is converted first, as ATen's conv would."""

    def __init__(self, conv, bn, activation, residual=False, channels_last=False):
        super().__init__()
        self.depthwise = conv.groups == conv.in_channels and conv.groups > 1
        if conv.groups != 1 and not self.depthwise:
            raise ValueError(f"convgen serves dense and depthwise convolutions, not groups={conv.groups}")
        if conv.padding_mode != "zeros":
            raise ValueError(f"convgen pads with zeros, not {conv.padding_mode}")
        if residual and self.depthwise:
            raise ValueError("convgen adds a residual to dense convolutions only")
        self.stride, self.dilation = list(conv.stride), list(conv.dilation)
        self.padding = list(torch_conv_padding(conv))
        self.activation = activation
        self.memory_format = torch.channels_last if channels_last else torch.contiguous_format
        dtype = conv.weight.dtype
        weight = conv.weight.detach()
        if not channels_last:
            weight = weight.contiguous()
        elif self.depthwise:
            weight = depthwise_nhwc_weight(weight)
        else:
            weight = weight.contiguous(memory_format=torch.channels_last)
        self.register_buffer("weight", weight)
        bias = conv.bias.detach() if conv.bias is not None else None
        if bn is not None:
            # Folded in float32, rounded once to the model's dtype.
            scale, shift = folded_batch_norm(bn, bias)
            self.register_buffer("scale", scale.to(dtype).contiguous())
            self.register_buffer("shift", shift.to(dtype).contiguous())
            self.register_buffer("bias", None)
        else:
            self.register_buffer("scale", None)
            self.register_buffer("shift", None)
            self.register_buffer("bias", bias.contiguous() if bias is not None else None)

    def _call(self, depthwise_op, dense_op, x, residual):
        """One of the two operators (or their explain_ twins) on x, in the
        memory format of the weights."""
        x = x.contiguous(memory_format=self.memory_format)
        window = (self.stride, self.padding, self.dilation, self.activation)
        if self.depthwise:
            return depthwise_op(x, self.weight, self.bias, self.scale, self.shift, *window)
        if residual is not None:
            residual = residual.contiguous(memory_format=self.memory_format)
        return dense_op(x, self.weight, self.bias, self.scale, self.shift, residual, *window)

    def forward(self, x, residual=None):
        return self._call(torch.ops.convgen.depthwise_conv2d, torch.ops.convgen.conv2d, x, residual)

    def explain(self, x, residual=None):
        """The kernel that serves a call on x and its schedule ("<kernel>:
        <schedule>"), or "aten: <why>" where ATen serves it. Launches nothing."""
        return self._call(torch.ops.convgen.explain_depthwise_conv2d, torch.ops.convgen.explain_conv2d, x, residual)


def graph_time_us(fn, calls=10, replays=30):
    """Median time of one call of fn(), from `replays` replays of a CUDA
    graph holding `calls` calls (no launch gaps, as in a captured model)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):  # warm-up: cudnn.benchmark, one-time queries
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        for _ in range(calls):
            fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(replays):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / calls)
    return statistics.median(times)


def _is_channels_last(t):
    return t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous()


def _model_channels_last(model):
    """Whether a model was moved to channels_last: one of its 4-D weights is
    (and not also contiguous)."""
    return any(_is_channels_last(p) for p in model.parameters() if p.dim() == 4)


def _group_values(traced, groups, example_inputs):
    """Each group's input and residual, as the model computes them on the
    example inputs."""
    interpreter = fx.Interpreter(traced, garbage_collect_values=False)
    with torch.no_grad():
        interpreter.run(*example_inputs)
    return [(interpreter.env[g.nodes[0].args[0]], interpreter.env[g.residual] if g.residual is not None else None)
            for g in groups]


def _aten_group(traced, group):
    """What PyTorch runs for the group: the nodes as the model has them, and
    the conv with its batch norm folded into the weights (what a compiler
    may make of it); swap() compares convgen with the faster of the two."""
    interpreter = fx.Interpreter(traced, garbage_collect_values=False)

    def as_written(x, residual):
        interpreter.env = {group.nodes[0].args[0]: x}
        if group.residual is not None:
            interpreter.env[group.residual] = residual
        for node in group.nodes:
            interpreter.env[node] = interpreter.run_node(node)
        return interpreter.env[group.nodes[-1]]

    conv = group.conv
    activation = {"none": lambda y: y, "relu": F.relu, "relu6": F.relu6, "silu": F.silu,
                  "hardswish": F.hardswish}[group.activation]
    weight, bias = conv.weight.detach(), conv.bias.detach() if conv.bias is not None else None
    if group.batch_norm is not None:
        scale, shift = folded_batch_norm(group.batch_norm, bias)
        weight = (weight.float() * scale.view(-1, 1, 1, 1)).to(weight.dtype).contiguous(
            memory_format=torch.channels_last if _is_channels_last(weight) else torch.contiguous_format)
        bias = shift.to(weight.dtype)

    def folded(x, residual):
        y = conv._conv_forward(x, weight, bias)
        return activation(y + residual if residual is not None else y)

    return as_written, folded


def swap(model, example_inputs=None, policy="faster", depthwise=True, dense=True, channels_last=None):
    """A GraphModule computing `model` (in eval mode) with conv(+BN)(+add)
    (+act) groups replaced by ConvgenConv2d modules; the rest stays as it is.

    example_inputs: a tensor or a tuple of them, as the model is called.
      With them, residual adds are fused (their shapes are known) and each
      group's layout follows the memory format its input arrives in.
    policy: "faster" (needs example_inputs) times each group on its input as
      the model computes it, convgen's kernel against PyTorch's (the group
      as written, and the conv with its batch norm folded; the faster one),
      each in a CUDA graph, and swaps only where convgen is faster; a group
      the operators would leave to ATen (explain's "aten: why": no kernel
      for the problem, a tensor aligned too loosely for its kernel, a GPU it
      does not run on) is kept. "all" swaps every group.
    channels_last: the layout of the swapped groups where no example input
      says it (None: channels_last if the model's weights are).
    The result's `convgen_report` lists every group: its node, the kernel
    that would serve it, the times (policy faster), whether it was swapped
    and why; `convgen_swapped` counts the swapped ones."""
    _require_loaded("swap")
    if model.training:
        raise ValueError("convgen_torch.swap folds batch norms: call model.eval() first")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    if policy == "faster" and example_inputs is None:
        raise ValueError('policy "faster" times each group on its input: pass example_inputs')
    traced = fx.symbolic_trace(model)
    if example_inputs is not None:
        from torch.fx.passes.shape_prop import ShapeProp
        with torch.no_grad():
            ShapeProp(traced).propagate(*example_inputs)
    if channels_last is None:
        channels_last = _model_channels_last(model)
    groups = []
    report = []
    for group in torch_conv_groups(traced):
        conv = group.conv
        entry = {"node": str(group.nodes[0].target), "folded": [n.name for n in group.nodes[1:]]}
        report.append(entry)
        is_depthwise = conv.groups == conv.in_channels and conv.groups > 1
        if conv.padding_mode != "zeros":
            entry.update(swapped=False, why=f"padding_mode {conv.padding_mode} (convgen pads with zeros)")
        elif conv.groups != 1 and not is_depthwise:
            entry.update(swapped=False, why=f"grouped convolution (groups={conv.groups})")
        elif not ((is_depthwise and depthwise) or (conv.groups == 1 and dense)):
            entry.update(swapped=False, why="depthwise=False" if is_depthwise else "dense=False")
        else:
            groups.append((group, entry))
    values = _group_values(traced, [g for g, _ in groups], example_inputs) if example_inputs is not None else None
    chosen = []
    for i, (group, entry) in enumerate(groups):
        residual = None
        nhwc = channels_last
        if values is not None:
            x, residual = values[i]
            nhwc = _is_channels_last(x)
        module = ConvgenConv2d(group.conv, group.batch_norm, group.activation, group.residual is not None, nhwc)
        entry["layout"] = "NHWC" if nhwc else "NCHW"
        if values is not None:
            entry["kernel"], _, explained = module.explain(x, residual).partition(": ")
        if policy == "all":
            entry.update(swapped=True, why='policy "all"')
            chosen.append((group, entry, module))
            continue
        if entry["kernel"] == "aten":
            entry.update(swapped=False, why="ATen serves it: " + explained)
            continue
        as_written, folded = _aten_group(traced, group)
        entry["convgen_us"] = graph_time_us(lambda: module(x, residual))
        entry["aten_us"] = min(graph_time_us(lambda: as_written(x, residual)),
                               graph_time_us(lambda: folded(x, residual)))
        faster = entry["convgen_us"] < entry["aten_us"]
        entry.update(swapped=faster, why=f"convgen {entry['convgen_us']:.1f} us, PyTorch {entry['aten_us']:.1f} us")
        if faster:
            chosen.append((group, entry, module))
    replaced = {}  # the last node of each swapped group -> its fused node
    count = 0
    for group, entry, module in chosen:
        # A fresh name: a model swapped before holds convgen_0... already.
        while hasattr(traced, f"convgen_{count}"):
            count += 1
        name = f"convgen_{count}"
        traced.add_submodule(name, module)
        last = group.nodes[-1]
        # A residual computed by a group swapped before (MobileNetV2's block
        # input) is that group's fused node now.
        residual = replaced.get(group.residual, group.residual)
        args = (group.nodes[0].args[0],) + ((residual,) if residual is not None else ())
        with traced.graph.inserting_after(last):
            fused = traced.graph.call_module(name, args=args)
        last.replace_all_uses_with(fused)
        replaced[last] = fused
        for n in reversed(group.nodes):
            traced.graph.erase_node(n)
        entry["module"] = name
    traced.graph.lint()
    traced.recompile()
    traced.convgen_swapped = len(chosen)
    traced.convgen_report = report
    return traced
