package events

import "io"

// ParseLineJSON exposes the reference decoder to the external tests.
var ParseLineJSON = parseLineJSON

// DecodeFast exposes the fast decoder to the external tests.
func DecodeFast(line []byte) (Event, bool) { return decodeFast(line, nil) }

// NewBackwardScannerBlock is NewBackwardScanner reading block bytes at a time.
func NewBackwardScannerBlock(r io.ReaderAt, size int64, block int) *BackwardScanner {
	return newBackwardScanner(r, size, block, MaxLineBytes)
}

// NewBackwardScannerLimit is NewBackwardScannerBlock for lines of up to
// maxLine bytes.
var NewBackwardScannerLimit = newBackwardScanner

// ScanLinesLimit is ScanLines for lines of up to maxLine bytes, reading
// bufSize bytes at a time; it returns where the last complete line ends.
func ScanLinesLimit(rd io.Reader, bufSize, maxLine int, fn func(Record) error) (int64, error) {
	return scanRaw(rd, bufSize, 0, maxLine, fn)
}
