"""pngstat.py FILE: width, height and what a page screenshot holds, from the PNG itself (PNG specification,
ISO/IEC 15948: IHDR, IDAT, the five row filters), with the standard library only.

Prints "W H INK COLOUR": INK is the fraction of pixels that are not near-white (text, lines, plots), COLOUR the
fraction whose channels differ by more than 60 of 255 (a plot's coloured points and lines; text and table rules
are grey). Exit 1 on a file that is not an 8-bit RGB or RGBA PNG."""
import struct
import sys
import zlib


def read(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("expected 8-bit RGB or RGBA, not interlaced")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + n
    if w is None:
        raise ValueError("no IHDR")
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def main():
    try:
        w, h, bpp, rows = read(sys.argv[1])
    except (OSError, ValueError, zlib.error, struct.error) as e:
        print("pngstat: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        sys.exit(1)
    ink = colour = 0
    for line in rows:
        for x in range(0, w * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if min(r, g, b) < 230:
                ink += 1
            if max(r, g, b) - min(r, g, b) > 60:
                colour += 1
    print("%d %d %.5f %.5f" % (w, h, ink / (w * h), colour / (w * h)))


main()
