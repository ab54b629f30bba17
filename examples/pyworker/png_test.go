package main

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// halves paints img's left half left and its right half right.
func halves(img draw.Image, left, right color.Color) image.Image {
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := left
			if x >= (r.Min.X+r.Max.X)/2 {
				c = right
			}
			img.Set(x, y, c)
		}
	}
	return img
}

// encode is img as a PNG, as image/png writes it.
func encode(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// blackPNG is a black 8-bit gray PNG of width×height whose every row
// has the PNG filter filter: small to send, however large the image.
// Python's zlib makes it: under -race, compress/flate takes a minute for
// the 400 MB of TestThumbOverMemoryLimit's image, and Python a second.
func blackPNG(t testing.TB, width, height int, filter byte) []byte {
	t.Helper()
	out, err := exec.Command("python3", "-c", blackPNGScript,
		strconv.Itoa(width), strconv.Itoa(height), strconv.Itoa(int(filter))).Output()
	require.NoError(t, err, "python3 is needed (apt-get install python3)")
	return out
}

// blackPNGScript writes blackPNG's image to stdout, compressing a MiB of
// rows at a time.
const blackPNGScript = `
import struct, sys, zlib
width, height, filter = map(int, sys.argv[1:])
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
row = bytes([filter]) + bytes(width)
per = max(1, (1 << 20) // len(row))
z, idat = zlib.compressobj(9), []
for y in range(0, height, per):
    idat.append(z.compress(row * min(per, height - y)))
idat.append(z.flush())
header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
sys.stdout.buffer.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", b"".join(idat)) + chunk(b"IEND", b""))
`
