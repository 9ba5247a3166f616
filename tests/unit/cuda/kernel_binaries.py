"""Reads the compiled CUDA kernels of the runtime's object files.

Shared by check_no_f64.py, check_packed_access.py and resource_report.py
(ctest cuda-binaries/*): their common options, finds cuobjdump, extracts the PTX that nvcc embedded in each object (one
file per architecture, with the ptxas options nvcc used), splits it into
functions with their call edges, and demangles kernel names so that the
checks can tell an fp64 instantiation (`double` among its template
arguments) from the others. No GPU needed.
"""

import glob
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

# Where cuobjdump may be when the CUDA toolkit itself lacks it: the wheel
# that tools/install-cuda-tools.sh installs (PyPI's nvidia-cuda-cuobjdump).
TOOLS_DIR_NAME = os.path.join(".cache", "cuda-tools")


def find_cuobjdump(explicit, toolkit_bin, source_dir):
    """The cuobjdump to use, or None: --cuobjdump, the toolkit's bin
    directory, the project's cuda-tools wheel, then PATH."""
    candidates = []
    if explicit:
        candidates.append(explicit)
    if toolkit_bin:
        candidates.append(os.path.join(toolkit_bin, "cuobjdump"))
    candidates += sorted(glob.glob(os.path.join(
        source_dir, TOOLS_DIR_NAME, "lib", "python3*", "site-packages",
        "nvidia", "cu*", "bin", "cuobjdump")))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    return shutil.which("cuobjdump")


def add_arguments(parser):
    """The options every check takes (scripts add their own after these)."""
    parser.add_argument("--cuobjdump")
    parser.add_argument("--toolkit-bin")
    parser.add_argument("--source-dir", default=os.getcwd())
    parser.add_argument("objects", nargs="+")


def cuobjdump_or_report(args):
    """find_cuobjdump for the parsed options; where there is none, prints
    the check's FAIL line and returns None."""
    cuobjdump = find_cuobjdump(args.cuobjdump, args.toolkit_bin,
                               args.source_dir)
    if not cuobjdump:
        print("FAIL: cuobjdump not found (not in the CUDA toolkit, the "
              "project's .cache/cuda-tools or PATH): run "
              "tools/install-cuda-tools.sh")
    return cuobjdump


@dataclass
class PtxFile:
    obj: str            # the object file it came from
    arch: str           # e.g. sm_90
    path: str           # the extracted PTX
    ptxas_options: list  # what nvcc passed to ptxas for it


def extract_ptx(cuobjdump, objects, work_dir):
    """Extracts every object's embedded PTX into work_dir (cuobjdump -xptx
    names the files after the object; each object gets its own folder, as
    the names of an archive's members would collide)."""
    files = []
    for index, obj in enumerate(objects):
        folder = os.path.join(work_dir, "%03d" % index)
        os.makedirs(folder)
        out = subprocess.run([cuobjdump, "-xptx", "all", os.path.abspath(obj)],
                             cwd=folder, check=True, capture_output=True,
                             text=True).stdout
        # "Extracting PTX file and ptxas options    1: NAME.1.sm_90.ptx -arch=sm_90  --fmad false"
        for line in out.splitlines():
            m = re.search(r"Extracting PTX file and ptxas options\s+\d+:\s+(\S+\.ptx)\s*(.*)$", line)
            if m:
                name, options = m.group(1), m.group(2).split()
                arch = re.search(r"\.(sm_\d+a?)\.ptx$", name)
                files.append(PtxFile(obj, arch.group(1) if arch else "?",
                                     os.path.join(folder, name), options))
    return files


@dataclass
class PtxFunction:
    name: str                 # mangled
    is_kernel: bool           # .entry (else .func)
    body: list = field(default_factory=list)    # instruction lines
    calls: set = field(default_factory=set)     # names of called functions


_HEADER = re.compile(r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\s+"
                     r"(?:\([^)]*\)\s*)?([\w$.]+)")
_CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([\w$.]+)")


def parse_ptx(text):
    """The functions (kernels and device functions) defined in a PTX file,
    by mangled name."""
    functions = {}
    current, depth, pending = None, 0, None
    for line in text.splitlines():
        if current is None:
            m = _HEADER.match(line)
            if m:
                pending = PtxFunction(m.group(2), m.group(1) == "entry")
            if pending is not None:
                if line.rstrip().endswith(";") and "{" not in line:
                    pending = None  # a prototype (e.g. an .extern .func)
                elif "{" in line:
                    current, depth, pending = pending, line.count("{") - line.count("}"), None
                    functions[current.name] = current
            continue
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            current = None
            continue
        stripped = line.strip()
        if stripped and not stripped.startswith("//"):
            current.body.append(stripped)
            call = _CALL.search(stripped)
            if call:
                current.calls.add(call.group(1))
    return functions


def reachable(functions, name):
    """name and every function it calls, transitively (only those defined
    in the same PTX file: device functions are not linked across files)."""
    seen, stack = set(), [name]
    while stack:
        n = stack.pop()
        if n in seen or n not in functions:
            continue
        seen.add(n)
        stack.extend(functions[n].calls)
    return seen


def kernel_bodies(cuobjdump, objects):
    """Every kernel in the objects' PTX: (mangled name, arch, the instruction
    lines of the kernel and of each device function it calls, in name
    order), one per kernel and architecture. Empty when there is no PTX."""
    found = []
    with tempfile.TemporaryDirectory() as work:
        for f in extract_ptx(cuobjdump, objects, work):
            with open(f.path) as handle:
                functions = parse_ptx(handle.read())
            for name, fn in functions.items():
                if fn.is_kernel:
                    found.append((name, f.arch,
                                  [functions[callee].body for callee in
                                   sorted(reachable(functions, name))]))
    return found


def demangle(names):
    """Mangled name -> demangled (c++filt, one process for all)."""
    names = list(names)
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names), check=True,
                         capture_output=True, text=True).stdout.splitlines()
    return dict(zip(names, out))


def split_name(demangled):
    """(qualified name, template arguments) of a demangled function name:
    the text before the parameter list, with the `<...>` that ends it split
    off ("" for a non-template)."""
    text = demangled.strip()
    end = len(text)
    if text.endswith(")"):
        depth = 0
        for end in range(len(text) - 1, -1, -1):  # the parameter list's '('
            if text[end] == ")":
                depth += 1
            elif text[end] == "(":
                depth -= 1
                if depth == 0:
                    break
    name = text[:end].rstrip()
    args = ""
    if name.endswith(">"):
        depth = 0
        for start in range(len(name) - 1, -1, -1):
            if name[start] == ">":
                depth += 1
            elif name[start] == "<":
                depth -= 1
                if depth == 0:
                    args, name = name[start + 1:-1], name[:start]
                    break
    # Drop the return type (kernels return void).
    if name.startswith("void "):
        name = name[len("void "):]
    return name, args


def template_arguments(demangled):
    return split_name(demangled)[1]


def kernel_base_name(demangled):
    """The unqualified kernel name without template arguments, e.g.
    `softmaxKernel`."""
    return split_name(demangled)[0].split("::")[-1]


def is_f64_instantiation(demangled):
    """A kernel whose template arguments name `double`: an fp64
    instantiation, allowed to compute in double."""
    return re.search(r"\bdouble\b", template_arguments(demangled)) is not None


def short_name(demangled):
    """The kernel's name and template arguments without namespaces or
    parameters, e.g. `softmaxKernel<BFloat16>`: enough to tell apart the
    instantiations in a report."""
    name, args = split_name(demangled)
    text = name.split("::")[-1] + ("<" + args.strip() + ">" if args else "")
    return re.sub(r"(?:\(anonymous namespace\)|\w+)::", "", text)
