"""Safe YAML loading that remembers the line of every key, so errors can point at it.

PyYAML's composer gives nodes with marks; we build plain Python values from them ourselves and
record ``path -> line``. Duplicate keys (silently last-wins in PyYAML) become diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

try:  # libyaml is about 10x faster; fall back to pure Python where it is missing
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

from .errors import Diagnostics

Path = tuple[str | int, ...]
_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass
class LineMap:
    """Line (1-based) of each key path in one file; ``value_lines`` is where a value's text starts."""

    file: str
    lines: dict[Path, int] = field(default_factory=dict)
    value_lines: dict[Path, int] = field(default_factory=dict)

    def compact(self, depth: int = 4) -> None:
        """Forget lines deeper than ``depth`` keys. Done before caching a loaded project: every
        diagnostic has been computed by then, and later lookups (manifest, CLI) need entity and key
        lines only; deeper paths fall back to their nearest ancestor."""
        self.lines = {p: n for p, n in self.lines.items() if len(p) <= depth}
        self.value_lines = {p: n for p, n in self.value_lines.items() if len(p) <= depth}

    def line(self, path: Path) -> int:
        """Line of ``path`` or of its nearest located ancestor."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get((), 1)


class _Builder:
    def __init__(self, lm: LineMap, diags: Diagnostics) -> None:
        self.lm = lm
        self.diags = diags
        self.scalars = yaml.constructor.SafeConstructor()

    def build(self, node: yaml.Node, path: Path) -> Any:
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            out = []
            for i, item in enumerate(node.value):
                self.lm.lines[(*path, i)] = item.start_mark.line + 1
                self._value_line(item, (*path, i))
                out.append(self.build(item, (*path, i)))
            return out
        return self.scalars.construct_object(node, deep=True)

    def _value_line(self, node: yaml.Node, path: Path) -> None:
        line = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
            line += 1  # block scalar text starts on the line after the indicator
        self.lm.value_lines[path] = line

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        merged: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                value = self.build(value_node, path)
                for part in value if isinstance(value, list) else [value]:
                    if isinstance(part, dict):
                        merged.update({k: v for k, v in part.items() if k not in merged})
                continue
            key = self.build(key_node, path)
            line = key_node.start_mark.line + 1
            if isinstance(key, list | dict):
                self.diags.add("STR002", "a mapping key must be a plain value, not a list or mapping",
                               file=self.lm.file, line=line, hint="write the key as a plain word")
                continue
            if not isinstance(key, str):
                key = str(key)
            sub = (*path, key)
            if key in out:
                self.diags.add("STR013", f"key {key!r} appears twice in the same mapping (the second one would win)",
                               file=self.lm.file, line=line, hint=f"remove one of the {key!r} keys")
            self.lm.lines[sub] = line
            self._value_line(value_node, sub)
            out[key] = self.build(value_node, sub)
        for k, v in merged.items():
            out.setdefault(k, v)
        return out


def load_yaml(text: str, file: str, diags: Diagnostics) -> tuple[Any, LineMap] | None:
    """Parse one YAML document; on failure add a located diagnostic and return None."""
    lm = LineMap(file=file)
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
        if node is None:
            return None, lm
        lm.lines[()] = node.start_mark.line + 1
        return _Builder(lm, diags).build(node, ()), lm
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or str(exc)
        diags.add("STR001", f"invalid YAML: {problem}" + (f" ({exc.context})" if exc.context else ""), file=file,
                  line=line, hint="check indentation, quoting and that every `key:` has a space after the colon")
    except yaml.YAMLError as exc:
        diags.add("STR001", f"invalid YAML: {exc}", file=file, line=0, hint="fix the YAML syntax")
    except RecursionError:
        diags.add("STR001", "YAML nesting is too deep", file=file, line=0, hint="flatten the document")
    except (ValueError, TypeError, OverflowError) as exc:
        diags.add("STR001", f"invalid YAML value: {exc}", file=file, line=0, hint="fix the YAML value")
    return None
