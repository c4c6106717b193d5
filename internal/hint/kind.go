package hint

// Kind is what sort of failure an error is, said by the error itself so
// that each front-end maps it once: `ralph serve` to an HTTP status. An
// error without a Kind is Other.
type Kind int

const (
	// Other is any failure not below: ralph's own, or the system's.
	Other Kind = iota
	// Invalid: the request is wrong as asked; the fix says how to ask.
	Invalid
	// NotFound: what the request names does not exist (a run, a log).
	NotFound
	// Conflict: the request is right but the run's state refuses it now
	// (nothing running, no question waiting, the run over).
	Conflict
)

// Kinder is an error that says what kind of failure it is.
type Kinder interface{ Kind() Kind }

// Kind is an Error's: a request that carries its fix was asked wrongly.
func (e *Error) Kind() Kind { return Invalid }

// Has reports whether err or any error it wraps is of kind k. Every error
// of the chain is asked, not only the first that has a Kind, so that a
// fix wrapped around a missing run still reads as NotFound.
func Has(err error, k Kind) bool {
	for err != nil {
		if e, ok := err.(Kinder); ok && e.Kind() == k {
			return true
		}
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				if Has(e, k) {
					return true
				}
			}
			return false
		}
		wrapper, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = wrapper.Unwrap()
	}
	return false
}

// New is a sentinel error of kind k, for errors.Is.
func New(k Kind, text string) error { return &kindError{text: text, kind: k} }

type kindError struct {
	text string
	kind Kind
}

func (e *kindError) Error() string { return e.text }
func (e *kindError) Kind() Kind    { return e.kind }
