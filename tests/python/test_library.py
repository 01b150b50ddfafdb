"""Finding and loading libkiln.so, its version and build information."""
import ctypes.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import kiln
import support


def run_python(code, **env):
    """Runs `code` in a fresh interpreter with `env` over this environment; (exit code, output)."""
    environment = {**os.environ, **env}
    for name, value in env.items():
        if value is None:
            del environment[name]
    result = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


class OpenMPSpin(unittest.TestCase):
    # Loading libkiln.so sets GOMP_SPINCOUNT first (as kiln run does) unless
    # the user chose it, or the wait policy; libgomp reads it as it loads.
    PRINT = "import kiln, os; kiln.zeros(1); print(os.environ.get('GOMP_SPINCOUNT'))"

    def test_loading_the_library_shortens_the_spin(self):
        code, output = run_python(self.PRINT, GOMP_SPINCOUNT=None, OMP_WAIT_POLICY=None)
        self.assertEqual((code, output.strip()), (0, "10000"), output)

    def test_the_users_choice_stands(self):
        code, output = run_python(self.PRINT, GOMP_SPINCOUNT="500", OMP_WAIT_POLICY=None)
        self.assertEqual((code, output.strip()), (0, "500"), output)
        code, output = run_python(self.PRINT, GOMP_SPINCOUNT=None, OMP_WAIT_POLICY="passive")
        self.assertEqual((code, output.strip()), (0, "None"), output)


class LibraryLocation(unittest.TestCase):
    def test_kiln_library_names_the_file_loaded(self):
        self.assertEqual(os.path.realpath(kiln.library_path()), os.path.realpath(os.environ["KILN_LIBRARY"]))

    def test_a_missing_file_fails_on_first_use_naming_it(self):
        code, output = run_python(
            "import kiln\n"
            "try:\n"
            "    kiln.zeros(2)\n"
            "except kiln.LibraryNotFound as e:\n"
            "    print('raised', e)\n",
            KILN_LIBRARY="/nonexistent/libkiln.so")
        self.assertEqual(code, 0, output)  # the import itself succeeded
        self.assertIn("raised libkiln.so could not be loaded: /nonexistent/libkiln.so (from KILN_LIBRARY)", output)

    def test_without_kiln_library_a_libkiln_in_the_package_folder_is_loaded(self):
        with tempfile.TemporaryDirectory() as root:
            package = os.path.join(root, "kiln")
            shutil.copytree(os.path.dirname(kiln.__file__), package)
            os.symlink(os.path.realpath(os.environ["KILN_LIBRARY"]), os.path.join(package, "libkiln.so"))
            code, output = run_python("import kiln; print(kiln.library_path()); print(kiln.version())",
                                      KILN_LIBRARY=None, PYTHONPATH=root)
        self.assertEqual(code, 0, output)
        self.assertEqual(output.split(), [os.path.join(package, "libkiln.so"), kiln.version()])

    def test_without_any_library_the_error_says_where_it_looked(self):
        if ctypes.util.find_library("kiln"):
            self.skipTest("a libkiln is installed on this system, so the system search finds one")
        with tempfile.TemporaryDirectory() as root:
            shutil.copytree(os.path.dirname(kiln.__file__), os.path.join(root, "kiln"))
            code, output = run_python(
                "import kiln\n"
                "try:\n"
                "    kiln.zeros(2)\n"
                "except kiln.LibraryNotFound as e:\n"
                "    print('raised', e)\n",
                KILN_LIBRARY=None, PYTHONPATH=root)
        self.assertEqual(code, 0, output)
        self.assertIn("raised libkiln.so not found: KILN_LIBRARY is not set", output)
        self.assertIn("holds no libkiln.so and the system's library search finds none", output)

    def test_a_library_without_a_function_raises_unsupported_on_call(self):
        # libz is a shared library without any kiln_* function.
        zlib = ctypes.util.find_library("z")
        if zlib is None:
            self.skipTest("no libz to stand in for an older library")
        code, output = run_python(
            "import kiln\n"
            "try:\n"
            "    kiln.version()\n"
            "except kiln.Unsupported as e:\n"
            "    print('raised', e)\n",
            KILN_LIBRARY=zlib)
        self.assertEqual(code, 0, output)
        self.assertIn("has no kiln_version: it is not libkiln.so, or it is older than this package", output)


class Declarations(unittest.TestCase):
    def test_every_function_of_kiln_h_is_declared_and_in_the_library(self):
        folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "abi", "include", "kiln")
        with open(os.path.join(folder, "kiln.h")) as f:
            text = f.read()
        # kiln.h and the headers it includes (kiln_training.h, kiln_dist.h, ...).
        for header in re.findall(r'#include "kiln/(kiln_\w+\.h)"', text):
            with open(os.path.join(folder, header)) as f:
                text += f.read()
        functions = set(re.findall(r"KILN_API\s+[\w\s*]*?(kiln_\w+)\s*\(", text))
        self.assertGreater(len(functions), 100)
        self.assertEqual(sorted(functions), sorted(kiln._capi.SIGNATURES))
        for name in functions:
            getattr(kiln._library.lib, name)  # binds it, or raises kiln.Unsupported


class VersionAndBuild(unittest.TestCase):
    def test_version(self):
        self.assertRegex(kiln.version(), r"^\d+\.\d+\.\d+$")
        self.assertEqual(kiln.version(), kiln.__version__)

    def test_build_info(self):
        info = kiln.build_info()
        self.assertEqual(info.version, kiln.version())
        self.assertIsInstance(info.with_cuda, bool)
        self.assertTrue(info.compiler)
        self.assertTrue(info.build_type)
        self.assertTrue(info.onednn_version)
        if not info.with_nccl:
            self.assertEqual(info.nccl_version, "not built")

    def test_status_names(self):
        self.assertEqual(kiln.status_name(0), "ok")
        self.assertEqual(kiln.status_name(kiln.ShapeMismatch.status), "shape mismatch")


if __name__ == "__main__":
    support.main()
