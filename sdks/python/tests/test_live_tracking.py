"""Clicks and conversions against the real server: attribution, duplicates, retrieval, modes."""

import re
import unittest

from waytrack import WaytrackError

from _live import TEST_KEY, client, new_store, unique


class TrackingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wt = client()
        cls.store = new_store(cls.wt)

    def click(self, **fields):
        fbclid = unique("IwAR")
        fields.setdefault("landing_page", f"https://shop.example.com/p/1?utm_source=facebook&fbclid={fbclid}")
        return self.wt.track.click(fbclid=fbclid, store_id=self.store.id, **fields)

    def test_click_and_duplicate(self):
        first = self.click(ip_address="203.0.113.7", user_agent="Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0")
        self.assertTrue(first.click_id.startswith("clk_"))
        self.assertEqual((first.tracked, first.duplicate), (True, False))
        again = self.wt.track.click(
            fbclid=first.fbclid, store_id=self.store.id, landing_page="https://shop.example.com/"
        )
        self.assertEqual((again.click_id, again.duplicate), (first.click_id, True))

        stored = self.wt.clicks.retrieve(first.click_id)
        self.assertEqual(
            (stored.click_id, stored.store_id, stored.fbclid), (first.click_id, self.store.id, first.fbclid)
        )
        self.assertEqual(stored.utm.source, "facebook")
        self.assertEqual(stored.ip_address, "203.0.113.7")
        self.assertRegex(stored.fbc, rf"^fb\.1\.\d{{13}}\.{re.escape(first.fbclid)}$")
        self.assertEqual((stored.is_bot, stored.livemode), (False, True))

    def test_identify_links_a_browser_to_an_email(self):
        visitor = unique("wt.py-")
        click = self.click(visitor_id=visitor, ip_address="198.51.100.71")
        linked = self.wt.track.identify(store_id=self.store.id, visitor_id=visitor, email=" Py.Buyer@Example.com")
        self.assertEqual((linked.identified, linked.links, linked.duplicate), (True, 1, False))
        again = self.wt.track.identify(store_id=self.store.id, visitor_id=visitor, email="py.buyer@example.com")
        self.assertTrue(again.duplicate)
        conversion = self.wt.track.conversion(
            store_id=self.store.id,
            event_type="Purchase",
            order_id=unique("order-"),
            event_value=10,
            currency="USD",
            customer_data={"email": "py.buyer@example.com"},
            ip_address="203.0.113.71",
        )
        self.assertEqual((conversion.attributed, conversion.attributed_to.click_id), (True, click.click_id))
        with self.assertRaises(WaytrackError) as caught:
            self.wt.track.identify(store_id=self.store.id, email="x@example.com")
        self.assertEqual((caught.exception.code, caught.exception.details["field"]), ("missing_required_field", "visitorId"))

    def test_conversion_attributed_to_the_click_and_duplicate(self):
        click = self.click()
        order_id = unique("order-")
        conversion = self.wt.track.conversion(
            store_id=self.store.id,
            event_type="Purchase",
            order_id=order_id,
            event_value=49.99,
            currency="USD",
            fbclid=click.fbclid,
            customer_data={"email": " Ann@Example.com ", "firstName": "Ann"},
            products=[{"productId": "sku-1", "price": 49.99, "quantity": 1}],
        )
        self.assertEqual(conversion["conversionId"], conversion.conversion_id)
        self.assertTrue(conversion.conversion_id.startswith("conv_"))
        self.assertEqual(
            (conversion.event_type, conversion.attributed, conversion.duplicate), ("Purchase", True, False)
        )
        self.assertEqual(conversion.attributed_to.click_id, click.click_id)
        self.assertEqual(conversion.attributed_to["fbclid"], click.fbclid)
        self.assertEqual(conversion.attributed_to.confidence_score, 100)
        self.assertFalse(conversion.capi_sent)

        again = self.wt.track.conversion(
            store_id=self.store.id, event_type="Purchase", order_id=order_id, event_value=49.99, currency="USD"
        )
        self.assertEqual((again.conversion_id, again.duplicate), (conversion.conversion_id, True))
        self.assertEqual(again.attributed_to.click_id, click.click_id)

        stored = self.wt.conversions.retrieve(conversion.conversion_id)
        self.assertEqual((stored.order_id, stored.event_value, stored.currency), (order_id, 49.99, "USD"))
        self.assertEqual(stored.products[0].product_id, "sku-1")
        self.assertEqual(stored.attribution.signal, "explicit")
        self.assertEqual([t.click_id for t in stored.attribution.touchpoints], [click.click_id])
        self.assertEqual(stored.capi.status, "skipped")
        # Raw customer data is never returned.
        self.assertNotIn("Ann@Example.com", repr(stored))

    def test_unattributed_conversion(self):
        result = self.wt.track.conversion(
            store_id=self.store.id, event_type="signup", order_id=unique("lead-"), event_value=0, currency="usd"
        )
        self.assertFalse(result.attributed)
        self.assertNotIn("attributedTo", result)
        with self.assertRaises(AttributeError):
            _ = result.attributed_to

    def test_consent_is_sent_and_shown(self):
        clicked = self.click(consent={"adStorage": "denied"}, limited_data_use=True)
        self.assertEqual(self.wt.clicks.retrieve(clicked.click_id).consent.ad_storage, "denied")
        result = self.wt.track.conversion(
            store_id=self.store.id,
            event_type="Purchase",
            order_id=unique("consent-"),
            event_value=1,
            currency="usd",
            consent={"adUserData": "denied"},
            limited_data_use={"country": "US", "state": "CA"},
        )
        stored = self.wt.conversions.retrieve(result.conversion_id)
        self.assertEqual(
            dict(stored.consent), {"adStorage": "granted", "adUserData": "denied", "adPersonalization": "granted"}
        )
        self.assertEqual(dict(stored.limited_data_use), {"country": "US", "state": "CA"})

    def test_test_mode_is_separate(self):
        click = self.click()
        test_wt = client(api_key=TEST_KEY)
        result = test_wt.track.conversion(
            store_id=self.store.id,
            event_type="Purchase",
            order_id=unique("t-"),
            event_value=5,
            currency="USD",
            fbclid=click.fbclid,
        )
        self.assertFalse(result.attributed)  # a live click never attributes a test conversion
        with self.assertRaises(WaytrackError) as raised:
            test_wt.clicks.retrieve(click.click_id)
        self.assertEqual(raised.exception.status, 404)


