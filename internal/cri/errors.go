package cri

import "errors"

// Classes of CRI errors. The interceptors wrap every gRPC error so that
// errors.Is(err, ErrX) answers; the original message is kept.
var (
	ErrNotFound         = errors.New("not found")
	ErrAlreadyExists    = errors.New("already exists")
	ErrUnavailable      = errors.New("runtime unavailable")
	ErrDeadlineExceeded = errors.New("deadline exceeded")
	ErrUnimplemented    = errors.New("unimplemented")
	ErrInvalidArgument  = errors.New("invalid argument")
	ErrCanceled         = errors.New("canceled")
)
