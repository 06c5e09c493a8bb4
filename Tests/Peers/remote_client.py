#!/usr/bin/env python3
"""An independent Nucleic remote client, written from docs/PROTOCOL.md alone, on the pinned PyPI
`noiseprotocol` and `cbor2` (nothing else).

Driven by a test over stdin/stdout, one JSON object per line each way. Each command gets exactly
one answer line; `{"error": "..."}` when it failed (the client keeps running).

  {"op": "pair", "uri": "nucleic://pair?...", "static": "<hex>", "label": "..."}
      connects to the URI's first addr, runs Noise_XXpsk3 (PSK from the URI), checks that the
      host's static key equals hk, sends hello and answers {"welcome": {...}} (or {"message": m}
      when the host answered something else, or {"closed": true}).
  {"op": "connect", "host": "...", "port": N, "hk": "<base64url>", "static": "<hex>", "hello": bool,
   "rcvbuf": N}
      Noise_IK with the pinned host key, then hello (unless "hello": false); answers as pair.
  {"op": "send", "message": {...}}            one CBOR message; answers {"sent": true}
  {"op": "next"}                               {"message": m} | {"closed": true} | {"timeout": true}
  {"op": "until", "type": "T", "approvalID"?}  reads until a message of type T; answers
                                               {"message": m, "skipped": [m, ...]}
  {"op": "tamper", "message": {...}}          sends the message's frame with one ciphertext bit
                                               flipped; {"sent": true}
  {"op": "replay"}                             sends the last frame again, byte for byte
  {"op": "raw", "hex": "..."}                  sends raw bytes
  {"op": "stall", "count": N, "message": {...}} sends the message N times without reading
  {"op": "closed"}                             reads until the host closes; {"closed": true,
                                               "messages": [...]} (or {"timeout": true})
  {"op": "quit"}
"""
import base64
import json
import socket
import sys
import urllib.parse

import cbor2
from noise.connection import Keypair, NoiseConnection

PROLOGUE = b"nucleic/1"
MORE = 0x01
MAX_FRAGMENT = 65535 - 16 - 1
TIMEOUT = 60.0


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Closed(Exception):
    pass


