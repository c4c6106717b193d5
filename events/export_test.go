package events

// ParseLineJSON exposes the reference decoder to the external tests.
var ParseLineJSON = parseLineJSON

// DecodeFast exposes the fast decoder to the external tests.
func DecodeFast(line []byte) (Event, bool) { return decodeFast(line, nil) }

// NewBackwardScannerBlock is NewBackwardScanner reading block bytes at a time.
var NewBackwardScannerBlock = newBackwardScanner
