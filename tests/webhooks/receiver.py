"""A webhook receiver on loopback for clarion's tests (HOOK-2..4): every
delivery's signature is verified with the Standard Webhooks reference
library (`standardwebhooks` from PyPI), with each secret it was given, and
recorded. What it answers is steered by its control endpoint.

    python3 receiver.py --secret whsec_… [--secret whsec_…]

It prints `listening on <port>` once ready. Routes:
    POST /hook…       a delivery (any path under /hook): verified, recorded,
                      answered as steered
    POST /redirect…   the same, answered 301 to /elsewhere
    POST /gone…       the same, answered 410
    GET  /deliveries  every delivery so far, as JSON, in arrival order
                      (each recorded as it arrives, before it is answered,
                      with `arrived`, its time in Unix seconds, and
                      `concurrent_path`, the deliveries in flight to its
                      path then, itself included)
    POST /control     {"status": 200, "delay": 0.0, "fail": 0}: the status
                      to answer, seconds to wait first, and how many
                      deliveries to answer 500 before that
    POST /secrets     {"secrets": [...]}: verify with these from now on
    GET  /secrets     the secrets it verifies with
    GET  /elsewhere   where a 3xx points: recorded, so a test sees a
                      redirect that was (wrongly) followed
    GET  /followed    the requests /elsewhere got
"""

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

LOCK = threading.Lock()
STATE = {"status": 200, "delay": 0.0, "fail": 0, "secrets": [], "in_flight": 0}
IN_FLIGHT_AT = {}
DELIVERIES = []
FOLLOWED = []


def verified_with(secrets, body, headers):
    """For each secret, whether the reference library accepts the delivery."""
    results = []
    for secret in secrets:
        try:
            Webhook(secret).verify(body, headers)
            results.append(True)
        except WebhookVerificationError:
            results.append(False)
    return results


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        return self.rfile.read(int(self.headers.get("content-length", "0")))

    def do_GET(self):
        if self.path == "/deliveries":
            with LOCK:
                body = json.dumps(DELIVERIES).encode()
            self.reply(200, body, [("content-type", "application/json")])
        elif self.path == "/secrets":
            with LOCK:
                body = json.dumps(STATE["secrets"]).encode()
            self.reply(200, body, [("content-type", "application/json")])
        elif self.path == "/followed":
            with LOCK:
                body = json.dumps(FOLLOWED).encode()
            self.reply(200, body, [("content-type", "application/json")])
        elif self.path == "/elsewhere":
            with LOCK:
                FOLLOWED.append(self.path)
            self.reply(200)
        else:
            self.reply(404)

    def do_POST(self):
        body = self.read_body()
        if self.path == "/control":
            with LOCK:
                STATE.update(json.loads(body))
            self.reply(200)
            return
        if self.path == "/secrets":
            with LOCK:
                STATE["secrets"] = json.loads(body)["secrets"]
            self.reply(200)
            return
        if self.path == "/elsewhere":
            with LOCK:
                FOLLOWED.append(self.path)
            self.reply(200)
            return
        if not self.path.startswith(("/hook", "/redirect", "/gone")):
            self.reply(404)
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        arrived = time.time()
        with LOCK:
            STATE["in_flight"] += 1
            concurrent = STATE["in_flight"]
            IN_FLIGHT_AT[self.path] = IN_FLIGHT_AT.get(self.path, 0) + 1
            concurrent_path = IN_FLIGHT_AT[self.path]
            secrets = list(STATE["secrets"])
            delay = STATE["delay"]
            if STATE["fail"] > 0:
                STATE["fail"] -= 1
                status = 500
            else:
                status = STATE["status"]
        if self.path.startswith("/redirect"):
            status = 301
        elif self.path.startswith("/gone"):
            status = 410
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        record = {
            "id": headers.get("webhook-id", ""),
            "timestamp": headers.get("webhook-timestamp", ""),
            "signature": headers.get("webhook-signature", ""),
            "content_type": headers.get("content-type", ""),
            "verified": verified_with(secrets, body, headers),
            "body": payload,
            "concurrent": concurrent,
            "concurrent_path": concurrent_path,
            "arrived": arrived,
            "answered": status,
            "path": self.path,
        }
        # Recorded on arrival, so a test sees a delivery its worker never
        # saw answered (a worker killed mid-delivery).
        with LOCK:
            DELIVERIES.append(record)
        try:
            if delay:
                time.sleep(delay)
            extra = [("location", "/elsewhere")] if status == 301 else []
            self.reply(status, b"", extra)
        finally:
            with LOCK:
                STATE["in_flight"] -= 1
                IN_FLIGHT_AT[self.path] -= 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--secret", action="append", default=[])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    STATE["secrets"] = args.secret
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
