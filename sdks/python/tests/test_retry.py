"""Backoff and Retry-After, as pure functions."""

import datetime
import unittest

from waytrack._retry import backoff_delay, is_retryable_status, parse_retry_after, retry_delay


class BackoffTest(unittest.TestCase):
    def test_exponential_ceiling_with_full_jitter(self):
        def top():
            return 1.0  # the largest draw the jitter can make

        self.assertEqual([backoff_delay(n, 0.5, 8.0, top) for n in range(6)], [0.5, 1.0, 2.0, 4.0, 8.0, 8.0])
        self.assertEqual(backoff_delay(3, 0.5, 8.0, lambda: 0.0), 0.0)
        self.assertEqual(backoff_delay(2, 0.5, 8.0, lambda: 0.25), 0.5)

    def test_real_jitter_stays_in_range_and_varies(self):
        draws = [backoff_delay(2, 0.5, 8.0) for _ in range(200)]
        self.assertTrue(all(0.0 <= d <= 2.0 for d in draws))
        self.assertGreater(len(set(draws)), 100)

    def test_retry_after_is_a_floor(self):
        self.assertEqual(retry_delay(0, 3.0, 0.5, 8.0, lambda: 1.0), 3.0)
        self.assertEqual(retry_delay(4, 1.0, 0.5, 8.0, lambda: 1.0), 8.0)
        self.assertEqual(retry_delay(0, None, 0.5, 8.0, lambda: 0.5), 0.25)


class RetryAfterTest(unittest.TestCase):
    def test_seconds(self):
        self.assertEqual(parse_retry_after("1"), 1.0)
        self.assertEqual(parse_retry_after(" 2.5 "), 2.5)
        self.assertEqual(parse_retry_after("-3"), 0.0)

    def test_http_date(self):
        now = datetime.datetime(2026, 11, 22, 10, 0, 0, tzinfo=datetime.timezone.utc)
        self.assertEqual(parse_retry_after("Sun, 22 Nov 2026 10:00:05 GMT", now), 5.0)
        self.assertEqual(parse_retry_after("Sun, 22 Nov 2026 09:00:00 GMT", now), 0.0)

    def test_absent_or_unreadable(self):
        for value in (None, "", "soon", "nan"):
            self.assertIsNone(parse_retry_after(value), value)

    def test_retryable_statuses(self):
        self.assertEqual([s for s in (200, 400, 401, 403, 404, 409, 413, 429) if is_retryable_status(s)], [429])
        self.assertTrue(all(is_retryable_status(s) for s in (500, 502, 503, 504)))


if __name__ == "__main__":
    unittest.main()
