"""Package content read from a stream with a size limit (uploads, upload_from_uri)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from vnfm.domain.errors import PayloadTooLarge


async def read_limited(chunks: AsyncIterator[bytes], limit: int, what: str) -> bytes:
    """Package content from a stream, refused (PayloadTooLarge) as soon as it passes `limit`."""
    data = bytearray()
    async for chunk in chunks:
        data.extend(chunk)
        if len(data) > limit:
            raise PayloadTooLarge(f"{what} is over the limit of {limit} bytes")
    return bytes(data)
