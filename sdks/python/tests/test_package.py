"""The package's promises that no single call shows: Python 3.9 syntax, standard library only, one version."""

import ast
import importlib.util
import pathlib
import re
import sysconfig
import unittest

import waytrack

PACKAGE = pathlib.Path(waytrack.__file__).resolve().parent
SOURCES = sorted(PACKAGE.rglob("*.py"))
PYPROJECT = PACKAGE.parent.parent / "pyproject.toml"


def imported_roots():
    """Top-level names of every absolute import in the package's sources (relative ones are its own)."""
    roots = set()
    for source in SOURCES:
        for node in ast.walk(ast.parse(source.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots.add(node.module.split(".")[0])
    return roots


class PackageTest(unittest.TestCase):
    def test_sources_found(self):
        self.assertGreater(len(SOURCES), 10)

    def test_python_3_9_grammar(self):
        # feature_version rejects syntax newer than 3.9 (match, parenthesized context managers…).
        for source in SOURCES:
            with self.subTest(source=source.name):
                ast.parse(source.read_text("utf-8"), filename=str(source), feature_version=(3, 9))

    def test_no_union_operator_in_annotations(self):
        # `X | Y` parses on 3.9 but fails there when evaluated (annotations are evaluated at import).
        found = []
        for source in SOURCES:
            for node in ast.walk(ast.parse(source.read_text("utf-8"))):
                annotations = []
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                    annotations = [a.annotation for a in arguments] + [node.returns]
                elif isinstance(node, ast.AnnAssign):
                    annotations = [node.annotation]
                for annotation in filter(None, annotations):
                    for inner in ast.walk(annotation):
                        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.BitOr):
                            found.append(f"{source.name}:{inner.lineno}")
        self.assertEqual(found, [])

    def test_standard_library_only(self):
        stdlib = pathlib.Path(sysconfig.get_paths()["stdlib"]).resolve()
        for root in sorted(imported_roots()):
            with self.subTest(module=root):
                spec = importlib.util.find_spec(root)
                self.assertIsNotNone(spec, root)
                origin = spec.origin
                builtin = origin in (None, "built-in", "frozen")
                if not builtin:
                    path = pathlib.Path(origin).resolve()
                    self.assertTrue(stdlib in path.parents, f"{root} comes from {path}, outside the standard library")
                    self.assertNotIn("site-packages", path.parts, f"{root} is an installed package")

    def test_version_is_the_servers(self):
        self.assertRegex(waytrack.__version__, r"^\d+\.\d+\.\d+")
        server_package = PACKAGE.parents[3] / "server" / "package.json"
        if not server_package.exists():
            self.skipTest("not inside the Waytrack repository")
        match = re.search(r'"version"\s*:\s*"([^"]+)"', server_package.read_text("utf-8"))
        self.assertIsNotNone(match)
        self.assertEqual(waytrack.__version__, match.group(1))

    def test_pyproject_reads_the_version_from_the_package(self):
        text = PYPROJECT.read_text("utf-8")
        self.assertIn('requires-python = ">=3.9"', text)
        self.assertIn('version = { attr = "waytrack._version.__version__" }', text)
        self.assertIn("dependencies = []", text)

    def test_public_names(self):
        for name in ("Waytrack", "WaytrackError", "WaytrackConnectionError", "ApiObject", "Page", "__version__"):
            self.assertTrue(hasattr(waytrack, name), name)
        self.assertTrue(issubclass(waytrack.WaytrackConnectionError, waytrack.WaytrackError))


if __name__ == "__main__":
    unittest.main()
