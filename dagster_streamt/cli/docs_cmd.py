"""``streamt docs generate`` / ``streamt docs serve``: the project as a static site that works offline."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import EXIT_USAGE, F, fail, load_or_exit, project_command

DEFAULT_OUT = "target/docs"


def _output_option(fn: F) -> F:
    return click.option("-o", "--output", "output", default=None, type=click.Path(file_okay=False, path_type=str),
                        help=f"Site folder (default: {DEFAULT_OUT} in the project). A relative path is taken from "
                             "the current directory, like any command-line path.")(fn)


def _out_dir(loaded: object, output: str | None) -> Path:
    return Path(output).resolve() if output else loaded.project.root / DEFAULT_OUT  # type: ignore[attr-defined]


def _generate(project_dir: str, env: str | None, output: str | None, with_runs: bool) -> Path:
    from ..docs_site import DocsError, generate

    loaded = load_or_exit(project_dir, env)
    out = _out_dir(loaded, output)
    try:
        result = generate(loaded, out, with_runs=with_runs)
    except DocsError as exc:
        fail(str(exc))
    runs = ("with last runs and test results" if result.with_runs else
            "no run history (the project's Dagster instance has no runs)" if with_runs else "without run history")
    if result.runs_error:
        click.echo(click.style(f"warning: could not read the run history: {result.runs_error}", fg="yellow"), err=True)
        runs = "run history unreadable (see warning)"
    size = f"{result.data_bytes / 1e6:.1f} MB" if result.data_bytes >= 1e6 else f"{result.data_bytes / 1e3:.0f} kB"
    click.echo(f"Docs for {loaded.project.name}: {result.nodes} nodes, {result.models} models, "
               f"{result.columns} model columns, {runs}; index.html {size}, written in {result.seconds:.1f} s")
    click.echo(f"Open {result.index.as_uri()} (works offline) or run: streamt docs serve"
               + (f" -p {project_dir}" if project_dir != "." else "") + (f" -o {output}" if output else ""))
    return result.index


@click.group("docs")
def docs() -> None:
    """A static documentation site: tables, columns, lineage, PII flow and last runs, offline."""


@project_command("generate", docs)
@_output_option
@click.option("--no-runs", is_flag=True,
              help="Leave out last runs and test results (do not read the Dagster instance).")
def generate_cmd(project_dir: str, env: str | None, output: str | None, no_runs: bool) -> None:
    """Write the site (index.html and assets/) for a browser, a static host or a shared folder."""
    _generate(project_dir, env, output, not no_runs)


@project_command("serve", docs)
@_output_option
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--regenerate/--no-regenerate", default=True, show_default=True,
              help="Generate the site first (otherwise serve what is there).")
@click.option("--open", "open_browser", is_flag=True, help="Open the site in the default browser.")
def serve_cmd(project_dir: str, env: str | None, output: str | None, port: int, host: str, regenerate: bool,
              open_browser: bool) -> None:
    """Serve the site over HTTP until Ctrl-C."""
    import functools
    import http.server

    if regenerate:
        index = _generate(project_dir, env, output, True)
    else:
        index = _out_dir(load_or_exit(project_dir, env), output) / "index.html"
        if not index.is_file():
            raise click.UsageError(f"no site at {index.parent}; run `streamt docs generate` first (or drop "
                                   "--no-regenerate)")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(index.parent))
    try:
        server = http.server.ThreadingHTTPServer((host, port), handler)
    except OSError as exc:
        click.echo(click.style(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}; "
                               "pick another with --port", fg="red"), err=True)
        sys.exit(EXIT_USAGE)
    shown = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "[::1]"}.get(host, f"[{host}]" if ":" in host else host)
    url = f"http://{shown}:{server.server_address[1]}/"
    click.echo(f"Serving {index.parent} at {url} (Ctrl-C to stop)")
    sys.stdout.flush()
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        server.server_close()
