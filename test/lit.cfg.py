# -*- Python -*-
# lit configuration of nncc's tests (after llvm-project mlir/examples/standalone).

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "NNCC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
# Inputs/ folders hold files other tests read; they are not tests themselves.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.nncc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# Debian's python3-onnx and python3-numpy serve /usr/bin/python3 only. This
# comes before use_default_substitutions' own %python, so it wins.
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%nncc_src_root", config.nncc_src_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# FileCheck, and `| not` / `| count` after a pipe.
llvm_config.use_default_substitutions()

# nncc's own tools come from the build tree; FileCheck, not, count and
# split-file from the LLVM installation (Debian's llvm-22-tools).
tool_dirs = [config.nncc_tools_dir, config.llvm_tools_dir]
tools = [
    ToolSubst("nncc-opt", unresolved="fatal"),
    ToolSubst("nncc-translate", unresolved="fatal"),
    # nncc (the compiler driver) may not be built yet; tests that use it fail
    # with a clear "command not found" instead of failing lit's start-up.
    ToolSubst("nncc", unresolved="ignore"),
    ToolSubst("not", unresolved="fatal"),
    ToolSubst("count", unresolved="fatal"),
    ToolSubst("split-file", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.nncc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Assembles ONNX models from ONNX's textual syntax (test/tools/onnx-as.py).
config.substitutions.append(
    ("%onnx-as", f"{config.python_executable} {config.nncc_src_root}/test/tools/onnx-as.py"))
