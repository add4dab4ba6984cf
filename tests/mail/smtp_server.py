"""An SMTP server on loopback for clarion's mail tests (MAIL-1, MAIL-1a):
aiosmtpd from PyPI, through its documented Controller and handler hooks
(`handle_RCPT`, `handle_DATA`). Each message it accepts is written to a
file of its own in the directory given, as JSON: the envelope, the
headers, and the plain-text and HTML parts decoded by Python's `email`
package, with the raw message. A RCPT to an address whose local part
starts with `refuse` is answered 550 (a permanent refusal).

    python3 smtp_server.py --port N --out DIR

It prints `listening on <port>` once ready and runs until stdin closes.
"""

import argparse
import itertools
import json
import os
import sys
import threading
from email import message_from_bytes
from email.policy import default

from aiosmtpd.controller import Controller


class Handler:
    def __init__(self, out):
        self.out = out
        self.count = itertools.count(1)
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.split("@")[0].startswith("refuse"):
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content or envelope.content
        message = message_from_bytes(raw, policy=default)
        parts = {}
        for part in message.walk():
            if part.get_content_maintype() == "text":
                parts.setdefault(part.get_content_subtype(), part.get_content())
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "headers": {name.lower(): str(value) for name, value in message.items()},
            "content_type": message.get_content_type(),
            "text": parts.get("plain", ""),
            "html": parts.get("html", ""),
            "raw": raw.decode("utf-8", "replace"),
        }
        with self.lock:
            number = next(self.count)
        path = os.path.join(self.out, f"{number:05}.json")
        with open(path + ".part", "w") as file:
            json.dump(record, file)
        os.rename(path + ".part", path)
        return "250 Message accepted for delivery"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    controller = Controller(Handler(args.out), hostname="127.0.0.1", port=args.port)
    controller.start()
    print(f"listening on {args.port}", flush=True)
    try:
        sys.stdin.read()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
