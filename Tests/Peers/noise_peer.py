#!/usr/bin/env python3
"""An independent Noise peer for Nucleic's interop tests, on the pinned PyPI `noiseprotocol`.

It speaks one handshake (XXpsk3 or IK, as initiator or responder, prologue `nucleic/1`) and then
echoes transport messages, over stdin/stdout, one line per message, bytes in hex:

  handshake   each message this side writes goes out as `hs <hex>`; each message it reads comes
              in as `hs <hex>`, answered with `payload <hex>` (the payload it decrypted). The
              payload this side sends in handshake message i (1-based) is `py-<i>`.
  completion  `ready <remote static hex> <handshake hash hex>`
  transport   `msg <hex>`     a transport message: answered with `msg <hex>`, the encryption of
                              b"echo:" + the decrypted plaintext
              `send <hex>`    answered with `msg <hex>`, the encryption of the given plaintext
              `frames <hex>`  bytes of the TCP stream in Nucleic's frame format (docs/NOISE.md),
                              decoded by the implementation below; answered with `frames <hex>`,
                              the frames of b"echo:" + each complete message, cut into fragments of
                              at most --fragment bytes
              `rekey`         rekeys both directions (spec §11.3); answered with `ok`
              `quit`          exits 0
Any failure prints `error <reason>` and exits 1.

Usage: noise_peer.py --pattern XXpsk3|IK --role initiator|responder --static HEX
                     [--remote-static HEX] [--psk HEX] [--fragment N]
"""
import argparse
import sys

from noise.connection import Keypair, NoiseConnection

PROLOGUE = b"nucleic/1"
MORE_FRAGMENTS = 0x01
MAX_FRAGMENT = 65535 - 16 - 1
MAX_MESSAGE = 16 * 1024 * 1024


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def read_line(expected):
    line = sys.stdin.readline()
    if not line:
        raise RuntimeError("stdin closed while waiting for " + expected)
    return line.strip()


class FrameDecoder:
    """Nucleic's frame format, written from docs/NOISE.md alone."""

    def __init__(self, connection):
        self.connection = connection
        self.buffer = b""
        self.partial = b""

    def feed(self, data):
        self.buffer += data
        messages = []
        while len(self.buffer) >= 2:
            length = int.from_bytes(self.buffer[:2], "big")
            if length < 17:
                raise RuntimeError("frame of %d bytes is too short" % length)
            if len(self.buffer) < 2 + length:
                break
            frame, self.buffer = self.buffer[2:2 + length], self.buffer[2 + length:]
            plaintext = self.connection.decrypt(frame)
            flags, fragment = plaintext[0], plaintext[1:]
            if flags & ~MORE_FRAGMENTS:
                raise RuntimeError("unknown flags 0x%02x" % flags)
            if flags & MORE_FRAGMENTS and not fragment:
                raise RuntimeError("empty non-final fragment")
            if len(self.partial) + len(fragment) > MAX_MESSAGE:
                raise RuntimeError("message over 16 MiB")
            self.partial += fragment
            if not flags & MORE_FRAGMENTS:
                messages.append(self.partial)
                self.partial = b""
        return messages


def encode_frames(connection, message, fragment_size):
    chunks = [message[i:i + fragment_size] for i in range(0, len(message), fragment_size)] or [b""]
    output = b""
    for index, chunk in enumerate(chunks):
        flags = MORE_FRAGMENTS if index < len(chunks) - 1 else 0
        ciphertext = connection.encrypt(bytes([flags]) + chunk)
        output += len(ciphertext).to_bytes(2, "big") + ciphertext
    return output


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pattern", choices=["XXpsk3", "IK"], required=True)
    parser.add_argument("--role", choices=["initiator", "responder"], required=True)
    parser.add_argument("--static", required=True)
    parser.add_argument("--remote-static")
    parser.add_argument("--psk")
    parser.add_argument("--fragment", type=int, default=MAX_FRAGMENT)
    args = parser.parse_args()

    connection = NoiseConnection.from_name(("Noise_%s_25519_ChaChaPoly_SHA256" % args.pattern).encode())
    connection.set_prologue(PROLOGUE)
    if args.role == "initiator":
        connection.set_as_initiator()
    else:
        connection.set_as_responder()
    connection.set_keypair_from_private_bytes(Keypair.STATIC, bytes.fromhex(args.static))
    if args.remote_static:
        connection.set_keypair_from_public_bytes(Keypair.REMOTE_STATIC, bytes.fromhex(args.remote_static))
    if args.psk:
        connection.set_psks(psk=bytes.fromhex(args.psk))
    connection.start_handshake()
    # The library drops its HandshakeState once the handshake completes; keep it to report `rs`.
    handshake = connection.noise_protocol.handshake_state

    writes = args.role == "initiator"
    index = 0
    while not connection.handshake_finished:
        index += 1
        if writes:
            out("hs " + connection.write_message(("py-%d" % index).encode()).hex())
        else:
            line = read_line("a handshake message")
            if not line.startswith("hs "):
                raise RuntimeError("expected a handshake message, got " + line[:40])
            out("payload " + connection.read_message(bytes.fromhex(line[3:])).hex())
        writes = not writes
    out("ready %s %s" % (handshake.rs.public_bytes.hex(), connection.get_handshake_hash().hex()))

    decoder = FrameDecoder(connection)
    while True:
        line = read_line("a command")
        command, _, argument = line.partition(" ")
        if command == "msg":
            plaintext = connection.decrypt(bytes.fromhex(argument))
            out("msg " + connection.encrypt(b"echo:" + plaintext).hex())
        elif command == "send":
            out("msg " + connection.encrypt(bytes.fromhex(argument)).hex())
        elif command == "frames":
            messages = decoder.feed(bytes.fromhex(argument))
            out("frames " + b"".join(encode_frames(connection, b"echo:" + m, args.fragment) for m in messages).hex())
        elif command == "rekey":
            connection.rekey_inbound_cipher()
            connection.rekey_outbound_cipher()
            out("ok")
        elif command == "quit":
            return
        else:
            raise RuntimeError("unknown command " + command)


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # report every failure to the test, which shows it
        out("error %s: %s" % (type(error).__name__, error))
        sys.exit(1)
