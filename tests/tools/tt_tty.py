#!/usr/bin/python3
"""tt_tty.py ERRFILE COLUMNS -- COMMAND [ARGS...]

Run COMMAND with its standard error on a terminal (a new pseudo-terminal
of COLUMNS columns) and its standard output and input as this process has
them; what it writes to the terminal goes, byte for byte (carriage returns
and all), into ERRFILE.  Exits with COMMAND's exit status (128 + the signal
when one ended it).  tool_progress uses it: the progress line is drawn only
where standard error is a terminal.
"""
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.stderr.write(__doc__)
        return 2
    errfile, cols, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    # raw: the bytes as written (no \n -> \r\n)
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen(cmd, stderr=slave)
    os.close(slave)
    data = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:   # EIO: every holder of the terminal's other end closed it
            break
        if not chunk:
            break
        data += chunk
    rc = proc.wait()
    os.close(master)
    with open(errfile, "wb") as f:
        f.write(data)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
