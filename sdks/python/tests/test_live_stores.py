"""Stores against the real server: create, retrieve, list, update (including deactivate)."""

import unittest

from waytrack import ApiObject, WaytrackError

from _live import TEST_KEY, client, new_store, unique


class StoresTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wt = client()

    def test_create_and_retrieve(self):
        name = unique("Acme ")
        store = self.wt.stores.create(
            name=name,
            domain="shop.acme.example",
            platform="shopify",
            currency="EUR",
            timezone="Europe/Paris",
            attribution_window_days=14,
            min_confidence=60,
        )
        self.assertIsInstance(store, ApiObject)
        self.assertTrue(store.id.startswith("st_"))
        self.assertEqual(
            (store.name, store.domain, store.platform, store.currency, store.timezone),
            (name, "shop.acme.example", "shopify", "EUR", "Europe/Paris"),
        )
        self.assertEqual((store.attribution_window_days, store["minConfidence"]), (14, 60))
        self.assertEqual((store.status, store.capi_configured), ("active", False))
        self.assertEqual(self.wt.stores.retrieve(store.id), store)

    def test_write_only_token_is_never_returned(self):
        store = new_store(self.wt, pixel_id="123456789012345", capi_access_token="secret-token")
        self.assertTrue(store.capi_configured)
        self.assertEqual(store.pixel_id, "123456789012345")
        self.assertNotIn("capiAccessToken", store)
        cleared = self.wt.stores.update(store.id, pixel_id=None)
        self.assertIsNone(cleared.pixel_id)
        self.assertFalse(cleared.capi_configured)

    def test_update_and_deactivate(self):
        store = new_store(self.wt)
        renamed = self.wt.stores.update(store.id, name="Renamed", min_confidence=70)
        self.assertEqual((renamed.id, renamed.name, renamed.min_confidence), (store.id, "Renamed", 70))
        inactive = self.wt.stores.update(store.id, status="inactive")
        self.assertEqual(inactive.status, "inactive")
        # An inactive store is still readable but takes no tracking.
        self.assertEqual(self.wt.stores.retrieve(store.id).status, "inactive")
        with self.assertRaises(WaytrackError) as raised:
            self.wt.track.click(fbclid=unique("fb"), store_id=store.id, landing_page="https://x.example/")
        self.assertEqual((raised.exception.code, raised.exception.status), ("store_not_found", 404))
        self.assertEqual(self.wt.stores.update(store.id, status="active").status, "active")

    def test_list_and_status_filter(self):
        active = new_store(self.wt)
        inactive = new_store(self.wt)
        self.wt.stores.update(inactive.id, status="inactive")
        first = self.wt.stores.list(limit=100)
        self.assertIn(active.id, [s.id for s in first.items])
        self.assertEqual(first["stores"], first.items)
        only_inactive = [s.id for s in self.wt.stores.list_all(status="inactive", limit=1)]
        self.assertIn(inactive.id, only_inactive)
        self.assertNotIn(active.id, only_inactive)
        self.assertEqual(len(only_inactive), len(set(only_inactive)))

    def test_test_key_sees_the_same_stores(self):
        store = new_store(self.wt)
        self.assertEqual(client(api_key=TEST_KEY).stores.retrieve(store.id).id, store.id)


if __name__ == "__main__":
    unittest.main()


class DestinationsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wt = client()

    def test_put_list_delete(self):
        store = new_store(self.wt)
        listed = self.wt.stores.destinations.list(store.id)
        self.assertEqual([d.kind for d in listed.destinations], ["meta", "google_ads", "tiktok", "microsoft", "reddit", "linkedin", "pinterest", "snapchat"])
        tiktok = self.wt.stores.destinations.put(
            store.id, "tiktok", {"pixelCode": "CPYTHON12345678", "accessToken": "tt-secret-python"}
        )
        self.assertTrue(tiktok.configured)
        self.assertEqual(tiktok.settings["pixelCode"], "CPYTHON12345678")
        self.assertNotIn("tt-secret-python", repr(tiktok))
        with self.assertRaises(WaytrackError) as raised:
            self.wt.stores.destinations.put(store.id, "google_ads", {"customerId": "12"})
        self.assertEqual(raised.exception.details["field"], "customerId")
        removed = self.wt.stores.destinations.delete(store.id, "tiktok")
        self.assertFalse(removed.configured)

    def test_click_ids(self):
        store = new_store(self.wt)
        click = self.wt.track.click(store_id=store.id, landing_page="https://shop.example/p", gclid=unique("G-"))
        self.assertTrue(click.gclid.startswith("G-"))
        self.assertNotIn("fbclid", click)
