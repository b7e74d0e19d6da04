"""Retries over the wire, through the harness's failing proxy in front of the real server."""

import sys
import time
import unittest

from waytrack import WaytrackConnectionError, WaytrackError, __version__

from _live import LIVE_KEY, PROXY_URL, Proxy, client, new_store, unique


class RetriesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proxy = Proxy()
        cls.wt = client(PROXY_URL)
        cls.store = new_store(client())

    def setUp(self):
        self.proxy.reset()

    def click(self, wt=None):
        fbclid = unique("fb")
        return (wt or self.wt).track.click(
            fbclid=fbclid, store_id=self.store.id, landing_page=f"https://x.example/?fbclid={fbclid}"
        )

    def posts(self):
        return self.proxy.requests("POST", "/v1/track/click")

    def test_503_is_retried_with_the_same_idempotency_key(self):
        self.proxy.fail(503, 2)
        result = self.click()
        self.assertFalse(result.duplicate)
        posts = self.posts()
        self.assertEqual(len(posts), 3)
        keys = {p["idempotencyKey"] for p in posts}
        self.assertEqual(len(keys), 1)
        self.assertIsNotNone(keys.pop())

    def test_429_waits_for_retry_after(self):
        self.proxy.fail(429, 1, retry_after=1)
        started = time.monotonic()
        self.click()
        elapsed = time.monotonic() - started
        # The client's own backoff is ~1 ms here: only Retry-After explains a one-second pause.
        self.assertGreaterEqual(elapsed, 0.95)
        posts = self.posts()
        self.assertEqual(len(posts), 2)
        self.assertEqual(posts[0]["idempotencyKey"], posts[1]["idempotencyKey"])

    def test_closed_connection_is_retried(self):
        self.proxy.fail(0, 1)
        self.click()
        posts = self.posts()
        self.assertEqual(len(posts), 2)
        self.assertEqual(posts[0]["idempotencyKey"], posts[1]["idempotencyKey"])

    def test_closed_connections_until_the_retries_are_spent(self):
        self.proxy.fail(0, 3)
        with self.assertRaises(WaytrackConnectionError):
            self.click()
        self.assertEqual(len(self.posts()), 3)

    def test_503_until_the_retries_are_spent(self):
        self.proxy.fail(503, 2)
        with self.assertRaises(WaytrackError) as raised:
            self.click(client(PROXY_URL, max_retries=1))
        self.assertEqual((raised.exception.status, raised.exception.code), (503, "service_unavailable"))
        self.assertEqual(raised.exception.request_id, "req_proxy")
        self.assertEqual(len(self.posts()), 2)

    def test_plain_4xx_is_not_retried(self):
        with self.assertRaises(WaytrackError) as raised:
            self.wt.track.click(fbclid="bad fbclid", store_id=self.store.id, landing_page="https://x.example/")
        self.assertEqual(raised.exception.status, 400)
        self.assertEqual(len(self.posts()), 1)
        with self.assertRaises(WaytrackError):
            self.wt.stores.retrieve("st_00000000000000000000000000")
        self.assertEqual(len(self.proxy.requests("GET", "/v1/stores/")), 1)

    def test_each_call_has_its_own_key_and_gets_are_retried_without_one(self):
        self.click()
        self.click()
        keys = [p["idempotencyKey"] for p in self.posts()]
        self.assertEqual(len(set(keys)), 2)
        self.proxy.fail(502, 1)
        self.assertEqual(self.wt.stores.retrieve(self.store.id).id, self.store.id)
        gets = self.proxy.requests("GET", f"/v1/stores/{self.store.id}")
        self.assertEqual(len(gets), 2)
        self.assertEqual([g["idempotencyKey"] for g in gets], [None, None])

    def test_user_agent_and_authorization(self):
        self.wt.stores.list(limit=1)
        seen = self.proxy.requests("GET", "/v1/stores")[0]
        self.assertEqual(
            seen["userAgent"], f"waytrack-python/{__version__} python/{sys.version_info[0]}.{sys.version_info[1]}"
        )
        self.assertRegex(seen["userAgent"], r"^waytrack-python/\d+\.\d+\.\d+\S* python/3\.\d+$")
        self.assertEqual(seen["authorization"], f"Bearer {LIVE_KEY}")


if __name__ == "__main__":
    unittest.main()
