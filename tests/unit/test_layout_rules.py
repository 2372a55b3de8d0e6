"""The layout's rules, read from the code (every import, also those inside functions):

- ``shared/`` is the app's package: it never imports the entry points and tools around it
  (``loaders/``, ``devhost/``, ``function_app``, ``benchmarks/``, ``tests/``); they import it;
- the pipeline never imports the offline engine: what it runs whatever the engine (requirement
  capture for coverage, consolidation's cues) lives in ``shared/analysis/`` and ``shared/text/``;
- those neutral packages, and retrieval, import no engine at all;
- every module the code and the documentation name (``shared.x.y``, ``shared/x/y.py``) exists, so
  a module moved is not left named at its old place.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / "shared"
OUTSIDE_SHARED = ("loaders", "devhost", "function_app", "benchmarks", "tests")
NEUTRAL = ("text", "analysis", "retrieval")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str, package: str) -> Iterator[tuple[int, str]]:
    """(line, module) for every module ``source`` imports, ``from x import y`` counted as both
    ``x`` and ``x.y``; relative imports resolved against ``package``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def offenders(folder: Path, forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for line, module in imports(path.read_text(), package):
            if any(module == f or module.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(REPO)}:{line}: imports {module}")
    return found


def test_the_import_scan_sees_imports_inside_functions_and_relative_ones() -> None:
    source = "def f():\n    from loaders.ado_loader import main\n    from .. import engine\n"
    names = {name for _, name in imports(source, "shared.pipeline")}
    assert {"loaders.ado_loader", "loaders.ado_loader.main", "shared", "shared.engine"} == names


def test_shared_never_imports_the_entry_points_around_it() -> None:
    assert offenders(SHARED, OUTSIDE_SHARED) == []


def test_the_pipeline_never_imports_the_offline_engine() -> None:
    assert offenders(SHARED / "pipeline", ("shared.engine.offline",)) == []


def test_text_analysis_and_retrieval_import_no_engine() -> None:
    found = [o for name in NEUTRAL for o in offenders(SHARED / name, ("shared.engine",))]
    assert found == []


# ------------------------------------------------------------------------------------------------
# every module named exists

SKIP_DIRS = {".git", ".venv", ".venv-tools", "node_modules", ".data", "out", ".pytest_cache"}
SKIP_DIRS |= {".mypy_cache", ".ruff_cache"}
TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".yaml", ".yml", ".json", ".js", ".html"}
DOTTED = re.compile(r"(?<![\w./-])shared(?:\.[A-Za-z_]\w*)+")
SLASHED = re.compile(r"(?<![\w./-])shared/[\w./-]*\w")


def dotted_exists(name: str) -> bool:
    """``shared.a.b.c``: a module, a package, or a name that a package's ``__init__`` defines;
    what follows a module (its attributes) is not checked."""
    path = SHARED
    for part in name.split(".")[1:]:
        if (path / f"{part}.py").is_file():
            return True
        if (path / part).is_dir():
            path = path / part
            continue
        init = path / "__init__.py"
        defined = rf"^(?:async def |def |class )?{part}\b|^\s*(?:from \S+ )?import .*\b{part}\b"
        return init.is_file() and re.search(defined, init.read_text(), re.M) is not None
    return True


def slashed_exists(text: str) -> bool:
    """``shared/a/b.py`` or ``shared/a/`` exists; ``shared/a/b.name`` names ``shared/a/b.py``."""
    text = text.rstrip(".")
    if (REPO / text).exists():
        return True
    if text.endswith(".py"):
        return False
    head, _, tail = text.rpartition("/")
    return (REPO / head / f"{tail.split('.')[0]}.py").is_file()


def named_modules() -> Iterator[tuple[str, str]]:
    for path in sorted(REPO.rglob("*")):
        rel = path.relative_to(REPO)
        if (
            path.suffix not in TEXT_SUFFIXES
            or SKIP_DIRS.intersection(rel.parts)
            or rel.parts[:2] == ("benchmarks", "results")  # measurements, named as they were
            or not path.is_file()
            or path == Path(__file__).resolve()  # its examples name modules that do not exist
        ):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            for name in DOTTED.findall(line):
                if not dotted_exists(name):
                    yield f"{rel}:{n}", name
            for name in SLASHED.findall(line):
                if not slashed_exists(name):
                    yield f"{rel}:{n}", name


def test_the_existence_checks_tell_a_moved_module_from_a_present_one() -> None:
    assert dotted_exists("shared.text.textio") and not dotted_exists("shared.textio")
    assert dotted_exists("shared.tracing.NullTracer") and not dotted_exists("shared.tracing.Nope")
    assert slashed_exists("shared/review/tree.build_tree") and slashed_exists("shared/tracing/")
    assert not slashed_exists("shared/review.py") and not slashed_exists("shared/textio.py")


def test_every_module_the_code_and_the_docs_name_exists() -> None:
    assert [f"{where}: {name}" for where, name in named_modules()] == []


# ------------------------------------------------------------------------------------------------
# every name and path of the store is made in shared/layout.py

STORE_NAME = re.compile(r"^[a-z][a-z0-9_]*\.(?:jsonl|json|yaml|txt|csv|md|png)$")
STORE_ROOTS = ("runs/", "uploads/", "ingestion/", "index/", "eval/", "transcripts/")


def store_names() -> set[str]:
    """The artifact names shared/layout.py defines (its string constants that name a file)."""
    tree = ast.parse((SHARED / "layout.py").read_text())
    return {
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and STORE_NAME.match(node.value.value)
    }


def spelled_out(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, text) of every string in ``source`` (docstrings aside, f-strings' literal parts
    included) that is one of ``names`` or starts a path under one of the store's roots."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    # HTTP routes (``route="runs/{run_id}"``) are addresses of the API, not of the store
    routes = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword) and node.arg == "route"
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings | routes and (
                node.value in names or node.value.startswith(STORE_ROOTS)
            ):
                found.append((node.lineno, node.value))
    return sorted(found)


def test_the_store_names_are_read_from_layout_and_found_when_spelled_out() -> None:
    names = store_names()
    assert {"run.json", "segments.jsonl", "summary.json", "hygiene.json"} <= names
    source = (
        'def f(r):\n    """segments.jsonl"""\n    return f"runs/{r}/x", "summary.json", "ok"\n'
        '@app.route(route="runs/{run_id}")\ndef g(): ...\n'
    )
    assert spelled_out(source, names) == [(3, "runs/"), (3, "summary.json")]


def test_only_layout_spells_out_a_name_or_a_path_of_the_store() -> None:
    names = store_names()
    production = [p for p in sorted(SHARED.rglob("*.py")) if p != SHARED / "layout.py"]
    found = [
        f"{path.relative_to(REPO)}:{line}: {text!r}"
        for path in [*production, REPO / "function_app.py"]
        for line, text in spelled_out(path.read_text(), names)
    ]
    assert found == []
