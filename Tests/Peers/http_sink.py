"""A local HTTP endpoint for the notifier's ntfy and webhook channels (Python's standard library
only): records every request as one JSON line (method, path, headers, body) in the file named by
argv[1], and checks a webhook's X-Nucleic-Signature with Python's own hmac against the secret in
argv[2]. Answers 410 on /gone, 500 on /fail, else 200. Prints its port on the first line."""
import hashlib, hmac, json, sys
from email.header import decode_header, make_header
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log_path, secret = sys.argv[1], sys.argv[2].encode()

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        signature = self.headers.get("X-Nucleic-Signature")
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        # Header values as a mail reader decodes them (RFC 2047 encoded words, as ntfy does).
        record = {"method": "POST", "path": self.path, "headers": {k: str(make_header(decode_header(v))) for k, v in self.headers.items()},
                  "body": body.decode("utf-8", "replace"),
                  "signatureValid": signature is not None and hmac.compare_digest(signature, expected)}
        with open(log_path, "a") as f:
            f.write(json.dumps(record) + "\n")
        status = 410 if self.path == "/gone" else 500 if self.path == "/fail" else 200
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
