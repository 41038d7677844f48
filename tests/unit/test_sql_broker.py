"""The embedded broker honours Celery's ``polling_interval`` (stock kombu passes it to create_engine and fails)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kombu import Connection, Exchange, Queue
from kombu.transport.virtual import base as kombu_virtual

from app.jobs import queue


def test_sqla_urls_use_the_transport_that_accepts_polling_interval(tmp_path: Path) -> None:
    url = f"sqla+sqlite:///{tmp_path / 'broker.db'}"
    options = queue._transport_options(url)
    assert options == {"polling_interval": queue.SQL_BROKER_POLLING_INTERVAL_S}
    exchange = Exchange("t", type="direct")
    with Connection(url, transport_options=options) as connection:
        assert connection.transport.polling_interval == queue.SQL_BROKER_POLLING_INTERVAL_S
        bound = Queue("t", exchange, routing_key="t")(connection)
        bound.declare()
        connection.Producer().publish({"n": 1}, exchange=exchange, routing_key="t", declare=[bound])
        message = bound.get(no_ack=True)
        assert message is not None and message.payload == {"n": 1}


def test_an_idle_consumer_polls_at_the_polling_interval_and_sees_a_new_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted in polls, not seconds: the consumer's idle waits are the configured interval (stock kombu waits
    a whole second), and a message published while it waits is delivered on its next poll."""
    url = f"sqla+sqlite:///{tmp_path / 'broker.db'}"
    exchange = Exchange("t", type="direct")
    task_queue = Queue("t", exchange, routing_key="t")
    received: list[dict] = []
    waits: list[float] = []

    def publish() -> None:
        with Connection(url, transport_options=queue._transport_options(url)) as other:
            other.Producer().publish({"n": 2}, exchange=exchange, routing_key="t", declare=[task_queue])

    def idle_wait(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 1:
            publish()  # arrives while the consumer is idle, between two polls

    monkeypatch.setattr(kombu_virtual, "sleep", idle_wait)
    with Connection(url, transport_options=queue._transport_options(url)) as connection:
        task_queue(connection).declare()
        with connection.Consumer(task_queue, callbacks=[lambda body, message: received.append(body)],
                                 accept=["json"]):
            connection.drain_events(timeout=30)
    assert received == [{"n": 2}]
    assert waits == [queue.SQL_BROKER_POLLING_INTERVAL_S]  # one idle wait, at the configured interval


def test_redis_urls_get_no_sql_options() -> None:
    assert "polling_interval" not in queue._transport_options("redis://127.0.0.1:6379/0")
