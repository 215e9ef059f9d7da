"""The start of the PyTorch operators' GPU tests: each needs torch, a CUDA
device and the library it runs, and exits 77 (ctest's skip) saying which
one is missing."""
import os
import sys


def require(library_dir=None, library=None, how_to_build=""):
    """Exits 77 unless torch imports, a CUDA device is present and (where a
    library is named) `library_dir` holds libconvgen_<library>.a;
    `how_to_build` says what makes that library."""
    try:
        import torch
    except ImportError as e:
        print(f"SKIPPED: {e}: needs torch")
        sys.exit(77)
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        sys.exit(77)
    if library and not os.path.exists(os.path.join(library_dir, f"libconvgen_{library}.a")):
        print(f"SKIPPED: no library {library} in {library_dir}: {how_to_build}")
        sys.exit(77)
