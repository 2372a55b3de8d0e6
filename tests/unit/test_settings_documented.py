"""Every setting the code reads is set by the Bicep templates or documented as optional.

The list of settings is derived from the code, so it keeps up as settings are added:
- every pydantic ``BaseSettings`` class in shared/, loaders/ and function_app.py: each field's
  environment name (validation alias, alias, or env_prefix + field name) and, for nested models
  read through ``env_nested_delimiter``, every leaf (``SYNTH_PIPELINE__THRESHOLDS__NEW_BELOW``);
- every ``os.environ[...]`` / ``os.environ.get(...)`` / ``os.getenv(...)`` / ``... in os.environ``
  read in the same files, whose key is a string literal or a module-level string constant.

"Set by Bicep" means a key of the app settings main.bicep gives the Function App. "Documented"
means a row of the table under "## Optional settings" in docs/DEPLOY.md; a row may hold several
names and ``*`` wildcards (``SYNTH_PIPELINE__*``). Names compare case-insensitively, as the app
reads them.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

REPO = Path(__file__).resolve().parents[2]
SOURCES = [REPO / "shared", REPO / "loaders", REPO / "function_app.py"]
DEPLOY_MD = REPO / "docs" / "DEPLOY.md"
OPTIONAL_HEADING = "## Optional settings"


@dataclass(frozen=True)
class Read:
    name: str
    where: str


def python_files() -> list[Path]:
    files: list[Path] = []
    for source in SOURCES:
        files.extend(sorted(source.rglob("*.py")) if source.is_dir() else [source])
    return files


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


# ------------------------------------------------------------------------------------------------
# settings classes


def settings_classes() -> list[type]:
    """BaseSettings subclasses defined in the sources (found by AST, then imported)."""
    from pydantic_settings import BaseSettings

    found = []
    for path in python_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id == "BaseSettings")
                or (isinstance(b, ast.Attribute) and b.attr == "BaseSettings")
                for b in node.bases
            ):
                cls = getattr(importlib.import_module(module_name(path)), node.name)
                assert issubclass(cls, BaseSettings)
                found.append(cls)
    return found


def model_leaves(model: type[BaseModel], prefix: str, delimiter: str) -> list[str]:
    names = []
    for field_name, field in model.model_fields.items():
        name = f"{prefix}{delimiter}{field_name}".upper()
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names.extend(model_leaves(annotation, name, delimiter))
        else:
            names.append(name)
    return names


def settings_env_names(cls: type) -> list[Read]:
    config = cls.model_config  # type: ignore[attr-defined]
    prefix = config.get("env_prefix", "")
    delimiter = config.get("env_nested_delimiter") or ""
    where = f"{cls.__module__}.{cls.__name__}"
    reads = []
    for field_name, field in cls.model_fields.items():  # type: ignore[attr-defined]
        alias = field.validation_alias or field.alias
        if alias is not None:
            choices = getattr(alias, "choices", [alias])
            names = [c if isinstance(c, str) else str(c.path[0]) for c in choices]
        else:
            names = [f"{prefix}{field_name}"]
            if not config.get("case_sensitive", False):
                names = [n.upper() for n in names]
        annotation = field.annotation
        nested = isinstance(annotation, type) and issubclass(annotation, BaseModel)
        for name in names:
            if nested and delimiter:
                leaves = model_leaves(annotation, name, delimiter)
                reads.extend(Read(leaf, f"{where}.{field_name}") for leaf in leaves)
            else:
                reads.append(Read(name, f"{where}.{field_name}"))
    return reads


# ------------------------------------------------------------------------------------------------
# os.environ reads


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def _is_getenv(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "getenv") or (
        isinstance(node, ast.Name) and node.id == "getenv"
    )


def environ_reads(path: Path) -> tuple[list[Read], list[str]]:
    """(reads with a known key, descriptions of reads whose key cannot be known statically)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    keys: list[tuple[ast.AST, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            if _is_getenv(func) or (
                isinstance(func, ast.Attribute)
                and func.attr in ("get", "setdefault", "pop")
                and _is_environ(func.value)
            ):
                keys.append((node.args[0], node.lineno))
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            if isinstance(node.ctx, ast.Load):
                keys.append((node.slice, node.lineno))
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) for op in node.ops
        ):
            if any(_is_environ(c) for c in node.comparators):
                keys.append((node.left, node.lineno))
    reads, unknown = [], []
    where = path.relative_to(REPO).as_posix()
    for key, line in keys:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            reads.append(Read(key.value, f"{where}:{line}"))
        elif isinstance(key, ast.Name) and key.id in constants:
            reads.append(Read(constants[key.id], f"{where}:{line}"))
        else:
            unknown.append(f"{where}:{line}: {ast.unparse(key)}")
    return reads, unknown


