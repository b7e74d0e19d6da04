"""Pages and the auto-paginating iterators against the real server (through the proxy, to count pages)."""

import inspect
import unittest

from _live import PROXY_URL, Proxy, client, new_store, unique


class ListsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wt = client()
        cls.store = new_store(cls.wt)
        cls.click_ids = []
        for _ in range(5):
            fbclid = unique("fb")
            click = cls.wt.track.click(
                fbclid=fbclid, store_id=cls.store.id, landing_page=f"https://x.example/?fbclid={fbclid}"
            )
            cls.click_ids.append(click.click_id)
        cls.conversion_ids = []
        for n in range(3):
            conversion = cls.wt.track.conversion(
                store_id=cls.store.id, event_type="Lead", order_id=unique("lead-"), event_value=n, currency="USD"
            )
            cls.conversion_ids.append(conversion.conversion_id)

    def test_one_page_then_the_next(self):
        first = self.wt.clicks.list(store_id=self.store.id, limit=2)
        self.assertEqual(len(first.items), 2)
        self.assertTrue(first.has_more)
        self.assertIsInstance(first.next_cursor, str)
        self.assertEqual(first["clicks"], first.items)
        self.assertEqual(first["hasMore"], True)
        second = self.wt.clicks.list(store_id=self.store.id, limit=2, cursor=first.next_cursor)
        third = self.wt.clicks.list(store_id=self.store.id, limit=2, cursor=second.next_cursor)
        self.assertFalse(third.has_more)
        self.assertIsNone(third.next_cursor)
        clicks = [c for page in (first, second, third) for c in page]
        self.assertEqual(sorted(c.click_id for c in clicks), sorted(self.click_ids))
        # Newest first (clicks made in the same millisecond may come in either order).
        times = [c.timestamp for c in clicks]
        self.assertEqual(times, sorted(times, reverse=True))

    def test_list_all_walks_every_page(self):
        proxy = Proxy()
        proxy.reset()
        walk = client(PROXY_URL).clicks.list_all(store_id=self.store.id, limit=2)
        self.assertTrue(inspect.isgenerator(walk))
        ids = [c.click_id for c in walk]
        self.assertEqual(sorted(ids), sorted(self.click_ids))
        self.assertEqual(len(ids), len(set(ids)))
        pages = proxy.requests("GET", "/v1/clicks")
        self.assertEqual(len(pages), 3)
        self.assertNotIn("cursor=", pages[0]["path"])
        self.assertTrue(all("cursor=" in p["path"] and "limit=2" in p["path"] for p in pages[1:]))

    def test_conversions_list_and_filters(self):
        page = self.wt.conversions.list(store_id=self.store.id, limit=2)
        self.assertEqual(len(page), 2)
        self.assertTrue(page.has_more)
        every = [c.conversion_id for c in self.wt.conversions.list_all(store_id=self.store.id, limit=2)]
        self.assertEqual(sorted(every), sorted(self.conversion_ids))
        attributed = list(self.wt.conversions.list_all(store_id=self.store.id, attributed=True))
        self.assertEqual(attributed, [])
        leads = list(self.wt.conversions.list_all(store_id=self.store.id, event_type="Lead", attributed=False, limit=1))
        self.assertEqual(len(leads), 3)
        self.assertEqual(list(self.wt.conversions.list_all(store_id=self.store.id, event_type="Purchase")), [])

    def test_stores_list_all(self):
        ids = [s.id for s in self.wt.stores.list_all(limit=1)]
        self.assertIn(self.store.id, ids)
        self.assertEqual(len(ids), len(set(ids)))


if __name__ == "__main__":
    unittest.main()
