package criproxy

import (
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// Fault is what the proxy does to the calls of one method before (or
// instead of) forwarding them.
type Fault struct {
	// Method is the method's name ("ListPodSandbox"), its full name
	// ("/runtime.v1.RuntimeService/ListPodSandbox"), or "*" for every
	// method.
	Method string
	// Delay holds each call this long before it goes on (or fails).
	Delay time.Duration
	// Code, when not codes.OK, fails the call with it (after Delay)
	// instead of forwarding it, and Message, "criproxy: injected <code>"
	// when empty.
	Code    codes.Code
	Message string
	// Hang holds each call until the fault is cleared (then it is
	// forwarded) or the caller's context ends.
	Hang bool
	// Times is how many calls the fault applies to; 0 is every call until
	// it is cleared.
	Times int
}

// matches says whether f applies to the call of fullMethod.
func (f *Fault) matches(fullMethod string) bool {
	if f.Method == "*" {
		return true
	}
	if strings.HasPrefix(f.Method, "/") {
		return f.Method == fullMethod
	}
	return fullMethod[strings.LastIndexByte(fullMethod, '/')+1:] == f.Method
}

// pick returns the first of faults that applies to fullMethod, with the
// faults left once it has been used (a fault with Times is spent one call
// at a time; a spent one goes). nil when none applies. faults is not
// modified.
func pick(faults []Fault, fullMethod string) (*Fault, []Fault) {
	for i := range faults {
		if !faults[i].matches(fullMethod) {
			continue
		}
		f := faults[i]
		left := append([]Fault(nil), faults...)
		switch {
		case f.Times == 1:
			left = append(left[:i], left[i+1:]...)
		case f.Times > 1:
			left[i].Times--
		}
		return &f, left
	}
	return nil, faults
}
