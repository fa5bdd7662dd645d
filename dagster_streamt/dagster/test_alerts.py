"""streamt's ``on_failure: [- alert: ...]`` on tests: when the check fails, each alert is sent.

Slack and generic webhooks get a JSON POST with ``text`` (Slack's format); PagerDuty gets an Events
API v2 ``trigger`` (to ``url`` or PagerDuty's endpoint) with the ``routing_key``. The message is the
alert's ``message`` rendered with ``{{ model.name }}``, ``{{ test.name }}`` and
``{{ assertion.name }}`` (in Jinja's sandbox), else a default sentence. A failed delivery is logged,
never fails the run: the check result itself is already recorded.
"""

from __future__ import annotations

from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import SandboxedEnvironment

from ..checks.results import TestResult
from ..spec.models import AlertAction, Test
from .alerts import post

PAGERDUTY_EVENTS = "https://events.pagerduty.com/v2/enqueue"
_JINJA = SandboxedEnvironment(autoescape=False)


def render_message(alert: AlertAction, test: Test, target: str, result: TestResult) -> str:
    failed = [a.label for a in result.failed]
    default = (f"streamt test {test.name} on {target} failed: "
               + (result.error or "; ".join(a.message or a.label for a in result.failed)))
    if not alert.message:
        return default
    try:
        return _JINJA.from_string(alert.message).render(
            model={"name": target}, test={"name": test.name, "type": test.type},
            assertion={"name": ", ".join(failed) or "(test)"}).strip()
    except TemplateError:
        return f"{alert.message.strip()} ({default})"


def alert_request(alert: AlertAction, test: Test, target: str, result: TestResult) -> tuple[str, dict[str, Any]] | None:
    """(url, JSON body) for one alert; None when it has nowhere to go."""
    text = render_message(alert, test, target, result)
    channel = (alert.channel or alert.type or "webhook").lower()
    if channel == "pagerduty":
        if not alert.routing_key:
            return None
        return alert.target_url or PAGERDUTY_EVENTS, {
            "routing_key": alert.routing_key, "event_action": "trigger",
            "payload": {"summary": text, "source": target, "severity": alert.severity or "error",
                        "custom_details": {"test": test.name, "failed": [a.label for a in result.failed]}}}
    if alert.target_url is None:
        return None
    return alert.target_url, {"text": text, "test": test.name, "target": target, "severity": result.severity,
                              "channel": alert.channel, "failing_rows": sum(a.failing_rows for a in result.assertions)}


def send_test_alerts(test: Test, target: str, result: TestResult, log: Any) -> None:
    """Send every alert of a failed test."""
    if result.passed:
        return
    for alert in test.alerts:
        request = alert_request(alert, test, target, result)
        if request is None:
            log.warning(f"streamt: test {test.name} failed; its {alert.channel or alert.type or 'alert'} alert has "
                        "no webhook/url (or PagerDuty routing_key) to send to")
            continue
        url, body = request
        try:
            status = post(url, body)
            log.info(f"streamt: alert for test {test.name} sent ({alert.channel or 'webhook'}, HTTP {status})")
        except Exception as exc:  # an unreachable webhook must not fail the run
            log.warning(f"streamt: alert for test {test.name} could not be sent to its webhook: {exc}")
