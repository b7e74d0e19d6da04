"""Metrics, timeseries, breakdown and ad spend against the real server, on a store of their own."""

import datetime
import unittest

from _live import PROXY_URL, Proxy, client, new_store, unique


def today():
    # The store's time zone is UTC, so its "today" is UTC's.
    return datetime.datetime.now(datetime.timezone.utc).date()


class AnalyticsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wt = client()
        cls.store = new_store(cls.wt)
        cls.start = today() - datetime.timedelta(days=1)
        cls.end = today() + datetime.timedelta(days=1)
        facebook = unique("fb")
        google = unique("g")
        cls.wt.track.click(
            fbclid=facebook,
            store_id=cls.store.id,
            landing_page=f"https://x.example/?utm_source=facebook&fbclid={facebook}",
        )
        cls.wt.track.click(
            fbclid=google, store_id=cls.store.id, landing_page=f"https://x.example/?utm_source=google&fbclid={google}"
        )
        purchase = {"store_id": cls.store.id, "event_type": "Purchase", "currency": "USD"}
        cls.wt.track.conversion(**purchase, order_id=unique("o-"), event_value=49.99, fbclid=facebook)
        cls.wt.track.conversion(**purchase, order_id=unique("o-"), event_value=0.01)
        cls.wt.track.conversion(**purchase, order_id=unique("o-"), event_value=0.1)
        cls.wt.track.conversion(**purchase, order_id=unique("o-"), event_value=0.2)

    def test_metrics(self):
        m = self.wt.analytics.metrics(store_id=self.store.id, start_date=self.start, end_date=self.end)
        self.assertEqual((m.store_id, m.currency, m.timezone), (self.store.id, "USD", "UTC"))
        self.assertEqual((m.start_date, m.end_date), (self.start.isoformat(), self.end.isoformat()))
        self.assertEqual((m.total_clicks, m.total_conversions, m.attributed_conversions), (2, 4, 1))
        self.assertEqual((m.total_revenue, m.attributed_revenue), (50.3, 49.99))
        self.assertEqual((m.conversion_rate, m.average_order_value), (50.0, 12.58))
        self.assertEqual(m["adSpend"], 0)
        self.assertIsNone(m.roas)

    def test_ad_spend_upsert_list_and_roas(self):
        store = new_store(self.wt)
        fbclid = unique("fb")
        self.wt.track.click(fbclid=fbclid, store_id=store.id, landing_page=f"https://x.example/?fbclid={fbclid}")
        self.wt.track.conversion(
            store_id=store.id,
            event_type="Purchase",
            order_id=unique("o-"),
            event_value=100,
            currency="USD",
            fbclid=fbclid,
        )
        days = [today() - datetime.timedelta(days=n) for n in range(3)]
        stored = self.wt.ad_spend.upsert(
            store.id, [{"date": day.isoformat(), "amount": 10, "currency": "USD", "campaignId": "c1"} for day in days]
        )
        self.assertEqual(len(stored.entries), 3)
        self.assertTrue(all(e.id.startswith("spend_") and e.platform == "meta" for e in stored.entries))
        # The same (date, platform, campaignId) replaces the entry.
        replaced = self.wt.ad_spend.upsert(
            store.id, [{"date": days[0].isoformat(), "amount": 30, "currency": "USD", "campaignId": "c1"}]
        )
        original = next(e for e in stored.entries if e.date == days[0].isoformat())
        self.assertEqual(replaced.entries[0].id, original.id)

        page = self.wt.ad_spend.list(store.id, start_date=days[-1], end_date=days[0], limit=2)
        self.assertEqual(len(page.items), 2)
        self.assertTrue(page.has_more)
        self.assertEqual(page["entries"], page.items)
        every = list(self.wt.ad_spend.list_all(store.id, start_date=days[-1], end_date=days[0], limit=2))
        self.assertEqual(sorted(e.date for e in every), sorted(d.isoformat() for d in days))
        self.assertEqual({e.date: e.amount for e in every}[days[0].isoformat()], 30)

        m = self.wt.analytics.metrics(store_id=store.id, start_date=days[-1], end_date=days[0])
        self.assertEqual((m.ad_spend, m.attributed_revenue, m.roas), (50, 100, 2.0))

    def test_timeseries(self):
        series = self.wt.analytics.timeseries(
            store_id=self.store.id, start_date=self.start, end_date=self.end, interval="day"
        )
        self.assertEqual(series.interval, "day")
        self.assertEqual(
            [b.label for b in series.buckets], [(self.start + datetime.timedelta(days=n)).isoformat() for n in range(3)]
        )
        self.assertEqual(sum(b.clicks for b in series.buckets), 2)
        self.assertEqual(sum(b.conversions for b in series.buckets), 4)
        self.assertEqual(round(sum(b.attributed_revenue for b in series.buckets), 2), 49.99)

    def test_breakdown_page_and_walk(self):
        query = {"store_id": self.store.id, "by": "utm_source", "start_date": self.start, "end_date": self.end}
        page = self.wt.analytics.breakdown(**query)
        self.assertEqual((page.by, page["model"], page.currency), ("utm_source", "last_click", "USD"))
        groups = {g.value: g for g in page.items}
        self.assertEqual(set(groups), {"facebook", "google"})
        self.assertEqual((groups["facebook"].clicks, groups["facebook"].attributed_revenue), (1, 49.99))
        self.assertEqual((groups["google"].clicks, groups["google"].attributed_conversions), (1, 0))

        proxy = Proxy()
        proxy.reset()
        walked = list(client(PROXY_URL).analytics.breakdown_all(**query, model="linear", limit=1))
        self.assertEqual(sorted(g.value for g in walked), ["facebook", "google"])
        self.assertEqual(len(proxy.requests("GET", "/v1/analytics/breakdown")), 2)


if __name__ == "__main__":
    unittest.main()
