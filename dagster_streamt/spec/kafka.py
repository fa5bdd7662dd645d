"""streamt's ``runtime.kafka`` as the options of Spark's Kafka source and sink (``kafka.*``).

streamt gives Kafka settings by name (``sasl_username``, ``ssl_ca_location``); the Kafka Java client
Spark uses wants its own properties (``sasl.jaas.config``, ``ssl.truststore.*``). One function
translates, so reading and writing topics agree; :func:`librdkafka_options` gives the same settings to
confluent-kafka, which creates a model's topic before Spark writes to it.
"""

from __future__ import annotations

from pathlib import Path

from .runtime import KafkaRuntime

_LOGIN = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
          "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
          "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule"}


def _jaas_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _connection(kafka: KafkaRuntime, prefix: str) -> tuple[dict[str, str], str]:
    """The brokers, security protocol and SASL mechanism both clients name alike (after ``prefix``), and the
    mechanism: PLAIN when only a user name is given."""
    mechanism = (kafka.sasl_mechanism or ("PLAIN" if kafka.sasl_username else "")).upper()
    given = (("bootstrap.servers", kafka.bootstrap_servers), ("security.protocol", kafka.security_protocol),
             ("sasl.mechanism", mechanism))
    return {f"{prefix}{key}": value for key, value in given if value}, mechanism


def kafka_client_options(kafka: KafkaRuntime, root: Path) -> dict[str, str]:
    """``kafka.*`` options for Spark; PEM files are read relative to the project folder ``root``."""
    opts, mechanism = _connection(kafka, "kafka.")
    if kafka.sasl_username is not None and mechanism in _LOGIN:
        opts["kafka.sasl.jaas.config"] = (f"{_LOGIN[mechanism]} required username={_jaas_quote(kafka.sasl_username)} "
                                          f"password={_jaas_quote(kafka.sasl_password or '')};")
    if kafka.ssl_ca_location:
        opts["kafka.ssl.truststore.type"] = "PEM"
        opts["kafka.ssl.truststore.location"] = str((root / kafka.ssl_ca_location).resolve())
    if kafka.ssl_certificate_location and kafka.ssl_key_location:
        opts["kafka.ssl.keystore.type"] = "PEM"
        opts["kafka.ssl.keystore.certificate.chain"] = (root / kafka.ssl_certificate_location).read_text()
        opts["kafka.ssl.keystore.key"] = (root / kafka.ssl_key_location).read_text()
    opts.update({k if k.startswith("kafka.") else f"kafka.{k}": v for k, v in kafka.options.items()})
    return opts


def librdkafka_options(kafka: KafkaRuntime, root: Path) -> dict[str, str]:
    """The same bootstrap and security settings for librdkafka (confluent-kafka, which creates a model's
    topic before Spark writes to it): its own property names, PEM paths it reads itself. ``options:``
    hold Java client properties and stay out: librdkafka refuses any name it does not know."""
    opts, _ = _connection(kafka, "")
    if kafka.sasl_username is not None:
        opts["sasl.username"] = kafka.sasl_username
        opts["sasl.password"] = kafka.sasl_password or ""
    for key, path in (("ssl.ca.location", kafka.ssl_ca_location),
                      ("ssl.certificate.location", kafka.ssl_certificate_location),
                      ("ssl.key.location", kafka.ssl_key_location)):
        if path:
            opts[key] = str((root / path).resolve())
    return opts
