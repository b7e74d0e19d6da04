"""Error types against the real server: 401, 404, 400 with code and details.field, connection errors, TLS."""

import pathlib
import ssl
import unittest

from waytrack import Waytrack, WaytrackConnectionError, WaytrackError

from _live import BASE_URL, CA_FILE, DEAD_URL, LIVE_KEY, client, new_store, unique


class ApiErrorsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wt = client()
        cls.store = new_store(cls.wt)

    def assert_api_error(self, raised, code, status):
        error = raised.exception
        self.assertIs(type(error), WaytrackError)
        self.assertEqual((error.code, error.status), (code, status))
        self.assertTrue(error.request_id.startswith("req_"), error.request_id)
        self.assertTrue(error.message)
        return error

    def test_unauthorized(self):
        with self.assertRaises(WaytrackError) as raised:
            client(api_key="wt_live_" + "x" * 40).stores.list()
        self.assert_api_error(raised, "unauthorized", 401)

    def test_not_found(self):
        with self.assertRaises(WaytrackError) as raised:
            self.wt.stores.retrieve("st_00000000000000000000000000")
        self.assert_api_error(raised, "store_not_found", 404)
        with self.assertRaises(WaytrackError) as raised:
            self.wt.conversions.retrieve("conv_00000000000000000000000000")
        self.assert_api_error(raised, "not_found", 404)
        with self.assertRaises(WaytrackError) as raised:
            self.wt.clicks.retrieve("clk_00000000000000000000000000")
        self.assert_api_error(raised, "not_found", 404)

    def test_missing_required_field(self):
        with self.assertRaises(WaytrackError) as raised:
            self.wt.track.click(fbclid=unique("fb"), store_id=self.store.id, landing_page="")
        error = self.assert_api_error(raised, "missing_required_field", 400)
        self.assertEqual(error.details.field, "landingPage")
        self.assertEqual(error.details["reason"], "required_field_missing")

    def test_invalid_values_name_their_field(self):
        conversion = {"store_id": self.store.id, "event_type": "Purchase", "order_id": unique("o-"), "event_value": 1}
        with self.assertRaises(WaytrackError) as raised:
            self.wt.track.conversion(**conversion, currency="DOLLARS")
        self.assertEqual(self.assert_api_error(raised, "invalid_currency", 400).details.field, "currency")
        with self.assertRaises(WaytrackError) as raised:
            self.wt.track.conversion(
                **conversion, currency="USD", products=[{"productId": "a"}, {"productId": "b", "quantity": 0}]
            )
        error = self.assert_api_error(raised, "invalid_request", 400)
        self.assertEqual(error.details.field, "products[1].quantity")
        with self.assertRaises(WaytrackError) as raised:
            self.wt.track.click(fbclid="not valid!", store_id=self.store.id, landing_page="https://x.example/")
        self.assertEqual(self.assert_api_error(raised, "invalid_fbclid", 400).details.field, "fbclid")
        with self.assertRaises(WaytrackError) as raised:
            self.wt.clicks.list(limit=1000)
        self.assertEqual(self.assert_api_error(raised, "invalid_request", 400).details.field, "limit")


class ConnectionErrorsTest(unittest.TestCase):
    def test_nothing_listening(self):
        with self.assertRaises(WaytrackConnectionError) as raised:
            client(DEAD_URL, max_retries=1).stores.list()
        error = raised.exception
        self.assertIsInstance(error, WaytrackError)
        self.assertEqual((error.code, error.status), ("connection_error", None))
        self.assertIn("2 attempt(s)", error.message)
        self.assertIsInstance(error.__cause__, ConnectionError)

    def test_self_signed_certificate_is_refused_without_the_ca_option(self):
        wt = Waytrack(LIVE_KEY, BASE_URL, initial_backoff=0.001, max_backoff=0.002)
        with self.assertRaises(WaytrackConnectionError) as raised:
            wt.stores.list()
        self.assertIsInstance(raised.exception.__cause__, ssl.SSLCertVerificationError)
        self.assertIn("ca_file", raised.exception.message)

    def test_ca_data_as_text_or_bytes(self):
        pem = pathlib.Path(CA_FILE).read_bytes()
        der = ssl.PEM_cert_to_DER_cert(pem.decode("ascii"))
        for kind, ca_data in (("PEM bytes", pem), ("PEM text", pem.decode("ascii")), ("DER bytes", der)):
            with self.subTest(kind=kind):
                wt = client(ca_file=None, ca_data=ca_data)
                self.assertIsInstance(wt.stores.list(limit=1).items, list)


if __name__ == "__main__":
    unittest.main()
