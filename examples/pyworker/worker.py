"""The thumbnail worker of examples/pyworker: a PNG in, a smaller PNG out, standard library only.

The pool starts this program in worker processes and sends it "thumb" calls; offload_worker
(sdk/python, copied beside this file) speaks the protocol. Decoding is pure Python, byte by byte:
CPU-bound code that holds the GIL, which is why the service keeps a pool of these processes
rather than threads in one, or a process spawned per request.
"""
import struct, sys, zlib

from offload_worker import Cancelled, task, serve

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # PNG colour type: gray, RGB, palette, gray+alpha, RGBA


class BadImage(ValueError):
    """The posted bytes are not a PNG this worker reads; the service answers 422."""


@task("thumb")
def thumb(inp):
    """Scale inp["Image"] (PNG bytes) down to inp["Width"] pixels wide, keeping its aspect."""
    try:
        width, height, channels, rows = read_png(inp["Image"])
        out_width = min(width, inp["Width"])
        out_height = max(1, (height * out_width + width // 2) // width)
        out_channels = 3 if channels >= 3 else 1  # alpha is dropped
        pixels = shrink(rows, width, height, channels, out_width, out_height, out_channels)
    except (struct.error, zlib.error) as e:
        raise BadImage(f"corrupt PNG: {e}") from e
    except Cancelled as e:  # the caller gave up (e.cause: "deadline", "canceled" or "closed")
        print(f"thumb: stopped ({e.cause})", file=sys.stderr)
        raise
    return {"Width": out_width, "Height": out_height, "Image": write_png(out_width, out_height, out_channels, pixels)}


def read_png(data):
    """The image's width, height, channels, and an iterator over its rows of bytes."""
    if data[:8] != _SIGNATURE:
        raise BadImage("not a PNG image")
    header, palette, compressed, pos = None, None, [], 8
    while pos < len(data):
        length, kind = struct.unpack_from(">I4s", data, pos)
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length  # length, kind, data, CRC
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"PLTE":
            palette = [chunk[i:i + 3] for i in range(0, len(chunk) - 2, 3)]
        elif kind == b"IDAT":
            compressed.append(chunk)
        elif kind == b"IEND":
            break
    if header is None:
        raise BadImage("no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise BadImage(f"unsupported PNG: bit depth {depth}, colour type {colour}, interlace {interlace} "
                       "(this worker reads 8-bit gray, RGB, palette and alpha forms, not interlaced)")
    if width == 0 or height == 0:
        raise BadImage("an empty image")
    if colour == 3 and not palette:
        raise BadImage("a palette image without a PLTE chunk")
    # The whole image decompressed at once, as most decoders do: a small PNG of a huge image
    # (a decompression bomb) grows the process past the pool's MemoryLimit, and the pool kills it.
    raw = zlib.decompress(b"".join(compressed))
    channels = _CHANNELS[colour]
    stride = width * channels
    if len(raw) != height * (stride + 1):
        raise BadImage(f"{len(raw)} bytes of pixels for a {width}x{height} image")
    rows = unfilter(raw, height, stride, channels)
    if colour == 3:
        return width, height, 3, expand(rows, palette + [b"\0\0\0"] * (256 - len(palette)))
    return width, height, channels, rows


def expand(rows, palette):
    """Yield each row of palette indices as RGB bytes."""
    for row in rows:
        yield bytearray(b"".join(map(palette.__getitem__, row)))


def unfilter(raw, height, stride, bpp):
    """Yield each row of the image, undoing its PNG filter (the byte before it)."""
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:  # Sub
            for i in range(bpp, stride):
                row[i] = (row[i] + row[i - bpp]) & 255
        elif kind == 2:  # Up
            for i in range(stride):
                row[i] = (row[i] + prev[i]) & 255
        elif kind == 3:  # Average
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                row[i] = (row[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:  # Paeth
            for i in range(stride):
                a, b = (row[i - bpp] if i >= bpp else 0), prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif kind != 0:
            raise BadImage(f"row {y} has filter type {kind}")
        yield row
        prev = row


def shrink(rows, width, height, channels, out_width, out_height, out_channels):
    """Each output pixel is the mean of the box of input pixels it covers: one bytearray per row."""
    sums = [[0] * (out_width * out_channels) for _ in range(out_height)]
    counts = [0] * out_height
    columns = [(x * width // out_width, (x + 1) * width // out_width) for x in range(out_width)]
    for y, row in enumerate(rows):
        oy = y * out_height // height
        counts[oy] += 1
        line = sums[oy]
        for ox, (x0, x1) in enumerate(columns):
            for c in range(out_channels):
                line[ox * out_channels + c] += sum(row[x0 * channels + c:x1 * channels:channels])
    out = []
    for oy, line in enumerate(sums):
        for ox, (x0, x1) in enumerate(columns):
            n = (x1 - x0) * counts[oy]
            for c in range(out_channels):
                i = ox * out_channels + c
                line[i] = (line[i] + n // 2) // n
        out.append(bytearray(line))
    return out


def write_png(width, height, channels, rows):
    """A PNG of the rows, unfiltered, compressed with zlib."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    colour = 2 if channels == 3 else 0
    pixels = b"".join(b"\x00" + bytes(row) for row in rows)
    return (_SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(pixels, 9)) + chunk(b"IEND", b""))


if __name__ == "__main__":
    serve()
