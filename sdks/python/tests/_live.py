"""Shared by the test_live_* modules: the real server's coordinates, clients, and the failing proxy.

Importing this module skips the importing test module when no server is described in the
environment (WAYTRACK_TEST_* variables, set by server/test/sdks/python.test.ts).
"""

import http.client
import json
import os
import unittest
import uuid
from urllib.parse import urlsplit

from waytrack import Waytrack

if not os.environ.get("WAYTRACK_TEST_BASE_URL"):
    raise unittest.SkipTest(
        "WAYTRACK_TEST_BASE_URL is not set: these tests need a real Waytrack server; "
        "run them with `npx vitest run --project sqlite server/test/sdks/python.test.ts`"
    )

BASE_URL = os.environ["WAYTRACK_TEST_BASE_URL"]
CA_FILE = os.environ["WAYTRACK_TEST_CA_FILE"]
LIVE_KEY = os.environ["WAYTRACK_TEST_LIVE_KEY"]
TEST_KEY = os.environ["WAYTRACK_TEST_TEST_KEY"]
PROXY_URL = os.environ["WAYTRACK_TEST_PROXY_URL"]
CONTROL_URL = os.environ["WAYTRACK_TEST_CONTROL_URL"]
DEAD_URL = os.environ["WAYTRACK_TEST_DEAD_URL"]


def client(base_url=BASE_URL, api_key=LIVE_KEY, **options):
    """A client trusting the server's certificate, with tiny backoff so that retries are fast."""
    options.setdefault("ca_file", CA_FILE)
    options.setdefault("initial_backoff", 0.001)
    options.setdefault("max_backoff", 0.005)
    return Waytrack(api_key, base_url, **options)


def unique(prefix):
    return f"{prefix}{uuid.uuid4().hex[:16]}"


def new_store(wt, **fields):
    fields.setdefault("name", unique("Store "))
    fields.setdefault("domain", f"{unique('shop')}.example.com")
    fields.setdefault("platform", "custom")
    return wt.stores.create(**fields)


class Proxy:
    """The harness's failing proxy, driven through its control address."""

    def __init__(self):
        parts = urlsplit(CONTROL_URL)
        self._host, self._port = parts.hostname, parts.port

    def _call(self, method, path, body=None):
        connection = http.client.HTTPConnection(self._host, self._port, timeout=10)
        try:
            payload = None if body is None else json.dumps(body)
            connection.request(method, path, body=payload, headers={"Content-Type": "application/json"})
            answer = connection.getresponse()
            data = answer.read()
            if answer.status >= 300:
                raise AssertionError(f"proxy control {method} {path}: {answer.status}")
            return json.loads(data) if data else None
        finally:
            connection.close()

    def reset(self):
        self._call("POST", "/reset")

    def fail(self, status, count, retry_after=None):
        plan = {"status": status, "count": count}
        if retry_after is not None:
            plan["retryAfter"] = retry_after
        self._call("POST", "/fail", plan)

    def requests(self, method=None, path_prefix=None):
        """What the proxy saw since the last reset: [{method, path, idempotencyKey, userAgent, authorization}]."""
        seen = self._call("GET", "/requests")
        return [
            r
            for r in seen
            if (method is None or r["method"] == method) and (path_prefix is None or r["path"].startswith(path_prefix))
        ]
