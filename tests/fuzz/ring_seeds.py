#!/usr/bin/env python3
# The seeds of fuzz_ring (docs/fuzzing.md): rings as a shim writes them
# (HELLO first, as the ingest wants a connection to start, then maps and
# unmaps with 0 to 4 frames, then EXIT), plain, wrapping around the end of
# a 4 KiB ring, in two rounds; and two a shim never writes (a head past
# what the ring holds, a record past PTS_REC_MAX).  Layouts: wire.h.
#   tests/fuzz/ring_seeds.py DIR
import struct
import sys


def hdr(t, size, seq, nframes=0):
    return struct.pack('<HHIQIHH', t, size, seq, 1000 + seq, 42, nframes, 0)


def hello(seq):
    body = struct.pack('<IIii', 1, 2 | 8, 1, 0) + b'prog'.ljust(256, b'\0')
    return hdr(1, 24 + len(body), seq) + body


def mmap(seq, addr, frames):
    body = struct.pack('<QQQiiiiQQ', addr, 1 << 21, 0, 3, 0x22, -1, 0, 0, 0)
    fr = b''.join(struct.pack('<Q', 0x401000 + i) for i in range(frames))
    return hdr(2, 24 + len(body) + len(fr), seq, frames) + body + fr


def munmap(seq, addr):
    body = struct.pack('<QQii', addr, 1 << 21, 0, 0)
    return hdr(3, 24 + len(body), seq) + body


def exit_(seq):
    return hdr(12, 32, seq) + struct.pack('<iI', 0, 0)


def pad(b):
    return b + b'\0' * ((-len(b)) % 8)


def seed(path, shift, tail, rounds):
    out = struct.pack('<BQ', shift, tail)
    for head, data in rounds:
        out += struct.pack('<QH', head, len(data)) + data
    with open(path, 'wb') as f:
        f.write(out)


def main(d):
    base = 0x7f0000000000
    recs = [pad(hello(1))]
    for i in range(6):
        recs.append(pad(mmap(2 + 2 * i, base + i * (1 << 21), i % 5)))
        recs.append(pad(munmap(3 + 2 * i, base + i * (1 << 21))))
    recs.append(pad(exit_(14)))
    data = b''.join(recs)
    seed(d + '/plain', 0, 0, [(len(data), data)])
    start = 4096 - 40
    seed(d + '/wrap', 0, start, [(start + len(data), data)])
    a, b = b''.join(recs[:4]), b''.join(recs[4:])
    seed(d + '/rounds', 1, 0, [(len(a), a), (len(a) + len(b), b)])
    seed(d + '/head-past', 0, 0, [(8192, data)])
    bad = hdr(2, 5000, 1) + b'\0' * 64
    seed(d + '/size-past', 2, 0, [(len(bad), bad)])


main(sys.argv[1])
