package c2prover

import "fmt"

// Status is a c2prover status code: the header's C2P_ERR_* values (the
// Status* constants are taken from c2prover.h in cgo.go).
type Status int32

// String is the status's C name, e.g. "C2P_ERR_IO".
func (s Status) String() string { return statusName(s) }

// Error is a failed c2prover call: its status and the library's message.
// errors.Is matches it against the Err* values by status; errors.As gives
// the *Error.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("c2prover: %v", e.Status)
	}
	return fmt.Sprintf("c2prover: %v: %s", e.Status, e.Message)
}

// Is reports whether target is an *Error with the same status.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status
}

// Sentinels for errors.Is, one per status.
var (
	ErrNullPointer     = &Error{Status: StatusNullPointer}
	ErrInvalidArgument = &Error{Status: StatusInvalidArgument}
	ErrIO              = &Error{Status: StatusIO}
	ErrParamsFormat    = &Error{Status: StatusParamsFormat}
	ErrSizeMismatch    = &Error{Status: StatusSizeMismatch}
	ErrOutOfMemory     = &Error{Status: StatusOutOfMemory}
	ErrGPU             = &Error{Status: StatusGPU}
	ErrBusy            = &Error{Status: StatusBusy}
	ErrCancelled       = &Error{Status: StatusCancelled}
	ErrBadState        = &Error{Status: StatusBadState}
	ErrPanic           = &Error{Status: StatusPanic}
	ErrUnsupported     = &Error{Status: StatusUnsupported}
)
