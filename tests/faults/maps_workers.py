# SPDX-License-Identifier: MIT
"""Python multiprocessing workers that print their own /proc/self/maps.

The Python side of tests/faults/maps_subject.c (tests/faults/test_maps.c
compares a plain run with a traced one): the parent makes shared memory as
Python programs do, an anonymous mmap (MAP_SHARED), a
multiprocessing.shared_memory block (/dev/shm) and a multiprocessing.Array
(an arena in /dev/shm), says where each is ("@region NAME ADDR LEN"), and
starts two workers (fork), one after the other, each touching two pages in
a few 2 MiB spans of each region a moment after they were mapped, then
printing "@maps WHO", its maps and "@end"; the parent prints its own last.
"""
import ctypes
import mmap
import multiprocessing
import multiprocessing.shared_memory
import sys
import time

SPAN = 2 << 20
REGION = 8 * SPAN
ARRAY = 4 * SPAN
SETTLE = 0.3  # seconds between mapping and touching
PAGE = mmap.PAGESIZE


def touch(regions, spans):
    for addr, length in regions:
        view = (ctypes.c_char * length).from_address(addr)
        for span in spans:
            if span * SPAN + PAGE < length:
                view[span * SPAN] = b"\x01"
                view[span * SPAN + PAGE] = b"\x02"


def print_maps(who):
    with open("/proc/self/maps") as f:
        text = f.read()
    sys.stdout.write("@maps %s\n%s@end\n" % (who, text))
    sys.stdout.flush()


def worker(regions, w):
    time.sleep(SETTLE)
    touch(regions, [5 + w])
    print_maps("worker%d" % w)


def main():
    ctx = multiprocessing.get_context("fork")
    anon = mmap.mmap(-1, REGION)
    shm = multiprocessing.shared_memory.SharedMemory(create=True, size=REGION)
    array = ctx.Array("b", ARRAY, lock=False)
    named = [
        ("anon", ctypes.addressof(ctypes.c_char.from_buffer(anon)), REGION),
        ("shm", ctypes.addressof(ctypes.c_char.from_buffer(shm.buf)), REGION),
        ("array", ctypes.addressof(array), ARRAY),
    ]
    for name, addr, length in named:
        print("@region %s %#x %#x" % (name, addr, length))
    sys.stdout.flush()
    regions = [(addr, length) for _, addr, length in named]
    time.sleep(SETTLE)
    touch(regions, [1, 3])
    for w in range(2):
        p = ctx.Process(target=worker, args=(regions, w))
        p.start()
        p.join()
        if p.exitcode:
            return 1
    print_maps("parent")
    shm.close()
    shm.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
