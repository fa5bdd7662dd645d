"""``dg scaffold defs dagster_streamt.StreamtProjectComponent NAME [--project-path PATH]``: writes
the ``defs.yaml`` (pointing at an existing project, as dagster-dbt's scaffolder does), or a starter
project next to it that loads, runs and shows up in ``dg dev`` as it is."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

from dagster.components import Scaffolder, ScaffoldRequest, scaffold_component
from pydantic import BaseModel, Field

from ..spec.loader import find_root_file

STARTER = {
    "stream_project.yml": """\
        # A streamt project (https://github.com/conduktor/streamt format), run on Spark by dagster-streamt.
        project:
          name: {name}
          description: Starter project written by `dg scaffold defs`; replace the model with your own.
        runtime:
          spark:
            master: "local[2]"
        """,
    "models/hello.yml": """\
        models:
          - name: hello
            materialized: table
            description: A first model; `ref("hello")` reads it from another model.
            sql: SELECT 1 AS id, 'hello' AS greeting
        """,
    "tests/hello.yml": """\
        tests:
          - name: hello_ids
            model: hello
            assertions:
              - not_null: {{columns: [id]}}
        """,
}


class StreamtScaffoldParams(BaseModel):
    project_path: str | None = Field(default=None, description="An existing streamt project folder "
                                                               "(holding stream_project.yml).")


class StreamtProjectScaffolder(Scaffolder[StreamtScaffoldParams]):
    @classmethod
    def get_scaffold_params(cls) -> type[StreamtScaffoldParams]:
        return StreamtScaffoldParams

    def scaffold(self, request: ScaffoldRequest[StreamtScaffoldParams]) -> None:
        path = request.params.project_path
        if path is not None:
            project = Path(path).resolve()
            if find_root_file(project) is None:
                raise FileNotFoundError(f"--project-path {path}: no stream_project.yml in {project}")
            root = (request.project_root or Path.cwd()).resolve()
            try:
                where = "{{ context.project_root }}/" + os.path.relpath(project, root)
            except ValueError:  # another drive
                where = str(project)
            scaffold_component(request, {"project": where})
            return
        request.target_path.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^a-z0-9_]", "_", request.target_path.name.lower()) or "streamt"
        for rel, text in STARTER.items():
            target = request.target_path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(text).format(name=name), encoding="utf-8")
        scaffold_component(request, {"project": "."})
