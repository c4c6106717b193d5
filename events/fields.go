package events

import "bytes"

// A Field is a member of a JSON object for DecodeFields to fill, by its
// exact key: a string (Str) or an integer (Int).
type Field struct {
	Key string
	Str *string
	Int *int
}

// DecodeFields fills fields from the JSON object data, as encoding/json
// would unmarshal it into a struct with just those fields, when it can be
// sure to agree: the object is valid, its keys are plain ASCII and, where
// they name a field, spelt exactly, and each field's value is a string
// without escapes (or an integer without fraction or exponent), or null.
// Otherwise it reports false, having filled some fields or none, and the
// caller decodes with encoding/json. It serves views that read one or two
// fields of millions of payloads, which encoding/json decodes by
// reflection; FuzzDecodeFields holds it to encoding/json.
func DecodeFields(data []byte, fields ...Field) bool {
	d := fastDecoder{data: data}
	d.skipSpace()
	if !d.consume('{') {
		return false
	}
	d.skipSpace()
	if d.consume('}') {
		return d.atEnd()
	}
	for {
		key, ok := d.key()
		if !ok {
			return false
		}
		d.skipSpace()
		if !d.consume(':') {
			return false
		}
		d.skipSpace()
		if !d.member(key, fields) {
			return false
		}
		d.skipSpace()
		if d.consume('}') {
			return d.atEnd()
		}
		if !d.consume(',') {
			return false
		}
		d.skipSpace()
	}
}

// member decodes the value of key into its field, or checks and skips it
// when key names none.
func (d *fastDecoder) member(key []byte, fields []Field) bool {
	for _, f := range fields {
		switch {
		case string(key) == f.Key && f.Str != nil:
			return d.stringField(f.Str)
		case string(key) == f.Key && f.Int != nil:
			return d.intField(f.Int)
		case len(key) == len(f.Key) && bytes.EqualFold(key, []byte(f.Key)):
			return false // encoding/json matches keys case-insensitively
		}
	}
	_, ok := d.value(0)
	return ok
}
