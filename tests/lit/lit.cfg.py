# lit configuration for remat.
import os
import lit.formats

config.name = "remat"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "CMakeLists.txt"]

config.environment["PATH"] = os.pathsep.join(
    [config.remat_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%models", os.path.join(config.remat_source_dir, "tests", "models")))
config.substitutions.append(("%examples", os.path.join(config.remat_source_dir, "examples")))
# Headless Chromium (Debian's chromium, installed by tools/install-deps.sh)
# renders the plan explorer page in lit/planning/plan-explorer.test.
import shutil
config.substitutions.append(("%chromium", shutil.which("chromium") or "chromium-not-installed"))
