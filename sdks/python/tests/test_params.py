"""Argument conversion: snake_case → camelCase at the top level only, JSON and query encoding."""

import datetime
import decimal
import json
import unittest

from waytrack._params import UNSET, api_fields, json_body, path_segment, query_string, to_camel, to_snake


class CasingTest(unittest.TestCase):
    def test_to_camel(self):
        self.assertEqual(to_camel("store_id"), "storeId")
        self.assertEqual(to_camel("event_source_url"), "eventSourceUrl")
        self.assertEqual(to_camel("attribution_window_days"), "attributionWindowDays")
        self.assertEqual(to_camel("fbclid"), "fbclid")
        self.assertEqual(to_camel("storeId"), "storeId")

    def test_to_snake(self):
        self.assertEqual(to_snake("conversionId"), "conversion_id")
        self.assertEqual(to_snake("isBot"), "is_bot")
        self.assertEqual(to_snake("fbclid"), "fbclid")


class ApiFieldsTest(unittest.TestCase):
    def test_top_level_names_are_converted_and_nested_ones_kept(self):
        body = api_fields(
            {
                "store_id": "st_1",
                "customer_data": {"email": "a@b.c", "firstName": "Ann", "zip_code": "as given"},
                "products": [{"productId": "p1", "unit_price": 1}],
            }
        )
        self.assertEqual(
            body,
            {
                "storeId": "st_1",
                "customerData": {"email": "a@b.c", "firstName": "Ann", "zip_code": "as given"},
                "products": [{"productId": "p1", "unit_price": 1}],
            },
        )

    def test_unset_and_none_are_left_out(self):
        self.assertEqual(
            api_fields({"a": UNSET, "b": None, "c": 0, "d": False, "e": ""}), {"c": 0, "d": False, "e": ""}
        )

    def test_keep_none_sends_null_but_not_unset(self):
        self.assertEqual(api_fields({"pixel_id": None, "name": UNSET}, keep_none=True), {"pixelId": None})

    def test_unset_is_falsy_and_unique(self):
        self.assertFalse(UNSET)
        self.assertIs(type(UNSET)(), UNSET)


class JsonBodyTest(unittest.TestCase):
    def test_dates_times_and_decimals(self):
        when = datetime.datetime(2026, 11, 22, 9, 58, tzinfo=datetime.timezone.utc)
        body = json.loads(
            json_body({"timestamp": when, "date": datetime.date(2026, 11, 1), "eventValue": decimal.Decimal("49.99")})
        )
        self.assertEqual(body, {"timestamp": "2026-11-22T09:58:00+00:00", "date": "2026-11-01", "eventValue": 49.99})
        self.assertIn(b'"eventValue":49.99', json_body({"eventValue": decimal.Decimal("49.99")}))

    def test_naive_datetime_is_refused(self):
        with self.assertRaises(TypeError):
            json_body({"timestamp": datetime.datetime(2026, 11, 22, 9, 58)})

    def test_unknown_types_are_refused(self):
        with self.assertRaises(TypeError):
            json_body({"x": object()})

    def test_utf8(self):
        self.assertEqual(json_body({"name": "Café"}), '{"name":"Café"}'.encode())


class QueryTest(unittest.TestCase):
    def test_values(self):
        self.assertEqual(query_string({}), "")
        self.assertEqual(query_string(None), "")
        self.assertEqual(
            query_string({"attributed": True, "startDate": datetime.date(2026, 1, 2), "limit": 5}),
            "?attributed=true&startDate=2026-01-02&limit=5",
        )
        self.assertEqual(query_string({"attributed": False}), "?attributed=false")

    def test_escaping(self):
        self.assertEqual(query_string({"cursor": "a+b/c=&d"}), "?cursor=a%2Bb%2Fc%3D%26d")

    def test_path_segment(self):
        self.assertEqual(path_segment("st_1", "store_id"), "st_1")
        self.assertEqual(path_segment("../x?y", "store_id"), "..%2Fx%3Fy")
        for bad in ("", None, 5):
            with self.assertRaises(ValueError):
                path_segment(bad, "store_id")  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
