import base64
import hashlib
import hmac
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

    def test_accepts_the_bare_base64_secret_and_any_one_of_several_signatures(self):
        self.assertEqual(verify_webhook(BODY, HEADERS, SECRET[len("whsec_"):], now=NOW), {"test": 2432232314})
        only_wrong = dict(HEADERS, **{"Webhook-Signature": "v1,bm9ldHRoZXNpZ25hdHVyZQ== v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="})
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(BODY, only_wrong, SECRET, now=NOW)

    def test_a_timestamp_is_digits_only(self):
        for timestamp in ("+1614265330", " 1614265330", "1_614_265_330", "1614265330\n", ""):
            with self.subTest(timestamp=timestamp), self.assertRaises(WebhookVerificationError):
                verify_webhook(BODY, dict(HEADERS, **{"Webhook-Timestamp": timestamp}), SECRET, now=NOW)

    def test_a_secret_that_is_not_one_is_a_value_error_not_a_refused_request(self):
        for secret in ("", "whsec_", "whsec_not base64!", "whsec_abcde"):
            with self.subTest(secret=secret), self.assertRaises(ValueError) as raised:
                verify_webhook(BODY, HEADERS, secret, now=NOW)
            self.assertNotIsInstance(raised.exception, WebhookVerificationError)

    def test_keeps_integers_beyond_2_53_exact(self):
        body = b'{"data": {"id": 820982911946154508, "line": 12345678901234567890}}'
        signed = b"msg_1.1614265330." + body
        key = base64.b64decode(SECRET[len("whsec_"):])
        signature = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        headers = {"webhook-id": "msg_1", "webhook-timestamp": "1614265330", "webhook-signature": signature}
        event = verify_webhook(body, headers, SECRET, now=NOW)
        self.assertEqual(event["data"], {"id": 820982911946154508, "line": 12345678901234567890})


if __name__ == "__main__":
    unittest.main()
