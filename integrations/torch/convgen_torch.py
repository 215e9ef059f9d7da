"""convgen kernels inside PyTorch.

    import convgen_torch
    convgen_torch.load("build/", "torchvision")        # build + load the operators (once)
    fast = convgen_torch.swap(model.eval())            # conv(+BN)(+act) -> torch.ops.convgen.*
    y = fast(x)
    torch.ops.convgen.fallbacks()                      # calls that ran on ATen instead

load() builds convgen_torch.cpp with torch.utils.cpp_extension against a
generated library (its header and static archive, from convgen_add_library)
and the convgen runtime; the operators are torch.ops.convgen.depthwise_conv2d
and torch.ops.convgen.conv2d (see convgen_torch.cpp). swap() traces a module
with torch.fx and replaces each Conv2d, with the BatchNorm2d and the
ReLU/ReLU6/SiLU/Hardswish that follow it alone, by one fused operator call.
"""
import hashlib
import os
import sys

import torch
from torch import fx, nn

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))
sys.path.insert(0, os.path.join(_ROOT, "tools"))
sys.path.insert(0, _HERE)
# One reading of a Conv2d (its padding) and of what follows it (its groups).
from spec_from_model import torch_conv_groups, torch_conv_padding  # noqa: E402
from library_name import check_library_name  # noqa: E402


def _content_hash(paths):
    """16 hex digits of the files' bytes, in order."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def load(build_dir, library, verbose=False):
    """Builds (or reuses) and loads the operators over library `library`,
    whose header and archive convgen_add_library left under `build_dir`.
    Returns the extension's name, which names the archives' content: a
    rebuilt library (a new schedule leaves its header as it was) gets an
    extension of its own. One process loads one: torch registers the
    operators once."""
    from torch.utils import cpp_extension

    check_library_name(library)
    build_dir = os.path.abspath(build_dir)  # the extension builds in its own folder
    header_dir = os.path.join(build_dir, f"convgen_{library}.convgen")
    archive = os.path.join(build_dir, f"libconvgen_{library}.a")
    runtime = os.path.join(build_dir, "libconvgen_runtime.a")
    for path in (os.path.join(header_dir, f"{library}.h"), archive, runtime):
        if not os.path.exists(path):
            raise FileNotFoundError(f"convgen_torch.load: {path} is missing; build the library first")
    # The one header convgen_torch.cpp includes: the library's, and an alias
    # for its namespace.
    alias_dir = os.path.join(build_dir, f"convgen_torch_{library}")
    os.makedirs(alias_dir, exist_ok=True)
    alias = (f'#pragma once\n#include "{library}.h"\n'
             f"namespace convgen_torch_library = convgen::{library};\n")
    alias_path = os.path.join(alias_dir, "convgen_torch_library.h")
    if not os.path.exists(alias_path) or open(alias_path).read() != alias:
        with open(alias_path, "w") as f:
            f.write(alias)
    cuda_lib = os.path.join(cpp_extension.CUDA_HOME or "/usr/local/cuda", "lib64")
    # cpp_extension rebuilds when a source or a flag changes, not when an
    # archive it links does: the name carries the archives' content instead.
    name = f"convgen_torch_{library}_{_content_hash([archive, runtime])}"
    cpp_extension.load(
        name=name,
        sources=[os.path.join(_HERE, "convgen_torch.cpp")],
        extra_include_paths=[alias_dir, header_dir, os.path.join(_ROOT, "runtime", "include")],
        extra_cflags=["-O2"],
        # The archive's kernels register themselves with the CUDA runtime when
        # the extension loads: keep every object of it. The C++ runtime is the
        # shared one the Python process already has: a compiler whose search
        # path offers only libstdc++.a would otherwise copy a second one in,
        # whose uninitialized locale crashes the first stream that is used.
        extra_ldflags=["-Wl,--whole-archive", archive, "-Wl,--no-whole-archive", runtime, f"-L{cuda_lib}",
                       "-lcudart", "-l:libstdc++.so.6"],
        with_cuda=True, is_python_module=False, verbose=verbose)
    return name


class ConvgenConv2d(nn.Module):
    """A Conv2d with its batch norm folded (scale, shift) and its activation, on one convgen operator."""

    def __init__(self, conv, bn, activation):
        super().__init__()
        self.depthwise = conv.groups == conv.in_channels and conv.groups > 1
        if conv.groups != 1 and not self.depthwise:
            raise ValueError(f"convgen serves dense and depthwise convolutions, not groups={conv.groups}")
        if conv.padding_mode != "zeros":
            raise ValueError(f"convgen pads with zeros, not {conv.padding_mode}")
        self.stride, self.dilation = list(conv.stride), list(conv.dilation)
        self.padding = list(torch_conv_padding(conv))
        self.activation = activation
        self.register_buffer("weight", conv.weight.detach().contiguous())
        bias = conv.bias.detach() if conv.bias is not None else None
        if bn is not None:
            scale = bn.weight.detach() / torch.sqrt(bn.running_var + bn.eps)
            shift = bn.bias.detach() - bn.running_mean * scale
            if bias is not None:
                shift = shift + bias * scale
            self.register_buffer("scale", scale.contiguous())
            self.register_buffer("shift", shift.contiguous())
            self.register_buffer("bias", None)
        else:
            self.register_buffer("scale", None)
            self.register_buffer("shift", None)
            self.register_buffer("bias", bias.contiguous() if bias is not None else None)

    def forward(self, x):
        x = x.contiguous()
        if self.depthwise:
            return torch.ops.convgen.depthwise_conv2d(x, self.weight, self.bias, self.scale, self.shift, self.stride,
                                                      self.padding, self.dilation, self.activation)
        return torch.ops.convgen.conv2d(x, self.weight, self.bias, self.scale, self.shift, None, self.stride,
                                        self.padding, self.dilation, self.activation)


def swap(model, depthwise=True, dense=True):
    """A GraphModule computing `model` (in eval mode) with each conv(+BN)(+act)
    group it serves replaced by a ConvgenConv2d; the rest stays as it is."""
    if model.training:
        raise ValueError("convgen_torch.swap folds batch norms: call model.eval() first")
    traced = fx.symbolic_trace(model)
    count = 0
    for group in torch_conv_groups(traced):
        conv, node = group.conv, group.nodes[0]
        if conv.padding_mode != "zeros":
            continue
        is_depthwise = conv.groups == conv.in_channels and conv.groups > 1
        if not ((is_depthwise and depthwise) or (conv.groups == 1 and dense)):
            continue
        name = f"convgen_{count}"
        count += 1
        traced.add_submodule(name, ConvgenConv2d(conv, group.batch_norm, group.activation))
        last = group.nodes[-1]
        with traced.graph.inserting_after(last):
            fused = traced.graph.call_module(name, args=(node.args[0],))
        last.replace_all_uses_with(fused)
        for n in reversed(group.nodes):
            traced.graph.erase_node(n)
    traced.graph.lint()
    traced.recompile()
    traced.convgen_swapped = count
    return traced
