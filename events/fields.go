package events

import (
	"strconv"
)

// A Field is a member of a JSON object for DecodeFields to fill, by its
// exact key. Exactly one destination is set: a string (Str), an integer
// (Int), a boolean (Bool), a float64 (Float), an array of strings (Strs),
// the length of an array of integers (IntCount, for a []int64 whose length
// alone is wanted), or an object whose members fill the fields Obj lists.
// Bytes and ByteStrs are Str and Strs without a string made for each
// value: they borrow the bytes of data (a string without escapes is its
// bytes), valid as long as data is, and null makes them nil.
type Field struct {
	Key      string
	Str      *string
	Int      *int
	Bool     *bool
	Float    *float64
	Strs     *[]string
	IntCount *int
	Obj      []Field
	Bytes    *[]byte
	ByteStrs *[][]byte
}

// DecodeFields fills fields from the JSON object data, as encoding/json
// would unmarshal it into a struct with just those fields, when it can be
// sure to agree: the object is valid, its keys are plain ASCII and, where
// they name a field, spelt exactly, and each field's value is of its kind,
// or null: a string without escapes, an integer without fraction or
// exponent, true or false, a number that fits a float64, an array of such
// strings or integers (without nulls), an object of fields. Otherwise it
// reports false, having filled some fields or none, and the caller decodes
// with encoding/json. It serves views that read a few fields of millions of
// payloads, which encoding/json decodes by reflection; FuzzDecodeFields
// holds it to encoding/json.
//
// A struct's fields must all be listed, each with its kind: a field left
// out is not checked, where encoding/json fails on a value of another kind.
// Their keys must differ, even ignoring case, as a struct's JSON names do.
func DecodeFields(data []byte, fields ...Field) bool {
	d := fastDecoder{data: data}
	return d.topFields(fields)
}

// DecodeFields is the package's DecodeFields sharing the decoder's strings:
// the strings it fills are not allocated again for each payload.
func (dec *Decoder) DecodeFields(data []byte, fields ...Field) bool {
	if dec.names == nil {
		dec.names = interner{}
	}
	d := fastDecoder{data: data, names: dec.names}
	return d.topFields(fields)
}

// topFields is DecodeFields on d's data, which must hold the object alone.
func (d *fastDecoder) topFields(fields []Field) bool {
	d.skipSpace()
	return d.fields(fields) && d.atEnd()
}

// fields decodes the object at d.i into fields and moves past it.
func (d *fastDecoder) fields(fields []Field) bool {
	if !d.consume('{') {
		return false
	}
	d.skipSpace()
	if d.consume('}') {
		return true
	}
	next := 0 // the field after the last one filled, likely the next key's
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
		if next, ok = d.member(key, fields, next); !ok {
			return false
		}
		d.skipSpace()
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
		d.skipSpace()
	}
}

// member decodes the value of key into its field, or checks and skips it
// when key names none, and returns the index after the field's (hint when
// none). Payloads list their keys in the fields' order, so the field at
// hint is tried first: a key spelt exactly as one field's is that field's,
// unless another field's key is the same but for case, which no list has.
func (d *fastDecoder) member(key []byte, fields []Field, hint int) (next int, ok bool) {
	if hint < len(fields) && string(key) == fields[hint].Key {
		return hint + 1, d.field(&fields[hint])
	}
	for i := range fields {
		f := &fields[i]
		switch {
		case string(key) == f.Key:
			return i + 1, d.field(f)
		case len(key) == len(f.Key) && asciiEqualFold(key, f.Key):
			return hint, false // encoding/json matches keys case-insensitively
		}
	}
	_, ok = d.value(0)
	return hint, ok
}

// asciiEqualFold is bytes.EqualFold for ASCII a and b of the same length
// (key refuses any other byte in a key), without its Unicode tables.
func asciiEqualFold(a []byte, b string) bool {
	for i := range a {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// field decodes the value at d.i into f's destination.
func (d *fastDecoder) field(f *Field) bool {
	switch {
	case f.Str != nil:
		return d.stringField(f.Str)
	case f.Int != nil:
		return d.intField(f.Int)
	case f.Bool != nil:
		return d.boolField(f.Bool)
	case f.Float != nil:
		return d.floatField(f.Float)
	case f.Strs != nil:
		return d.stringsField(f.Strs)
	case f.IntCount != nil:
		return d.intCountField(f.IntCount)
	case f.Obj != nil:
		return d.literal("null") || d.fields(f.Obj)
	case f.Bytes != nil:
		if d.literal("null") {
			*f.Bytes = nil
			return true
		}
		b, ok := d.plainString()
		*f.Bytes = b
		return ok
	case f.ByteStrs != nil:
		return d.byteStrsField(f.ByteStrs)
	}
	return false
}

// byteStrsField is stringsField borrowing each string's bytes.
func (d *fastDecoder) byteStrsField(dst *[][]byte) bool {
	if d.literal("null") {
		*dst = nil
		return true
	}
	out := (*dst)[:0]
	ok := d.array(func() bool {
		b, ok := d.plainString()
		out = append(out, b)
		return ok
	})
	*dst = out
	return ok
}

// boolField decodes true or false, or null, which leaves *dst as it is.
func (d *fastDecoder) boolField(dst *bool) bool {
	switch {
	case d.literal("true"):
		*dst = true
	case d.literal("false"):
		*dst = false
	default:
		return d.literal("null")
	}
	return true
}

// floatField decodes a number as encoding/json does into a float64, or
// null, which leaves *dst as it is. One out of a float64's range is an
// error to encoding/json.
func (d *fastDecoder) floatField(dst *float64) bool {
	if d.literal("null") {
		return true
	}
	start := d.i
	if !d.number() {
		return false
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.i]), 64)
	if err != nil {
		return false
	}
	*dst = f
	return true
}

// stringsField decodes an array of strings into *dst, reusing its array,
// or null, which makes it nil as encoding/json does. A null element is
// left to encoding/json.
func (d *fastDecoder) stringsField(dst *[]string) bool {
	if d.literal("null") {
		*dst = nil
		return true
	}
	out := (*dst)[:0]
	ok := d.array(func() bool {
		var s string
		if d.literal("null") || !d.stringField(&s) {
			return false
		}
		out = append(out, s)
		return true
	})
	if out == nil {
		out = []string{} // [] is an empty array, not null
	}
	*dst = out
	return ok
}

// intCountField decodes an array of integers that fit an int, or null, and
// sets *dst to how many it holds (0 for null).
func (d *fastDecoder) intCountField(dst *int) bool {
	if d.literal("null") {
		*dst = 0
		return true
	}
	n := 0
	ok := d.array(func() bool {
		var v int
		if d.literal("null") || !d.intField(&v) {
			return false
		}
		n++
		return true
	})
	*dst = n
	return ok
}

// array walks the array at d.i, calling elem at each element.
func (d *fastDecoder) array(elem func() bool) bool {
	if !d.consume('[') {
		return false
	}
	d.skipSpace()
	if d.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		d.skipSpace()
		if d.consume(']') {
			return true
		}
		if !d.consume(',') {
			return false
		}
		d.skipSpace()
	}
}