if __name__ == "__main__":
    unittest.main()


class BatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wt = client()
        cls.store = new_store(cls.wt)

    def test_batch_records_in_order_with_one_result_per_event(self):
        fbclid = unique("IwAR")
        result = self.wt.track.batch(
            [
                {"type": "click", "store_id": self.store.id, "fbclid": fbclid, "landing_page": "https://shop.example.com/"},
                {
                    "type": "conversion",
                    "storeId": self.store.id,
                    "eventType": "Purchase",
                    "orderId": unique("order-"),
                    "eventValue": 12.5,
                    "currency": "EUR",
                    "fbclid": fbclid,
                    "customerData": {"email": "ann@example.com"},
                },
                {"type": "click", "store_id": self.store.id, "fbclid": "not valid", "landing_page": "https://x.example/"},
            ]
        )
        self.assertEqual((result.received, result.failed), (3, 1))
        click, conversion, bad = result.results
        self.assertEqual((click.index, click.status, click.data.fbclid), (0, 200, fbclid))
        self.assertEqual(conversion.data.attributed_to.click_id, click.data.click_id)
        self.assertEqual((bad.index, bad.status, bad.error.code), (2, 400, "invalid_fbclid"))
        self.assertEqual(bad.error.details.field, "fbclid")

    def test_batch_request_errors_raise(self):
        with self.assertRaises(WaytrackError) as caught:
            self.wt.track.batch([])
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_request"))
        self.assertEqual(caught.exception.details["field"], "events")
