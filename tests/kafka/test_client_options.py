"""runtime.kafka for librdkafka (confluent-kafka creates a model's topic): the same broker and security
settings Spark's Java client gets, in librdkafka's names."""

from __future__ import annotations

from pathlib import Path

from dagster_streamt.spec.kafka import librdkafka_options
from dagster_streamt.spec.runtime import KafkaRuntime


def test_sasl_ssl_settings_in_librdkafka_names(tmp_path: Path) -> None:
    kafka = KafkaRuntime(bootstrap_servers=["b1:9092", "b2:9092"], security_protocol="SASL_SSL",
                         sasl_mechanism="scram-sha-512", sasl_username="u", sasl_password='p"w',
                         ssl_ca_location="certs/ca.pem", options={"ssl.endpoint.identification.algorithm": ""})
    assert librdkafka_options(kafka, tmp_path) == {
        "bootstrap.servers": "b1:9092,b2:9092", "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "u", "sasl.password": 'p"w', "ssl.ca.location": str((tmp_path / "certs/ca.pem").resolve())}


def test_a_username_alone_means_plain_and_mtls_gives_both_pem_paths(tmp_path: Path) -> None:
    assert librdkafka_options(KafkaRuntime(bootstrap_servers="b:9092", sasl_username="u"), tmp_path) == {
        "bootstrap.servers": "b:9092", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": ""}
    mtls = librdkafka_options(KafkaRuntime(bootstrap_servers="b:9092", security_protocol="SSL",
                                           ssl_certificate_location="c.pem", ssl_key_location="k.pem"), tmp_path)
    assert mtls["ssl.certificate.location"] == str((tmp_path / "c.pem").resolve())
    assert mtls["ssl.key.location"] == str((tmp_path / "k.pem").resolve())
