"""The embedded broker: kombu's SQLAlchemy transport with Celery's ``polling_interval`` option honoured.

kombu hands every transport option to ``create_engine``, so the standard ``polling_interval`` option cannot
reach its SQLAlchemy transport, which then polls once a second. A worker that finishes a job waits for that
poll before it fetches the next one, capping an embedded worker near one job a second. This subclass keeps the
option out of the engine arguments; ``register()`` puts it behind the ``sqla`` and ``sqlalchemy`` URL schemes.
"""

from __future__ import annotations

from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import sqlalchemy as kombu_sqlalchemy

# Options the virtual transport reads itself; SQLAlchemy's create_engine rejects them.
TRANSPORT_ONLY_OPTIONS = ("polling_interval",)
SCHEMES = ("sqla", "sqlalchemy")


class Channel(kombu_sqlalchemy.Channel):
    def _engine_from_config(self):  # noqa: ANN202 - kombu's signature
        client = self.connection.client
        saved = client.transport_options
        client.transport_options = {k: v for k, v in saved.items() if k not in TRANSPORT_ONLY_OPTIONS}
        try:
            return super()._engine_from_config()
        finally:
            client.transport_options = saved


class Transport(kombu_sqlalchemy.Transport):
    Channel = Channel


def register() -> None:
    for scheme in SCHEMES:
        TRANSPORT_ALIASES[scheme] = f"{__name__}:Transport"
