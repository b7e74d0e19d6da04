"""What goes on the wire for each method, and how answers become results or errors.

Uses a local recording server (tests/_local_server.py), so the exact request is visible; the
same behaviour against the real Waytrack server is covered by the test_live_* modules.
"""

import datetime
import decimal
import inspect
import json
import sys
import unittest
import uuid

from waytrack import Waytrack, WaytrackConnectionError, WaytrackError, __version__

from _local_server import LocalServer, error_envelope


def client(server, **options):
    options.setdefault("initial_backoff", 0.001)
    options.setdefault("max_backoff", 0.002)
    return Waytrack("wt_test_key", server.base_url, **options)


class RequestShapeTest(unittest.TestCase):
    def setUp(self):
        self.server = LocalServer().__enter__()
        self.addCleanup(self.server.__exit__)
        self.wt = client(self.server)

    def last(self):
        return self.server.requests[-1]

    def test_conversion_body_top_level_camel_case_nested_as_given(self):
        when = datetime.datetime(2026, 11, 22, 9, 58, tzinfo=datetime.timezone.utc)
        self.wt.track.conversion(
            store_id="st_1",
            event_type="Purchase",
            order_id="1001",
            event_value=decimal.Decimal("49.99"),
            currency="USD",
            customer_data={"email": "a@b.c", "firstName": "Ann"},
            products=[{"productId": "p1", "quantity": 2}],
            ip_address="203.0.113.9",
            event_source_url="https://shop.example.com/thanks",
            timestamp=when,
        )
        seen = self.last()
        self.assertEqual((seen["method"], seen["path"]), ("POST", "/v1/track/conversion"))
        self.assertEqual(
            seen["body"],
            {
                "storeId": "st_1",
                "eventType": "Purchase",
                "orderId": "1001",
                "eventValue": 49.99,
                "currency": "USD",
                "customerData": {"email": "a@b.c", "firstName": "Ann"},
                "products": [{"productId": "p1", "quantity": 2}],
                "ipAddress": "203.0.113.9",
                "eventSourceUrl": "https://shop.example.com/thanks",
                "timestamp": "2026-11-22T09:58:00+00:00",
            },
        )
        self.assertEqual(seen["headers"]["content-type"], "application/json")

    def test_click_leaves_out_what_was_not_given(self):
        self.wt.track.click(fbclid="abc", store_id="st_1", landing_page="https://x.example/?fbclid=abc", referrer=None)
        self.assertEqual(
            self.last()["body"], {"fbclid": "abc", "storeId": "st_1", "landingPage": "https://x.example/?fbclid=abc"}
        )

    def test_headers(self):
        self.wt.stores.retrieve("st_1")
        headers = self.last()["headers"]
        self.assertEqual(headers["authorization"], "Bearer wt_test_key")
        self.assertEqual(
            headers["user-agent"], f"waytrack-python/{__version__} python/{sys.version_info[0]}.{sys.version_info[1]}"
        )
        self.assertNotIn("idempotency-key", headers)
        self.wt.stores.create(name="A", domain="a.example.com", platform="custom")
        key = self.last()["headers"]["idempotency-key"]
        self.assertEqual(str(uuid.UUID(key)), key)
        self.assertEqual(uuid.UUID(key).version, 4)

    def test_update_sends_null_to_clear_and_leaves_out_the_rest(self):
        self.wt.stores.update("st_1", pixel_id=None, min_confidence=60)
        seen = self.last()
        self.assertEqual((seen["method"], seen["path"]), ("PATCH", "/v1/stores/st_1"))
        self.assertEqual(seen["body"], {"pixelId": None, "minConfidence": 60})

    def test_queries(self):
        self.wt.conversions.list(store_id="st_1", attributed=False, start_date=datetime.date(2026, 11, 1), limit=5)
        self.assertEqual(
            self.last()["path"], "/v1/conversions?storeId=st_1&attributed=false&startDate=2026-11-01&limit=5"
        )
        self.wt.analytics.breakdown(store_id="st_1", by="utm_source", model="linear")
        self.assertEqual(self.last()["path"], "/v1/analytics/breakdown?storeId=st_1&by=utm_source&model=linear")
        self.wt.analytics.timeseries(store_id="st_1", interval="hour")
        self.assertEqual(self.last()["path"], "/v1/analytics/timeseries?storeId=st_1&interval=hour")
        self.wt.analytics.metrics(store_id="st_1", start_date="2026-11-01", end_date="2026-11-30")
        self.assertEqual(
            self.last()["path"], "/v1/analytics/metrics?storeId=st_1&startDate=2026-11-01&endDate=2026-11-30"
        )
        self.wt.ad_spend.list("st 1/x", end_date="2026-11-30")
        self.assertEqual(self.last()["path"], "/v1/stores/st%201%2Fx/ad-spend?endDate=2026-11-30")
        self.wt.clicks.list()
        self.assertEqual(self.last()["path"], "/v1/clicks")

    def test_ad_spend_entries_are_sent_as_given(self):
        entries = [{"date": "2026-11-21", "amount": 250.5, "currency": "USD", "campaignId": "c1"}]
        self.wt.ad_spend.upsert("st_1", entries)
        seen = self.last()
        self.assertEqual(
            (seen["method"], seen["path"], seen["body"]), ("POST", "/v1/stores/st_1/ad-spend", {"entries": entries})
        )

    def test_raw_request(self):
        result = self.wt.request("post", "/conversions/conv_1/reattribute", query={"a": None})
        self.assertEqual((self.last()["method"], self.last()["path"]), ("POST", "/v1/conversions/conv_1/reattribute"))
        self.assertEqual(result.echo.method, "POST")

    def test_typos_are_caught_before_sending(self):
        with self.assertRaises(TypeError):
            self.wt.track.click(fbclid="a", store_id="st_1", landing_page="https://x.example/", ip_adress="1.2.3.4")  # type: ignore[call-arg]
        self.assertEqual(self.server.requests, [])

    def test_list_all_is_a_lazy_generator(self):
        walk = self.wt.stores.list_all()
        self.assertTrue(inspect.isgenerator(walk))
        self.assertEqual(self.server.requests, [])