class Client:
    def __init__(self):
        self.sock = None
        self.noise = None
        self.buffer = b""
        self.partial = b""
        self.last_frame = None

    # --- bytes -------------------------------------------------------------------------------

    def read_exact(self, count):
        while len(self.buffer) < count:
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise TimeoutError()
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                # The host closed (or half-closed): close our side too, as a well-behaved client does.
                self.sock.close()
                raise Closed()
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def read_noise_message(self):
        length = int.from_bytes(self.read_exact(2), "big")
        return self.read_exact(length)

    def write_noise_message(self, message):
        frame = len(message).to_bytes(2, "big") + message
        self.last_frame = frame
        self.sock.sendall(frame)

    # --- handshakes --------------------------------------------------------------------------

    def open(self, host, port, rcvbuf=None):
        if self.sock is not None:
            self.sock.close()
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            # A small receive window, so a client that stops reading fills the host's queue soon.
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(TIMEOUT)
        self.sock.connect((host, port))
        self.sock.settimeout(TIMEOUT)
        self.buffer = b""
        self.partial = b""

    def pair(self, uri, static):
        parsed = urllib.parse.urlparse(uri)
        if parsed.scheme != "nucleic" or parsed.netloc != "pair":
            raise RuntimeError("not a pairing URI")
        query = urllib.parse.parse_qs(parsed.query)
        if query["v"] != ["1"]:
            raise RuntimeError("unknown pairing URI version")
        hk = b64url_decode(query["hk"][0])
        psk = b64url_decode(query["psk"][0])
        host, _, port = query["addr"][0].rpartition(":")
        self.open(host.strip("[]"), int(port))
        noise = NoiseConnection.from_name(b"Noise_XXpsk3_25519_ChaChaPoly_SHA256")
        noise.set_prologue(PROLOGUE)
        noise.set_as_initiator()
        noise.set_keypair_from_private_bytes(Keypair.STATIC, static)
        noise.set_psks(psk=psk)
        noise.start_handshake()
        handshake = noise.noise_protocol.handshake_state
        self.write_noise_message(noise.write_message(b""))
        noise.read_message(self.read_noise_message())
        if handshake.rs.public_bytes != hk:
            raise RuntimeError("the host's static key is not the hk of the URI")
        self.write_noise_message(noise.write_message(b""))
        self.noise = noise
        return hk

    def connect(self, host, port, hk, static, rcvbuf=None):
        self.open(host, port, rcvbuf)
        noise = NoiseConnection.from_name(b"Noise_IK_25519_ChaChaPoly_SHA256")
        noise.set_prologue(PROLOGUE)
        noise.set_as_initiator()
        noise.set_keypair_from_private_bytes(Keypair.STATIC, static)
        noise.set_keypair_from_public_bytes(Keypair.REMOTE_STATIC, hk)
        noise.start_handshake()
        self.write_noise_message(noise.write_message(b""))
        noise.read_message(self.read_noise_message())
        self.noise = noise

    # --- messages ----------------------------------------------------------------------------

    def frames(self, message):
        data = cbor2.dumps(message)
        chunks = [data[i:i + MAX_FRAGMENT] for i in range(0, len(data), MAX_FRAGMENT)] or [b""]
        out = []
        for index, chunk in enumerate(chunks):
            flags = MORE if index < len(chunks) - 1 else 0
            out.append(self.noise.encrypt(bytes([flags]) + chunk))
        return out

    def send(self, message):
        for ciphertext in self.frames(message):
            self.write_noise_message(ciphertext)

    def receive(self):
        while True:
            plaintext = self.noise.decrypt(self.read_noise_message())
            flags, fragment = plaintext[0], plaintext[1:]
            if flags & ~MORE:
                raise RuntimeError("unknown flags")
            self.partial += fragment
            if not flags & MORE:
                data, self.partial = self.partial, b""
                return cbor2.loads(data)

    def hello(self, label=None):
        hello = {"type": "hello", "protocolVersion": 1, "client": "remote_client.py", "requestID": 1}
        if label:
            hello["label"] = label
        self.send(hello)
        reply = self.receive()
        if reply.get("type") == "welcome":
            return {"welcome": reply}
        return {"message": reply}


def main():
    client = Client()
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        try:
            if op == "quit":
                print(json.dumps({"bye": True}), flush=True)
                return
            if op == "pair":
                client.pair(command["uri"], bytes.fromhex(command["static"]))
                answer = client.hello(command.get("label"))
            elif op == "connect":
                client.connect(command["host"], command["port"], b64url_decode(command["hk"]), bytes.fromhex(command["static"]),
                               command.get("rcvbuf"))
                answer = client.hello() if command.get("hello", True) else {"connected": True}
            elif op == "send":
                client.send(command["message"])
                answer = {"sent": True}
            elif op == "next":
                answer = {"message": client.receive()}
            elif op == "until":
                skipped = []
                while True:
                    message = client.receive()
                    if message.get("type") == command["type"] and all(message.get(k) == v for k, v in command.get("match", {}).items()):
                        answer = {"message": message, "skipped": skipped}
                        break
                    skipped.append(message)
            elif op == "tamper":
                frame = bytearray(b"".join(len(c).to_bytes(2, "big") + c for c in client.frames(command["message"])))
                frame[5] ^= 0x01
                client.sock.sendall(bytes(frame))
                answer = {"sent": True}
            elif op == "replay":
                client.sock.sendall(client.last_frame)
                answer = {"sent": True}
            elif op == "raw":
                client.sock.sendall(bytes.fromhex(command["hex"]))
                answer = {"sent": True}
            elif op == "stall":
                for _ in range(command["count"]):
                    client.send(command["message"])
                answer = {"sent": True}
            elif op == "closed":
                messages = []
                try:
                    while True:
                        messages.append(client.receive())
                except Closed:
                    answer = {"closed": True, "messages": messages}
                except TimeoutError:
                    answer = {"timeout": True, "messages": messages}
            else:
                answer = {"error": "unknown op " + op}
        except Closed:
            answer = {"closed": True}
        except TimeoutError:
            answer = {"timeout": True}
        except Exception as error:  # reported to the test, which shows it
            answer = {"error": "%s: %s" % (type(error).__name__, error)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
