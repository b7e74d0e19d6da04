"""Spend sources, the channel report, tracking health and cohorts (api.md §11) against the real server."""

import datetime
import unittest

from _live import client, new_store, unique
from waytrack import WaytrackError


def today():
    return datetime.datetime.now(datetime.timezone.utc).date()


class SpendSourcesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wt = client()
        cls.store = new_store(cls.wt)

    def test_connect_list_sync_and_disconnect(self):
        sources = self.wt.stores.spend_sources
        listed = sources.list(self.store.id)
        self.assertEqual([s.kind for s in listed.spend_sources], ["meta", "google_ads", "tiktok"])
        self.assertTrue(all(s.configured is False and s.status == "never" for s in listed.spend_sources))

        put = sources.put(self.store.id, "tiktok", {"advertiserIds": ["7001"], "accessToken": "tt-secret", "backfillDays": 14})
        self.assertEqual((put.kind, put.configured, put.accounts), ("tiktok", True, ["7001"]))
        self.assertEqual(put.settings["backfillDays"], 14)
        self.assertNotIn("tt-secret", repr(put))

        synced = sources.sync(self.store.id, "tiktok")
        self.assertIsNotNone(synced)
        after = sources.delete(self.store.id, "tiktok")
        self.assertFalse(after.configured)

    def test_a_missing_account_names_the_field(self):
        with self.assertRaises(WaytrackError) as raised:
            self.wt.stores.spend_sources.put(self.store.id, "meta", {"accessToken": "x"})
        self.assertEqual(raised.exception.status, 400)
        self.assertEqual(raised.exception.details.get("field"), "adAccountIds")


class ReportsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wt = client()
        cls.store = new_store(cls.wt)
        fbclid = unique("fb")
        cls.wt.track.click(
            fbclid=fbclid, store_id=cls.store.id, landing_page=f"https://x.example/?fbclid={fbclid}&campaign_id=777"
        )
        purchase = {"store_id": cls.store.id, "event_type": "Purchase", "currency": "USD"}
        cls.wt.track.conversion(
            **purchase, order_id=unique("o-"), event_value=40, fbclid=fbclid, customer_data={"email": "a@example.com"}
        )
        cls.wt.track.conversion(
            **purchase,
            order_id=unique("o-"),
            event_value=10,
            customer_data={"email": "b@example.com"},
            ip_address="198.51.100.7",
            user_agent="Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
        )
        cls.wt.ad_spend.upsert(
            cls.store.id,
            [{"date": today().isoformat(), "amount": 20, "currency": "USD", "platform": "meta", "campaignId": "777"}],
        )

    def test_channels(self):
        report = self.wt.analytics.channels(store_id=self.store.id, start_date=today(), end_date=today())
        meta = next(c for c in report.channels if c.channel == "meta")
        self.assertEqual((meta.spend, meta.conversions, meta.revenue, meta.roas), (20, 1, 40, 2))
        self.assertEqual(meta.campaigns[0].campaign_id, "777")
        self.assertEqual(next(c for c in report.channels if c.channel == "unattributed").revenue, 10)
        self.assertEqual((report.totals.spend, report.totals.net_revenue, report.totals.mer), (20, 50, 2.5))

    def test_tracking_health(self):
        health = self.wt.analytics.tracking_health(store_id=self.store.id, start_date=today(), end_date=today())
        self.assertTrue(all(item.type and item.message for item in health["items"]))

    def test_cohorts(self):
        report = self.wt.analytics.cohorts(store_id=self.store.id, by="month")
        month = today().isoformat()[:7]
        cohort = next(c for c in report.cohorts if c.cohort == month)
        self.assertEqual(cohort.customers, 2)
        self.assertEqual(cohort.spend, 20)
        self.assertEqual(cohort.cac, 10)
