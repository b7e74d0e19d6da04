import json
import unittest

from waytrack import WebhookVerificationError, verify_webhook

# The Standard Webhooks specification's test vector.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
BODY = '{"test": 2432232314}'
HEADERS = {
    "Webhook-Id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "Webhook-Timestamp": "1614265330",
    "Webhook-Signature": "v1,bm9ldHRoZXNpZ25hdHVyZQ== v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
}
NOW = 1614265330 + 10


class VerifyWebhookTest(unittest.TestCase):
    def test_accepts_the_reference_vector_in_any_header_case(self):
        self.assertEqual(verify_webhook(BODY.encode(), HEADERS, SECRET, now=NOW), json.loads(BODY))
        lower = {k.lower(): v for k, v in HEADERS.items()}
        self.assertEqual(verify_webhook(BODY, lower, SECRET, now=NOW), {"test": 2432232314})

    def test_refuses_an_altered_body_another_secret_or_a_missing_header(self):
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY.replace("2", "3"), HEADERS, SECRET, now=NOW)
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, HEADERS, "whsec_" + "A" * 44, now=NOW)
        headers = dict(HEADERS)
        del headers["Webhook-Signature"]
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, headers, SECRET, now=NOW)

    def test_refuses_a_timestamp_outside_the_tolerance(self):
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, HEADERS, SECRET, now=NOW + 600)
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, HEADERS, SECRET, now=NOW - 600)


if __name__ == "__main__":
    unittest.main()
