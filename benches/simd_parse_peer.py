"""The physical reference of the load benchmarks: how fast a SIMD JSON parser (simdjson, through
the `pysimdjson` package) parses the same bytes, and nothing else — no types checked, nothing
stored. A loader cannot parse faster than this; the gap to it is what the loader does on top.

    python simd_parse_peer.py FILE        # JSON lines, or one JSON document (an array)

Prints `rows=N read_seconds=R parse_seconds=P` on its last line: N documents (one per JSON
line) or array elements, R seconds to read the file into memory, P seconds to parse it
(in-process, after the read; Python's start-up is not included).
"""
import sys, time

import simdjson


def main():
    path = sys.argv[1]
    parser = simdjson.Parser()
    with open(path, "rb") as f:
        head = f.read(4096).lstrip()[:1]
    read_seconds = parse_seconds = 0.0
    rows = 0
    if head == b"[":  # one document: read it whole, parse it whole
        t0 = time.perf_counter()
        with open(path, "rb") as f:
            data = f.read()
        read_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        doc = parser.parse(data)
        rows = len(doc)
        del doc
        parse_seconds = time.perf_counter() - t0
    else:  # JSON lines, streamed (memory stays that of the longest line)
        with open(path, "rb") as f:
            while True:
                t0 = time.perf_counter()
                line = f.readline()
                t1 = time.perf_counter()
                read_seconds += t1 - t0
                if not line:
                    break
                if line.strip():
                    doc = parser.parse(line)
                    del doc  # the parser holds one document at a time
                    rows += 1
                parse_seconds += time.perf_counter() - t1
    print(f"rows={rows} read_seconds={read_seconds:.3f} parse_seconds={parse_seconds:.3f}")


if __name__ == "__main__":
    main()
