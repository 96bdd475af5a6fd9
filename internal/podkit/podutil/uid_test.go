package podutil

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestValidateUID(t *testing.T) {
	tests := []struct {
		name    string
		uid     types.UID
		wantErr string
	}{
		{name: "api server UUID", uid: "1f0c7a52-3c2e-4b8e-9d0a-6f7e2b1c9a44"},
		{name: "static pod hash", uid: "0123456789abcdef0123456789abcdef"},
		{name: "manifest uid with capitals and dots", uid: "My.Static-Pod1"},
		{name: "one character", uid: "x"},
		{name: "longest", uid: types.UID(strings.Repeat("a", MaxUIDLength))},
		{name: "empty", uid: "", wantErr: "must not be empty"},
		{name: "dot", uid: ".", wantErr: "begin and end"},
		{name: "dot dot", uid: "..", wantErr: "begin and end"},
		{name: "parent traversal", uid: "../x", wantErr: "begin and end"},
		{name: "deeper traversal", uid: "a/../../x", wantErr: "letters, digits"},
		{name: "slash", uid: "a/b", wantErr: "letters, digits"},
		{name: "absolute", uid: "/etc", wantErr: "begin and end"},
		{name: "NUL", uid: "a\x00b", wantErr: "letters, digits"},
		{name: "underscore splits the log directory name", uid: "a_b", wantErr: "letters, digits"},
		{name: "space", uid: "a b", wantErr: "letters, digits"},
		{name: "non-ASCII", uid: "äb", wantErr: "begin and end"},
		{name: "trailing dot", uid: "a.", wantErr: "begin and end"},
		{name: "too long", uid: types.UID(strings.Repeat("a", MaxUIDLength+1)), wantErr: "no more than 128"},
		{name: "very long", uid: types.UID(strings.Repeat("a/", 10000)), wantErr: "no more than 128"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateUID(tc.uid)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("ValidateUID(%q) = %v, want nil", tc.uid, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("ValidateUID(%q) = %v, want an error containing %q", tc.uid, err, tc.wantErr)
			}
			if err != nil && len(err.Error()) > MaxUIDLength+200 {
				t.Errorf("error is %d bytes long: a long UID must be cut", len(err.Error()))
			}
		})
	}
}
