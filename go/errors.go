package c2prover

import "fmt"

// Status is a c2prover status code (C2P_* in c2prover.h).
type Status int32

const (
	StatusNullPointer     Status = 1
	StatusInvalidArgument Status = 2
	StatusIO              Status = 3
	StatusParamsFormat    Status = 4
	StatusSizeMismatch    Status = 5
	StatusOutOfMemory     Status = 6
	StatusGPU             Status = 7
	StatusBusy            Status = 8
	StatusCancelled       Status = 9
	StatusBadState        Status = 10
	StatusPanic           Status = 11
	StatusUnsupported     Status = 12
)

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
