"""A loopback stand-in for S3: just enough of its REST API for the hydrator's boto3 calls.

What boto3 asks for when the hydrator stages a prefix (`list_objects_v2`, then its transfer
manager's downloads):
- `GET /<bucket>?list-type=2&prefix=P[&continuation-token=T]`: the keys under the prefix, with
  size and ETag (the MD5 of a single-part object, which the hydrator verifies against);
- `GET /<bucket>/<key>`, with `Range: bytes=A-B` for the parts of a large object (the hydrator
  gives the listed size and ETag, so it sends no `HEAD`; boto3's plain client does first).

Requests are path-style (boto3 uses it for an endpoint that is an IP address). A bucket made
with an access key answers 403 `AccessDenied` to a request not signed with that key, as a
bucket policy would: a hydrator that did not get the Secret's credentials cannot stage. The
signature itself is not checked, only whose key it names. It listens on 127.0.0.1 only and
stops itself after `lifetime` seconds.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, quote, unquote, urlsplit
from xml.sax.saxutils import escape

from modelfleet_devtools.loopback.server import LoopbackServer, handler_for

PAGE = 1000  # keys per listing page, as S3's default MaxKeys
LAST_MODIFIED = "2026-01-01T00:00:00.000Z"  # fixed: listings are the same run to run
CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")


@dataclass
class Bucket:
    objects: dict[str, bytes] = field(default_factory=dict)  # key -> content
    access_key: str = ""  # the only key it answers ("" : anyone)

    # key -> (the content it was worked out of, its ETag): S3 keeps an object's ETag, and a
    # ranged GET of a large object must not hash all of it again.
    etags: dict[str, tuple[bytes, str]] = field(default_factory=dict, repr=False)

    def etag(self, key: str) -> str:
        data = self.objects[key]
        known = self.etags.get(key)
        if known is None or known[0] is not data:
            known = (data, '"' + hashlib.md5(data, usedforsecurity=False).hexdigest() + '"')
            self.etags[key] = known
        return known[1]


class FakeS3(LoopbackServer):
    def __init__(self, buckets: dict[str, Bucket], *, lifetime: float = 600.0) -> None:
        self.buckets = buckets
        self.lock = threading.Lock()
        self.bytes_served: Counter[str] = Counter()  # object bytes per "bucket/key"
        self.refused: list[str] = []  # "METHOD path" of every request refused for its key
        handler = handler_for(lambda h: self.handle(h, body=h.command != "HEAD"), ("GET", "HEAD"))
        super().__init__(handler, lifetime=lifetime)

    def handle(self, h: BaseHTTPRequestHandler, *, body: bool) -> None:
        url = urlsplit(h.path)
        name, _, key = unquote(url.path).lstrip("/").partition("/")
        bucket = self.buckets.get(name)
        if bucket is None:
            return self.error(h, 404, "NoSuchBucket", f"no bucket {name!r}")
        signed_by = CREDENTIAL.search(h.headers.get("Authorization") or "")
        if bucket.access_key and (signed_by is None or signed_by[1] != bucket.access_key):
            with self.lock:
                self.refused.append(f"{h.command} {url.path}")
            return self.error(h, 403, "AccessDenied", "Access Denied")
        if not key:
            return self.listing(h, name, bucket, parse_qs(url.query))
        data = bucket.objects.get(key)
        if data is None:
            return self.error(h, 404, "NoSuchKey", "The specified key does not exist.")
        headers = {
            "ETag": bucket.etag(key),
            "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT",
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        status, start, end = 200, 0, len(data)
        ranged = re.fullmatch(r"bytes=(\d+)-(\d*)", h.headers.get("Range") or "")
        if ranged:
            start = int(ranged[1])
            end = min(len(data), int(ranged[2]) + 1) if ranged[2] else len(data)
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{len(data)}"
        h.send_response(status)
        for header, value in headers.items():
            h.send_header(header, value)
        h.send_header("Content-Length", str(end - start))
        h.end_headers()
        if body:
            h.wfile.write(memoryview(data)[start:end])
            with self.lock:
                self.bytes_served[f"{name}/{key}"] += end - start
        return None

    def listing(
        self, h: BaseHTTPRequestHandler, name: str, bucket: Bucket, query: dict[str, list[str]]
    ) -> None:
        prefix = query.get("prefix", [""])[0]
        after = query.get("continuation-token", [query.get("start-after", [""])[0]])[0]
        url_encoded = query.get("encoding-type", [""])[0] == "url"
        keys = sorted(k for k in bucket.objects if k.startswith(prefix) and k > after)
        page, truncated = keys[:PAGE], len(keys) > PAGE

        def text(value: str) -> str:
            return escape(quote(value, safe="/") if url_encoded else value)

        contents = "".join(
            f"<Contents><Key>{text(k)}</Key><LastModified>{LAST_MODIFIED}</LastModified>"
            f"<ETag>{escape(bucket.etag(k))}</ETag><Size>{len(bucket.objects[k])}</Size>"
            "<StorageClass>STANDARD</StorageClass></Contents>"
            for k in page
        )
        more = (
            f"<NextContinuationToken>{escape(page[-1])}</NextContinuationToken>"
            if truncated
            else ""
        )
        xml = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            f"<Name>{escape(name)}</Name><Prefix>{text(prefix)}</Prefix>"
            f"<KeyCount>{len(page)}</KeyCount><MaxKeys>{PAGE}</MaxKeys>"
            f"{'<EncodingType>url</EncodingType>' if url_encoded else ''}"
            f"<IsTruncated>{str(truncated).lower()}</IsTruncated>{more}{contents}"
            "</ListBucketResult>"
        )
        self.reply(h, 200, xml.encode())

    def error(self, h: BaseHTTPRequestHandler, status: int, code: str, message: str) -> None:
        xml = (
            "<?xml version='1.0' encoding='UTF-8'?>"
            f"<Error><Code>{code}</Code><Message>{escape(message)}</Message></Error>"
        )
        self.reply(h, status, xml.encode())

    @staticmethod
    def reply(h: BaseHTTPRequestHandler, status: int, payload: bytes) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/xml")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(payload)
