package cri

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

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
	// ErrInProgress: the runtime is still serving an earlier request on the
	// same sandbox or container (one whose caller went away: a kubelet
	// killed, a call timed out): it holds the name for a creation, or the
	// container is starting or being removed. It clears when that request
	// ends. No gRPC code says so (containerd 1.x answers Unknown, 2.x
	// FailedPrecondition for a name): the runtime's message does. An error
	// of this class may have another class as well.
	ErrInProgress = errors.New("request in progress")
)

// inProgressMessages are what runtimes say for ErrInProgress: containerd's
// registrar (`name "…" is reserved for "…"`) and its container states,
// CRI-O's name reservation.
var inProgressMessages = []string{"is reserved for", "name is reserved", "is already in starting state", "is already in removing state"}

// inProgress reports whether a runtime's message says ErrInProgress.
func inProgress(msg string) bool {
	for _, m := range inProgressMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// classes maps the gRPC codes berth distinguishes to their sentinels. Codes
// not listed (Unknown, Internal, FailedPrecondition, ...) have no class:
// callers treat them as generic runtime failures.
var classes = map[codes.Code]error{
	codes.NotFound:         ErrNotFound,
	codes.AlreadyExists:    ErrAlreadyExists,
	codes.Unavailable:      ErrUnavailable,
	codes.DeadlineExceeded: ErrDeadlineExceeded,
	codes.Unimplemented:    ErrUnimplemented,
	codes.InvalidArgument:  ErrInvalidArgument,
	codes.Canceled:         ErrCanceled,
}

// Error is a classified error returned by a CRI call. Its message reads
// "cri <Method>: <class>: <runtime's message>", for example
// "cri ContainerStatus: not found: an error occurred when try to find
// container \"abc\": not found".
//
// errors.Is(err, ErrNotFound) (and the other sentinels) answers through
// Unwrap; a DeadlineExceeded or Canceled error also matches
// context.DeadlineExceeded or context.Canceled. status.Code(err) still
// returns the original gRPC code through GRPCStatus, for tools and tests;
// berth's own code uses the sentinels.
//
// An Error is immutable and safe to share.
type Error struct {
	// Method is the short RPC name, e.g. "ContainerStatus".
	Method string
	// Message is the runtime's own description of the failure.
	Message string

	st    *status.Status
	class error
	// inProgress: the message says ErrInProgress.
	inProgress bool
}

func (e *Error) Error() string {
	what := e.st.Code().String()
	if e.class != nil {
		what = e.class.Error()
	}
	return fmt.Sprintf("cri %s: %s: %s", e.Method, what, e.Message)
}

// Unwrap returns the sentinel class, ErrInProgress when the message says
// so and, for deadlines and cancellations, the matching context error.
func (e *Error) Unwrap() []error {
	var out []error
	if e.class != nil {
		out = append(out, e.class)
	}
	if e.inProgress {
		out = append(out, ErrInProgress)
	}
	switch e.st.Code() {
	case codes.DeadlineExceeded:
		out = append(out, context.DeadlineExceeded)
	case codes.Canceled:
		out = append(out, context.Canceled)
	}
	return out
}

// GRPCStatus lets status.FromError and status.Code see the original status.
func (e *Error) GRPCStatus() *status.Status { return e.st }

// classify turns an error returned by a gRPC call of method into an *Error.
// It is applied once, by the interceptors; an error that is already an
// *Error passes through unchanged. Errors that carry no gRPC status (which
// grpc-go does not produce for unary calls) are wrapped with the method name.
func classify(method string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("cri %s: %w", method, err)
	}
	return &Error{Method: method, Message: st.Message(), st: st, class: classes[st.Code()], inProgress: inProgress(st.Message())}
}

// StatusError returns a gRPC status error with the code that classify maps
// to class, so that a CRI server or fake can answer with an error berth will
// classify as class (a class berth does not know gives codes.Unknown).
func StatusError(class error, msg string) error {
	for code, c := range classes {
		if c == class {
			return status.Error(code, msg)
		}
	}
	return status.Error(codes.Unknown, msg)
}