class AnswerTest(unittest.TestCase):
    def run_with(self, script, **options):
        server = LocalServer(script).__enter__()
        self.addCleanup(server.__exit__)
        return client(server, **options), server

    def test_error_envelope(self):
        details = {"field": "customerData.email", "reason": "invalid_format"}
        wt, _ = self.run_with([(400, {"Request-Id": "req_h"}, error_envelope("invalid_request", "bad email", details))])
        with self.assertRaises(WaytrackError) as raised:
            wt.stores.list()
        error = raised.exception
        self.assertNotIsInstance(error, WaytrackConnectionError)
        self.assertEqual(
            (error.code, error.status, error.message, error.request_id), ("invalid_request", 400, "bad email", "req_h")
        )
        self.assertEqual(error.details.field, "customerData.email")
        self.assertIn("invalid_request 400: bad email [req_h]", str(error))

    def test_request_id_from_meta_when_no_header(self):
        wt, _ = self.run_with([(404, {}, error_envelope("not_found", "no"))])
        with self.assertRaises(WaytrackError) as raised:
            wt.clicks.retrieve("clk_x")
        self.assertEqual(raised.exception.request_id, "req_err")
        self.assertIsNone(raised.exception.details)

    def test_not_an_envelope_after_retries(self):
        gateway = (502, {"Content-Type": "text/html"}, b"<html>Bad Gateway</html>")
        wt, server = self.run_with([gateway, gateway, gateway])
        with self.assertRaises(WaytrackError) as raised:
            wt.stores.list()
        self.assertEqual((raised.exception.code, raised.exception.status), ("invalid_response", 502))
        self.assertIn("Bad Gateway", raised.exception.message)
        self.assertEqual(len(server.requests), 3)

    def test_success_that_is_not_the_expected_shape(self):
        not_an_object = json.dumps({"success": True, "data": [1, 2], "meta": {}}).encode()
        no_list = json.dumps({"success": True, "data": {"hasMore": False}, "meta": {}}).encode()
        wt, _ = self.run_with([(200, {}, not_an_object), (200, {}, no_list)])
        for call in (lambda: wt.clicks.retrieve("clk_1"), lambda: wt.clicks.list()):
            with self.assertRaises(WaytrackError) as raised:
                call()
            self.assertEqual((raised.exception.code, raised.exception.status), ("invalid_response", 200))

    def test_retried_5xx_then_success_keeps_the_idempotency_key(self):
        unavailable = (503, {}, error_envelope("service_unavailable", "db away"))
        wt, server = self.run_with([unavailable])
        result = wt.track.click(fbclid="a", store_id="st_1", landing_page="https://x.example/")
        self.assertEqual(result.echo.path, "/v1/track/click")
        keys = [r["headers"]["idempotency-key"] for r in server.requests]
        self.assertEqual(len(keys), 2)
        self.assertEqual(keys[0], keys[1])

    def test_retry_after_beyond_a_minute_is_not_waited_for(self):
        limited = (429, {"Retry-After": "3600"}, error_envelope("rate_limit_exceeded", "slow down"))
        wt, server = self.run_with([limited])
        with self.assertRaises(WaytrackError) as raised:
            wt.stores.list()
        self.assertEqual(raised.exception.status, 429)
        self.assertEqual(len(server.requests), 1)

    def test_max_retries_zero(self):
        wt, server = self.run_with([(500, {}, error_envelope("internal_error", "oops"))], max_retries=0)
        with self.assertRaises(WaytrackError) as raised:
            wt.stores.list()
        self.assertEqual(raised.exception.code, "internal_error")
        self.assertEqual(len(server.requests), 1)

    def test_timeout_is_retried_then_a_connection_error(self):
        wt, server = self.run_with(["hang", "hang"], timeout=0.2, max_retries=1)
        with self.assertRaises(WaytrackConnectionError) as raised:
            wt.track.click(fbclid="a", store_id="st_1", landing_page="https://x.example/")
        self.assertEqual(raised.exception.code, "connection_error")
        self.assertIsNone(raised.exception.status)
        self.assertIn("2 attempt(s)", raised.exception.message)
        self.assertIsInstance(raised.exception.__cause__, OSError)  # socket.timeout / TimeoutError
        self.assertEqual(len(server.requests), 2)
        self.assertEqual(
            server.requests[0]["headers"]["idempotency-key"], server.requests[1]["headers"]["idempotency-key"]
        )

    def test_timeout_then_success(self):
        wt, server = self.run_with(["hang"], timeout=0.2, max_retries=1)
        result = wt.request("GET", "/stores")
        self.assertEqual(result.echo.path, "/v1/stores")
        self.assertEqual(len(server.requests), 2)


class ConfigurationTest(unittest.TestCase):
    def test_invalid_options(self):
        for options in ({"api_key": ""}, {"api_key": "k", "max_retries": -1}, {"api_key": "k", "timeout": 0}):
            with self.assertRaises(ValueError, msg=str(options)):
                Waytrack(**options)
        with self.assertRaises(ValueError):
            Waytrack("k", base_url="localhost:8443/v1")

    def test_defaults(self):
        wt = Waytrack("wt_test_key")
        self.assertEqual((wt.base_url, wt.timeout, wt.max_retries), ("https://localhost:8443/v1", 10, 2))
        for name in ("track", "stores", "conversions", "clicks", "analytics", "ad_spend"):
            self.assertTrue(hasattr(wt, name), name)


if __name__ == "__main__":
    unittest.main()
