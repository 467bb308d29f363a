#!/usr/bin/env python3
"""Advances a virtual-clock daemon by a day at a time until it refuses; prints the last
successful reply and the refusal, as the daemon wrote them. The requests are written in
batches of 1,000 lines (each line is one request) and their replies read back.

Usage: advance_to_the_end.py SOCKET
"""
import json
import socket
import sys

sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(sys.argv[1])
buffer = b""
last_ok = None
identifier = 0
while True:
    lines = []
    for _ in range(1000):
        identifier += 1
        lines.append(b'{"jsonrpc":"2.0","id":%d,"method":"framerate.v1.Compositor/Advance","params":{"seconds":86400}}\n' % identifier)
    sock.sendall(b"".join(lines))
    replies = 0
    refusal = None
    while replies < 1000:
        while b"\n" not in buffer:
            buffer += sock.recv(65536)
        line, buffer = buffer.split(b"\n", 1)
        replies += 1
        message = json.loads(line)
        if "error" in message and refusal is None:
            refusal = line.decode()
        elif "result" in message and refusal is None:
            last_ok = line.decode()
    if refusal is not None:
        print(last_ok)
        print(refusal)
        break
