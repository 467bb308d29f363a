#!/usr/bin/env python3
"""framectl top under a pseudo-terminal (80x24) and with stdout on a pipe.

Usage: check_top.py FRAMECTL SOCKET
With a client holding a 120 Hz link on the daemon: on the pty, top draws a screen that
names the display and the link within 80 columns and 24 lines, and quits on 'q' with exit
status 0, restoring the terminal; on a pipe, --iterations 2 prints two plain screens
without escape sequences.
"""
import fcntl
import json
import os
import pty
import re
import select
import socket
import struct
import subprocess
import sys
import termios
import time

FRAMECTL, SOCKET = sys.argv[1], sys.argv[2]

app = socket.socket(socket.AF_UNIX)
app.connect(SOCKET)
app.sendall(b'{"jsonrpc":"2.0","id":1,"method":"framerate.v1.DisplayLink/Register",'
            b'"params":{"range":{"minimum":80,"maximum":120,"preferred":120},"highFrameRate":true,"label":"toplist"}}\n')

# On a pty of 80x24.
pid, fd = pty.fork()
if pid == 0:
    os.execv(FRAMECTL, [FRAMECTL, "top", "--socket", SOCKET])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
screen = b""
deadline = time.monotonic() + 15
while b"toplist" not in screen and time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.5)
    if ready:
        screen += os.read(fd, 65536)
assert b"toplist" in screen, f"no screen with the link within 15 s: {screen[-500:]!r}"
last = screen.split(b"\x1b[H\x1b[2J")[-1].decode()
lines = last.split("\r\n")
assert lines[0].startswith("framectl top"), lines[:3]
assert any(line.startswith("display 0: 120 Hz") for line in lines), lines
assert len(lines) <= 24 and all(len(line) <= 80 for line in lines), lines
os.write(fd, b"q")
ended = time.monotonic() + 5
status = None
while time.monotonic() < ended:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    try:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            screen += os.read(fd, 65536)
    except OSError:
        pass
assert status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"top did not quit on q: {status}"
assert screen.rstrip().endswith(b"\x1b[?1049l"), "top did not leave the alternate screen"

# On a pipe: plain screens.
plain = subprocess.run([FRAMECTL, "top", "--socket", SOCKET, "--iterations", "2"], capture_output=True, timeout=20)
assert plain.returncode == 0, plain.stderr
text = plain.stdout.decode()
assert "\x1b" not in text
screens = text.split("-" * 80 + "\n")
assert len(screens) == 2 and all("toplist" in s for s in screens), text
assert all(len(line) <= 80 for line in text.splitlines())
print("top ok: pty screen of %d lines, quit on q; 2 plain screens" % len(lines))
app.close()
