"""A local APNs provider API for the notifier's APNs channel: HTTP/2 over TLS (hypercorn, h2)
with a certificate it makes at start (a CA of its own and a leaf for 127.0.0.1 signed by it,
with `cryptography`), checking each request as Apple's servers do.

Usage: apns_server.py FOLDER TEAM_ID KEY_ID TOPIC KEY_P8
Writes FOLDER/ca.pem (the CA to trust), prints one JSON line {"port": N}, and appends one JSON
line per request to FOLDER/requests.jsonl: path, method, httpVersion, headers, body (text),
jwtValid, jwtHeader, claims, problems. The provider token is verified with PyJWT against the
public half of KEY_P8 (the key Apple would hold). Answers 410 {"reason":"Unregistered"} for a
token starting "dead", 400 {"reason":"BadDeviceToken"} for one starting "bad", 200 otherwise
(with apns-id)."""
import asyncio, datetime, ipaddress, json, os, socket, sys, time, uuid

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypercorn.asyncio import serve
from hypercorn.config import Config

folder, team_id, key_id, topic, key_path = sys.argv[1:6]
log_path = os.path.join(folder, "requests.jsonl")
with open(key_path, "rb") as f:
    provider_public = serialization.load_pem_private_key(f.read(), password=None).public_key()


def make_certificates():
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nucleic test APNs CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
                           critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    with open(os.path.join(folder, "ca.pem"), "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(os.path.join(folder, "leaf.pem"), "wb") as f:
        f.write(leaf.public_bytes(serialization.Encoding.PEM))
    with open(os.path.join(folder, "leaf.key"), "wb") as f:
        f.write(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def check(record, headers, path):
    problems = record["problems"]
    if record["method"] != "POST":
        problems.append("method %s" % record["method"])
    if not path.startswith("/3/device/"):
        problems.append("path %s" % path)
    if record["httpVersion"] != "2":
        problems.append("HTTP version %s" % record["httpVersion"])
    auth = headers.get("authorization", "")
    if not auth.startswith("bearer "):
        problems.append("authorization %r" % auth)
    else:
        token = auth[len("bearer "):]
        try:
            record["jwtHeader"] = jwt.get_unverified_header(token)
            record["claims"] = jwt.decode(token, provider_public, algorithms=["ES256"], options={"require": ["iss", "iat"]})
            record["jwtValid"] = True
            if record["jwtHeader"].get("kid") != key_id:
                problems.append("kid %r" % record["jwtHeader"].get("kid"))
            if record["claims"]["iss"] != team_id:
                problems.append("iss %r" % record["claims"]["iss"])
            if not (time.time() - 3600 < record["claims"]["iat"] <= time.time() + 60):
                problems.append("iat %r is not within the last hour" % record["claims"]["iat"])
        except Exception as error:  # a bad token is what this peer reports, not a crash
            problems.append("JWT: %r" % error)
    if headers.get("apns-topic") != topic:
        problems.append("apns-topic %r" % headers.get("apns-topic"))
    push_type = headers.get("apns-push-type")
    if push_type not in ("alert", "background"):
        problems.append("apns-push-type %r" % push_type)
    priority = headers.get("apns-priority")
    if priority not in ("5", "10") or (push_type == "background" and priority != "5"):
        problems.append("apns-priority %r for %r" % (priority, push_type))
    collapse = headers.get("apns-collapse-id", "")
    if not collapse or len(collapse.encode()) > 64:
        problems.append("apns-collapse-id %r" % collapse)
    try:
        body = json.loads(record["body"])
        aps = body.get("aps", {})
        if push_type == "alert" and "alert" not in aps:
            problems.append("an alert push without aps.alert")
        if push_type == "background" and (aps.get("content-available") != 1 or "alert" in aps):
            problems.append("a background push that is not content-available only")
    except ValueError as error:
        problems.append("body: %r" % error)


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    path = scope["path"]
    record = {"path": path, "method": scope["method"], "httpVersion": scope["http_version"], "headers": headers,
              "body": b"".join(chunks).decode("utf-8", "replace"), "jwtValid": False, "jwtHeader": None, "claims": None, "problems": []}
    check(record, headers, path)
    with open(log_path, "a") as f:
        f.write(json.dumps(record) + "\n")
    device = path.rsplit("/", 1)[-1]
    if device.startswith("dead"):
        status, body = 410, {"reason": "Unregistered", "timestamp": int(time.time() * 1000)}
    elif device.startswith("bad"):
        status, body = 400, {"reason": "BadDeviceToken"}
    else:
        status, body = 200, None
    data = json.dumps(body).encode() if body else b""
    response_headers = [(b"apns-id", str(uuid.uuid4()).encode()), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": response_headers})
    await send({"type": "http.response.body", "body": data})


def main():
    make_certificates()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.set_inheritable(True)
    config = Config()
    config.bind = ["fd://%d" % sock.fileno()]
    config.certfile = os.path.join(folder, "leaf.pem")
    config.keyfile = os.path.join(folder, "leaf.key")
    config.alpn_protocols = ["h2"]
    config.accesslog = None
    config.errorlog = os.path.join(folder, "server.log")
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    asyncio.run(serve(app, config))


main()
