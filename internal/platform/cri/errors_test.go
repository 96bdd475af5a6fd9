package cri

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantIs   []error
		wantNot  []error
		wantMsg  string
		wantCode codes.Code
	}{
		{
			name:     "not found",
			err:      status.Error(codes.NotFound, `an error occurred when try to find container "abc": not found`),
			wantIs:   []error{ErrNotFound},
			wantNot:  []error{ErrUnavailable, context.DeadlineExceeded},
			wantMsg:  `cri ContainerStatus: not found: an error occurred when try to find container "abc": not found`,
			wantCode: codes.NotFound,
		},
		{name: "already exists", err: status.Error(codes.AlreadyExists, "x"), wantIs: []error{ErrAlreadyExists}, wantMsg: "cri ContainerStatus: already exists: x", wantCode: codes.AlreadyExists},
		{name: "unavailable", err: status.Error(codes.Unavailable, "connection refused"), wantIs: []error{ErrUnavailable}, wantMsg: "cri ContainerStatus: runtime unavailable: connection refused", wantCode: codes.Unavailable},
		{name: "deadline", err: status.Error(codes.DeadlineExceeded, "context deadline exceeded"), wantIs: []error{ErrDeadlineExceeded, context.DeadlineExceeded}, wantNot: []error{context.Canceled}, wantMsg: "cri ContainerStatus: deadline exceeded: context deadline exceeded", wantCode: codes.DeadlineExceeded},
		{name: "canceled", err: status.Error(codes.Canceled, "context canceled"), wantIs: []error{ErrCanceled, context.Canceled}, wantMsg: "cri ContainerStatus: canceled: context canceled", wantCode: codes.Canceled},
		{name: "unimplemented", err: status.Error(codes.Unimplemented, "unknown method"), wantIs: []error{ErrUnimplemented}, wantMsg: "cri ContainerStatus: unimplemented: unknown method", wantCode: codes.Unimplemented},
		{name: "invalid argument", err: status.Error(codes.InvalidArgument, "bad"), wantIs: []error{ErrInvalidArgument}, wantMsg: "cri ContainerStatus: invalid argument: bad", wantCode: codes.InvalidArgument},
		{
			name:     "unknown has no class",
			err:      status.Error(codes.Unknown, "failed to create containerd task"),
			wantNot:  []error{ErrNotFound, ErrUnavailable, ErrDeadlineExceeded, ErrUnimplemented, ErrInvalidArgument, ErrCanceled, ErrAlreadyExists, ErrInProgress},
			wantMsg:  "cri ContainerStatus: Unknown: failed to create containerd task",
			wantCode: codes.Unknown,
		},
		{
			name:     "a sandbox name containerd 1.6 still holds",
			err:      status.Error(codes.Unknown, `failed to reserve sandbox name "web_default_u1_0": name "web_default_u1_0" is reserved for "a8ff6695"`),
			wantIs:   []error{ErrInProgress},
			wantNot:  []error{ErrAlreadyExists, ErrUnavailable},
			wantMsg:  `cri ContainerStatus: Unknown: failed to reserve sandbox name "web_default_u1_0": name "web_default_u1_0" is reserved for "a8ff6695"`,
			wantCode: codes.Unknown,
		},
		{
			name:     "a container name containerd 2 still holds",
			err:      status.Error(codes.FailedPrecondition, `failed to reserve container name "c_web_default_u1_0"; check if another CreateContainer request is in progress: name "c_web_default_u1_0" is reserved for "ede1"`),
			wantIs:   []error{ErrInProgress},
			wantMsg:  `cri ContainerStatus: FailedPrecondition: failed to reserve container name "c_web_default_u1_0"; check if another CreateContainer request is in progress: name "c_web_default_u1_0" is reserved for "ede1"`,
			wantCode: codes.FailedPrecondition,
		},
		{name: "a name CRI-O still holds", err: status.Error(codes.Unknown, `error reserving pod name k8s_web_default_u1_0 for id 1f2: name is reserved`), wantIs: []error{ErrInProgress}, wantMsg: "cri ContainerStatus: Unknown: error reserving pod name k8s_web_default_u1_0 for id 1f2: name is reserved", wantCode: codes.Unknown},
		{name: "a container containerd is still starting", err: status.Error(codes.Unknown, `failed to set starting state for container "c": container is already in starting state`), wantIs: []error{ErrInProgress}, wantMsg: `cri ContainerStatus: Unknown: failed to set starting state for container "c": container is already in starting state`, wantCode: codes.Unknown},
		{name: "internal", err: status.Error(codes.Internal, "boom"), wantNot: []error{ErrNotFound}, wantMsg: "cri ContainerStatus: Internal: boom", wantCode: codes.Internal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := classify("ContainerStatus", tc.err)
			for _, want := range tc.wantIs {
				if !errors.Is(err, want) {
					t.Errorf("errors.Is(%v, %v) = false, want true", err, want)
				}
			}
			for _, not := range tc.wantNot {
				if errors.Is(err, not) {
					t.Errorf("errors.Is(%v, %v) = true, want false", err, not)
				}
			}
			if err.Error() != tc.wantMsg {
				t.Errorf("message = %q, want %q", err.Error(), tc.wantMsg)
			}
			if got := status.Code(err); got != tc.wantCode {
				t.Errorf("status.Code = %v, want %v", got, tc.wantCode)
			}
			// Wrapping keeps the class; classifying again changes nothing.
			wrapped := fmt.Errorf("start container %q: %w", "app", err)
			for _, want := range tc.wantIs {
				if !errors.Is(wrapped, want) {
					t.Errorf("wrapped: errors.Is(%v, %v) = false", wrapped, want)
				}
			}
			if again := classify("Other", wrapped); again != wrapped {
				t.Errorf("classify of a classified error = %v, want it unchanged", again)
			}
		})
	}
	if classify("Version", nil) != nil {
		t.Error("classify(nil) != nil")
	}
	plain := classify("Version", errors.New("plain"))
	if plain.Error() != "cri Version: plain" {
		t.Errorf("classify(plain) = %q", plain)
	}
}

func TestStatusErrorRoundTrip(t *testing.T) {
	for _, class := range []error{ErrNotFound, ErrAlreadyExists, ErrUnavailable, ErrDeadlineExceeded, ErrUnimplemented, ErrInvalidArgument, ErrCanceled} {
		err := classify("PullImage", StatusError(class, "msg"))
		if !errors.Is(err, class) {
			t.Errorf("StatusError(%v) classifies as %v", class, err)
		}
	}
	if got := status.Code(StatusError(errors.New("other"), "msg")); got != codes.Unknown {
		t.Errorf("StatusError(unknown class) code = %v, want Unknown", got)
	}
}
