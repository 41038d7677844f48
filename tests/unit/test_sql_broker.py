"""The embedded broker honours Celery's ``polling_interval`` (stock kombu passes it to create_engine and fails)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from kombu import Connection, Exchange, Queue

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


def test_an_idle_consumer_sees_a_new_message_within_the_polling_interval(tmp_path: Path) -> None:
    url = f"sqla+sqlite:///{tmp_path / 'broker.db'}"
    exchange = Exchange("t", type="direct")
    task_queue = Queue("t", exchange, routing_key="t")
    received: list[float] = []
    sent: list[float] = []

    def publish_later() -> None:
        time.sleep(0.25)
        with Connection(url, transport_options=queue._transport_options(url)) as other:
            sent.append(time.monotonic())
            other.Producer().publish({"n": 2}, exchange=exchange, routing_key="t", declare=[task_queue])

    with Connection(url, transport_options=queue._transport_options(url)) as connection:
        task_queue(connection).declare()
        with connection.Consumer(task_queue, callbacks=[lambda body, message: received.append(time.monotonic())],
                                 accept=["json"]):
            publisher = threading.Thread(target=publish_later)
            publisher.start()
            connection.drain_events(timeout=5)  # idle when it starts: the message arrives mid-poll
            publisher.join()
    assert received and sent
    assert received[0] - sent[0] < 0.5  # stock kombu sleeps a whole second between polls


def test_redis_urls_get_no_sql_options() -> None:
    assert "polling_interval" not in queue._transport_options("redis://127.0.0.1:6379/0")
