"""Blobs in an S3-compatible object store (AWS S3, MinIO, Ceph RGW...) through boto3."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from app.blobs import BlobNotFound
from app.config import Settings

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_MISSING = {"NoSuchKey", "404", "NotFound"}


class S3BlobStore:
    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix

    @classmethod
    def from_settings(cls, settings: Settings) -> S3BlobStore:
        assert settings.s3_bucket, "Settings validation requires a bucket for the s3 store"
        client = boto3.client(
            "s3",
            endpoint_url=settings.s3_endpoint_url,
            region_name=settings.s3_region,
            aws_access_key_id=settings.s3_access_key_id,
            aws_secret_access_key=settings.s3_secret_access_key,
            config=Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5, read_timeout=60),
        )
        return cls(client, settings.s3_bucket, settings.s3_prefix)

    def key(self, sha256: str) -> str:
        return f"{self.prefix}{sha256[:2]}/{sha256}.pdf"

    def put(self, sha256: str, data: bytes, session: Session | None = None) -> None:
        # Content-addressed and immutable: a second PUT of the same key rewrites identical bytes, so no
        # existence check (a HEAD would cost a round trip on every upload for nothing).
        self.client.put_object(Bucket=self.bucket, Key=self.key(sha256), Body=data,
                               ContentType="application/pdf")

    def get(self, sha256: str) -> bytes:
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=self.key(sha256))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                raise BlobNotFound(sha256) from exc
            raise
        return response["Body"].read()
