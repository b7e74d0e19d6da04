"""Results: dicts keyed by the API's names that answer snake_case attributes; pages."""

import copy
import json
import pickle
import unittest

from waytrack import ApiObject, Page
from waytrack.objects import wrap


class ApiObjectTest(unittest.TestCase):
    def setUp(self):
        self.obj = wrap(
            {
                "conversionId": "conv_1",
                "attributedTo": {"clickId": "clk_1", "confidenceScore": 100},
                "products": [{"productId": "p1"}, {"productId": "p2"}],
                "revenueByCurrency": {"EUR": 3.5},
                "items": "a field named like a dict method",
            }
        )

    def test_keys_and_snake_case_attributes(self):
        self.assertEqual(self.obj["conversionId"], "conv_1")
        self.assertEqual(self.obj.conversion_id, self.obj["conversionId"])
        self.assertEqual(self.obj.conversionId, "conv_1")

    def test_recursive(self):
        self.assertIsInstance(self.obj.attributed_to, ApiObject)
        self.assertEqual(self.obj.attributed_to.confidence_score, 100)
        self.assertEqual([p.product_id for p in self.obj.products], ["p1", "p2"])
        self.assertEqual(self.obj.revenue_by_currency.EUR, 3.5)

    def test_unknown_attribute(self):
        with self.assertRaises(AttributeError) as raised:
            _ = self.obj.nope
        self.assertIn("conversionId", str(raised.exception))

    def test_dict_methods_win_and_keys_still_work(self):
        self.assertTrue(callable(self.obj.items))
        self.assertEqual(self.obj["items"], "a field named like a dict method")

    def test_still_a_plain_dict(self):
        self.assertIsInstance(self.obj, dict)
        self.assertEqual(json.loads(json.dumps(self.obj))["attributedTo"]["clickId"], "clk_1")
        self.assertEqual(pickle.loads(pickle.dumps(self.obj)), self.obj)
        self.assertEqual(copy.deepcopy(self.obj).attributed_to.click_id, "clk_1")
        self.assertIn("conversion_id", dir(self.obj))

    def test_scalars_and_lists(self):
        self.assertIsNone(wrap(None))
        self.assertEqual(wrap([1, {"a": 1}])[1].a, 1)


class PageTest(unittest.TestCase):
    def setUp(self):
        self.page = Page(
            wrap({"stores": [{"id": "st_1"}, {"id": "st_2"}], "hasMore": True, "nextCursor": "c1"}), "stores"
        )

    def test_items_and_cursor(self):
        self.assertEqual([s.id for s in self.page.items], ["st_1", "st_2"])
        self.assertTrue(self.page.has_more)
        self.assertEqual(self.page.next_cursor, "c1")
        self.assertEqual(len(self.page), 2)
        self.assertEqual([s["id"] for s in self.page], ["st_1", "st_2"])
        self.assertEqual(self.page[1].id, "st_2")

    def test_reads_through_to_the_response(self):
        self.assertIs(self.page["items"], self.page.items)
        self.assertEqual(self.page["stores"], self.page.items)
        self.assertEqual(self.page["hasMore"], True)
        self.assertEqual(self.page.stores, self.page.items)
        self.assertEqual(self.page.to_dict()["nextCursor"], "c1")

    def test_last_page(self):
        page = Page(wrap({"clicks": [], "hasMore": False, "nextCursor": None}), "clicks")
        self.assertFalse(page.has_more)
        self.assertIsNone(page.next_cursor)
        self.assertEqual(list(page), [])

    def test_pickle(self):
        self.assertEqual(pickle.loads(pickle.dumps(self.page)).items, self.page.items)


if __name__ == "__main__":
    unittest.main()
