"""A local Web Push service and subscriber in one, for the notifier's Web Push channel: it makes
the subscription (its own P-256 key and auth secret, printed as one JSON line with its port),
and for every POST checks the VAPID header with py_vapid (RFC 8292: the ES256 JWT against the
key in `k`, and the claims: `aud` this origin, `exp` within 24 hours, `sub` a contact), and
decrypts the body with http_ece (RFC 8291 aes128gcm) using the subscriber's private key. Each
request becomes one JSON line in the file named by argv[1]: path, headers, the raw body in
base64, vapidValid, claims, problems, and the decrypted plaintext. Answers 410 on /gone, 404 on
/missing, 201 otherwise."""
import base64, json, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02
from py_vapid import jwt as vapid_jwt

log_path = sys.argv[1]
private_key = ec.generate_private_key(ec.SECP256R1())
public_raw = private_key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
auth_secret = os.urandom(16)

def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        origin = "http://127.0.0.1:%d" % self.server.server_address[1]
        record = {"path": self.path, "headers": dict(self.headers.items()), "body": base64.b64encode(body).decode(),
                  "vapidValid": False, "claims": None, "problems": [], "plaintext": None}
        auth = self.headers.get("Authorization", "")
        try:
            record["vapidValid"] = bool(Vapid02.verify(auth))
            parts = dict(p.split("=", 1) for p in auth.split(" ", 1)[1].split(","))
            claims = vapid_jwt.decode(parts["t"], parts["k"])
            record["claims"] = claims
            header = json.loads(base64.urlsafe_b64decode(parts["t"].split(".")[0] + "=="))
            if header != {"typ": "JWT", "alg": "ES256"}:
                record["problems"].append("JWT header %r" % header)
            if claims.get("aud") != origin:
                record["problems"].append("aud %r is not %s" % (claims.get("aud"), origin))
            if not (time.time() < claims.get("exp", 0) <= time.time() + 86400):
                record["problems"].append("exp %r is not within 24 hours" % claims.get("exp"))
            if not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
                record["problems"].append("sub %r is not a mailto: or https: contact" % claims.get("sub"))
        except Exception as error:  # a bad header is what this peer reports, not a crash
            record["problems"].append("VAPID: %r" % error)
        try:
            record["plaintext"] = http_ece.decrypt(body, private_key=private_key, auth_secret=auth_secret,
                                                   version="aes128gcm").decode("utf-8")
        except Exception as error:
            record["problems"].append("decrypt: %r" % error)
        with open(log_path, "a") as f:
            f.write(json.dumps(record) + "\n")
        status = 410 if self.path == "/gone" else 404 if self.path == "/missing" else 201
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(json.dumps({"port": server.server_address[1], "p256dh": b64url(public_raw), "auth": b64url(auth_secret)}), flush=True)
server.serve_forever()
