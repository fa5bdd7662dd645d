"""A JDBC URL taken apart, in one place for everything that needs its pieces: OpenLineage dataset names
(host, port, database) and a JDBC sink's Python database connection (those, plus the credentials and
connection properties the URL carries).

Forms read: ``jdbc:<sub>://[user[:password]@]host[:port][/database][?k=v&...]`` (PostgreSQL, MySQL,
MariaDB and most others), SQL Server's ``jdbc:sqlserver://host[:port][;k=v;...]`` and Oracle thin's
``jdbc:oracle:thin:[user/password]@[//]host[:port]/service`` or ``@host[:port]:SID``.
Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

_ORACLE = re.compile(r"^(?:\w+:)?(?:(?P<user>[^/@]+)/(?P<password>[^@]*))?@(?:(?://)?(?P<host>[^:/?()]+)"
                     r"(?::(?P<port>\d+))?(?P<sep>[/:])(?P<name>[^?;]+))?")


@dataclass(frozen=True)
class JdbcUrl:
    """The pieces of a JDBC URL; ``params`` holds its properties as written (query string or SQL Server's
    ``;k=v``), with credentials given as ``user[:password]@`` added as ``user`` and ``password``."""

    subprotocol: str  # lower case: postgresql, mysql, mariadb, sqlserver, oracle, ...
    host: str | None
    port: int | None
    database: str  # Oracle: the service name, or the SID when ``sid``
    params: dict[str, str] = field(default_factory=dict)
    sid: bool = False


def split_jdbc_url(url: str) -> JdbcUrl:
    """``jdbc:postgresql://h:5432/db?sslmode=require`` -> (postgresql, h, 5432, db, {sslmode: require})."""
    body = url[5:] if url.lower().startswith("jdbc:") else url
    sub, _, rest = body.partition(":")
    sub = sub.lower()
    if sub == "oracle":
        m = _ORACLE.match(rest)
        if m is None or m.group("host") is None:
            return JdbcUrl(sub, None, None, "", _credentials(m.group("user"), m.group("password")) if m else {})
        return JdbcUrl(sub, m.group("host"), int(m.group("port")) if m.group("port") else None, m.group("name"),
                       _credentials(m.group("user"), m.group("password")), sid=m.group("sep") == ":")
    if sub == "sqlserver":
        head, _, props = rest.partition(";")
        params = dict(p.split("=", 1) for p in props.split(";") if "=" in p)
        parts = urlsplit(head)
        database = params.get("databaseName") or params.get("database") or ""
        return JdbcUrl(sub, parts.hostname, _port(parts.netloc), database, params)
    parts = urlsplit(rest)
    database = unquote(parts.path.strip("/").split("/", 1)[0]) if parts.path else ""
    params = {**_credentials(parts.username, parts.password), **dict(parse_qsl(parts.query, keep_blank_values=True))}
    return JdbcUrl(sub, parts.hostname, _port(parts.netloc), database, params)


def _port(netloc: str) -> int | None:
    """The port of ``[user@]host:port``; None when absent, and for several hosts (``h1:p1,h2:p2``, of
    which ``host`` is the first: its default port)."""
    hosts = netloc.rpartition("@")[2]
    m = re.search(r":(\d+)$", hosts)
    return int(m.group(1)) if m and "," not in hosts else None


def _credentials(user: str | None, password: str | None) -> dict[str, str]:
    out = {"user": unquote(user)} if user else {}
    if password is not None and user:
        out["password"] = unquote(password)
    return out
