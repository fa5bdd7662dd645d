"""Environment variables in every YAML string: ``${VAR}``, ``${VAR:-default}`` and
``{{ env_var("VAR", "default") }}``; ``.env`` files; and redaction of secrets in output.

All missing variables are collected (each with its location) instead of failing on the first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jinja2 import TemplateError, Undefined
from jinja2.sandbox import SandboxedEnvironment

_DOLLAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SECRET_NAME = re.compile(r"(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE|CREDENTIAL|AUTH)", re.I)
_SECRET_KEY = re.compile(r"(password|passwd|secret|token|api_?key|private|credential|auth)", re.I)
REDACTED = "***"


class MissingVar(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def read_dotenv(path: Path) -> dict[str, str]:
    """Parse a ``.env`` file (KEY=VALUE, optional quotes and ``export``); comments ignored."""
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[len("export ") :]
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key.strip()] = value
    return out


def project_dotenv(root: Path, env: str | None) -> dict[str, str]:
    """``.env`` then ``.env.<env>`` (which wins) in the project folder: one place decides, so
    validation, compilation and Spark runs see the same variables."""
    values = read_dotenv(root / ".env")
    if env:
        values.update(read_dotenv(root / f".env.{env}"))
    return values


class EnvResolver:
    """Looks variables up (process env over ``.env``), records what was used and what is secret."""

    def __init__(self, dotenv: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None):
        self._dotenv = dict(dotenv or {})
        self._environ = os.environ if environ is None else environ
        self.used: dict[str, str | None] = {}
        self.secrets: set[str] = set()
        self._jinja = SandboxedEnvironment(undefined=Undefined, autoescape=False)
        self._jinja.globals["env_var"] = self.env_var

    def lookup(self, name: str, default: str | None = None) -> str:
        value = self._environ.get(name, self._dotenv.get(name))
        self.used[name] = value
        if value is None:
            if default is not None:
                return default
            raise MissingVar(name)
        if _SECRET_NAME.search(name) and value:
            self.secrets.add(value)
        return value

    def env_var(self, name: str, default: Any = None) -> str:
        return self.lookup(str(name), None if default is None else str(default))

    def interpolate(self, text: str, *, jinja: bool = True) -> tuple[str, list[str]]:
        """Substitute variables in ``text``; return the result and the names that were missing."""
        missing: list[str] = []

        def sub(m: re.Match[str]) -> str:
            try:
                return self.lookup(m.group(1), m.group(2))
            except MissingVar as exc:
                missing.append(exc.name)
                return m.group(0)

        out = _DOLLAR.sub(sub, text) if "${" in text else text
        if jinja and "{{" in out and "env_var" in out:
            out, more = self._render_env_only(out)
            missing.extend(more)
        return out, missing

    def _render_env_only(self, text: str) -> tuple[str, list[str]]:
        missing: list[str] = []

        def tolerant(name: str, default: Any = None) -> str:
            try:
                return self.env_var(name, default)
            except MissingVar as exc:
                missing.append(exc.name)
                return ""

        try:
            template = self._jinja.from_string(text)
            return template.render(env_var=tolerant), missing
        except TemplateError:
            return text, missing  # left for the SQL compiler, which reports template errors


def walk_strings(
    value: Any, path: tuple[str | int, ...], fn: Callable[[str, tuple[str | int, ...]], str]
) -> Any:
    """Rebuild ``value`` with ``fn`` applied to every string (and secret-looking keys noted)."""
    if isinstance(value, str):
        return fn(value, path)
    if isinstance(value, dict):
        return {k: walk_strings(v, (*path, k), fn) for k, v in value.items()}
    if isinstance(value, list):
        return [walk_strings(v, (*path, i), fn) for i, v in enumerate(value)]
    return value


def is_secret_key(key: object) -> bool:
    return isinstance(key, str) and bool(_SECRET_KEY.search(key))


class Redactor:
    """Replaces secret values (from secret-named variables or secret-named keys) with ``***``."""

    def __init__(self, secrets: set[str] | None = None) -> None:
        self._secrets = sorted({s for s in (secrets or set()) if len(s) >= 3}, key=len, reverse=True)

    def text(self, s: str) -> str:
        for secret in self._secrets:
            if secret in s:
                s = s.replace(secret, REDACTED)
        return s

    def value(self, v: Any) -> Any:
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {k: (REDACTED if is_secret_key(k) and x else self.value(x)) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [self.value(x) for x in v]
        return v
