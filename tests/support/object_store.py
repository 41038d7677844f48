"""A real S3-compatible server for tests: moto's standalone server in its own process on a free loopback port.

Why a server rather than moto's in-process mock: the blob store must work across processes (an API and workers
on other hosts), and a server exercises boto3's real HTTP path, signing and error codes.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"


@dataclass(frozen=True)
class ObjectStore:
    endpoint_url: str
    bucket: str

    def environment(self) -> dict[str, str]:
        """The settings that point dsx at this store."""
        return {"DSX_BLOB_STORE": "s3", "DSX_S3_ENDPOINT_URL": self.endpoint_url, "DSX_S3_BUCKET": self.bucket,
                "DSX_S3_REGION": REGION, "DSX_S3_ACCESS_KEY_ID": ACCESS_KEY, "DSX_S3_SECRET_ACCESS_KEY": SECRET_KEY}

    def client(self):  # noqa: ANN201 - a boto3 S3 client
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name=REGION,
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)

    def object_keys(self) -> list[str]:
        listing = self.client().list_objects_v2(Bucket=self.bucket)
        return [item["Key"] for item in listing.get("Contents", [])]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def moto_server(log_path: Path) -> Iterator[ObjectStore]:
    """Start ``moto_server`` on a free port, create a bucket, yield the store; stop the server afterwards."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"moto server exited; see {log_path}")
                try:
                    httpx.get(f"{endpoint}/moto-api/", timeout=2)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise RuntimeError("moto server did not start in 60 s") from None
                    time.sleep(0.2)
            store = ObjectStore(endpoint, f"dsx-{uuid.uuid4().hex[:8]}")
            store.client().create_bucket(Bucket=store.bucket)
            yield store
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