def code_reads() -> list[Read]:
    reads = [r for cls in settings_classes() for r in settings_env_names(cls)]
    for path in python_files():
        reads.extend(environ_reads(path)[0])
    return reads


# ------------------------------------------------------------------------------------------------
# where settings are set or documented


def bicep_settings() -> set[str]:
    """Names of the app settings main.bicep gives the Function App (parsed with pycep-parser,
    by the helpers of test_infra.py)."""
    from tests.unit.test_infra import app_settings

    return {name.lower() for name in app_settings()}


def documented_optional() -> list[str]:
    """Names (or patterns) in the first column of the table under '## Optional settings'."""
    lines = DEPLOY_MD.read_text().splitlines()
    assert OPTIONAL_HEADING in lines, f"docs/DEPLOY.md needs a '{OPTIONAL_HEADING}' section"
    names: list[str] = []
    in_table = False
    for line in lines[lines.index(OPTIONAL_HEADING) + 1 :]:
        if line.startswith("#"):
            break
        if not line.startswith("|"):
            if in_table:
                break
            continue
        in_table = True
        first = line.strip("|").split("|")[0]
        if re.fullmatch(r"\s*:?-+:?\s*", first):
            continue
        names.extend(re.findall(r"`([^`]+)`", first))
    return names


def is_documented(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(name.lower(), p.lower()) for p in patterns)


# ------------------------------------------------------------------------------------------------
# tests


def test_the_derived_list_sees_the_known_settings() -> None:
    """Guards the derivation itself: if it found nothing, the main test would pass vacuously."""
    names = {r.name.lower() for r in code_reads()}
    for expected in (
        "AzureWebJobsStorage",
        "AzureWebJobsStorage__blobServiceUri",
        "AzureWebJobsStorage__queueServiceUri",
        "AzureWebJobsStorage__clientId",
        "OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "PINECONE_API_KEY",
        "LANGFUSE_SECRET_KEY",
        "SYNTH_ENGINE",
        "SYNTH_WORKERS",
        "SYNTH_PIPELINE__THRESHOLDS__NEW_BELOW",
        "SYNTH_PIPELINE__LIMITS__MAX_UPLOAD_BYTES",
        "TIKTOKEN_CACHE_DIR",
    ):
        assert expected.lower() in names, expected


def test_optional_settings_table_is_found() -> None:
    documented = documented_optional()
    assert len(documented) >= 10
    assert "SYNTH_PIPELINE__*" in documented


def test_every_environ_read_has_a_knowable_name() -> None:
    unknown = [u for path in python_files() for u in environ_reads(path)[1]]
    assert not unknown, (
        "environment reads with a computed name cannot be checked; use a literal or a module "
        "constant, or declare the setting in shared/settings.py:\n" + "\n".join(unknown)
    )


def test_every_setting_the_code_reads_is_set_in_bicep_or_documented() -> None:
    in_bicep = bicep_settings()
    documented = documented_optional()
    missing: dict[str, set[str]] = {}
    for read in code_reads():
        if read.name.lower() in in_bicep or is_documented(read.name, documented):
            continue
        missing.setdefault(read.name, set()).add(read.where)
    assert not missing, (
        "settings read by the code but neither set in infra/main.bicep (app settings) nor in "
        f"the '{OPTIONAL_HEADING}' table of docs/DEPLOY.md:\n"
        + "\n".join(f"  {name}  ({', '.join(sorted(w))})" for name, w in sorted(missing.items()))
    )


def test_every_documented_setting_exists() -> None:
    """No stale rows: each documented name is read by the code or set by the deployment."""
    reads = {r.name.lower() for r in code_reads()}
    known = reads | bicep_settings()
    stale = [
        p
        for p in documented_optional()
        if not any(fnmatch.fnmatchcase(n, p.lower()) for n in known)
    ]
    assert not stale, f"documented in docs/DEPLOY.md but neither read nor set: {stale}"
