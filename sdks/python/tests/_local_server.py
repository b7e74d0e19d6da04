"""A local plain-HTTP server for the tests that need exact control of the wire (no Waytrack server).

It records every request and answers from a script: a list of (status, headers, body) or
"hang" (never answer in time), then the default: 200 with an envelope whose data echoes the
request. The real server is used by the test_live_* modules; this one shows what the real
server cannot: the exact bytes sent, timeouts and answers that are not the API's envelope.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LocalServer:
    def __init__(self, script=None):
        self.script = list(script or [])
        self.requests = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                seen = {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": json.loads(raw) if raw else None,
                }
                with owner.lock:
                    owner.requests.append(seen)
                    step = owner.script.pop(0) if owner.script else None
                if step == "hang":
                    time.sleep(1.0)
                    return
                if step is None:
                    # The echo, plus an empty page under every list field, so list calls parse too.
                    data = {"echo": seen, "hasMore": False, "nextCursor": None}
                    data.update({field: [] for field in ("stores", "clicks", "conversions", "entries", "groups")})
                    envelope = {"success": True, "data": data, "meta": {"requestId": "req_local"}}
                    step = (200, {}, json.dumps(envelope).encode())
                status, headers, body = step
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PATCH = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def error_envelope(code, message, details=None):
    error = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return json.dumps({"success": False, "error": error, "meta": {"requestId": "req_err"}}).encode()
