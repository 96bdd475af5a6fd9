package podutil

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// MaxUIDLength is the longest pod UID berth accepts. The API server's
// UIDs (UUIDs) have 36 characters and berth's static pod UIDs 32.
const MaxUIDLength = 128

// ValidateUID is the one rule a pod UID must pass before berth uses it,
// and it must pass before the UID becomes a path element: berth keeps each
// pod's files in <root>/pods/<uid> and its logs in
// <namespace>_<name>_<uid>. A valid UID has 1 to MaxUIDLength ASCII
// letters, digits, '-' and '.', and begins and ends with a letter or a
// digit. So it is never empty, ".", ".." or absolute, never holds a '/',
// a NUL or the '_' that separates the log directory's parts. It is pure.
func ValidateUID(uid types.UID) error {
	if reason := UIDProblem(uid); reason != "" {
		return fmt.Errorf("invalid pod UID %q: %s", ShortUID(uid), reason)
	}
	return nil
}

// UIDProblem says what is wrong with uid, or "" when it is valid: the
// reason ValidateUID gives, for a caller that builds its own error.
func UIDProblem(uid types.UID) string {
	switch {
	case uid == "":
		return "must not be empty"
	case len(uid) > MaxUIDLength:
		return fmt.Sprintf("must be no more than %d characters", MaxUIDLength)
	case !isAlnum(uid[0]) || !isAlnum(uid[len(uid)-1]):
		return "must begin and end with a letter or a digit"
	}
	for i := 0; i < len(uid); i++ {
		if c := uid[i]; !isAlnum(c) && c != '-' && c != '.' {
			return "must consist of letters, digits, '-' and '.'"
		}
	}
	return ""
}

// ShortUID cuts a UID too long to be valid, for an error message.
func ShortUID(uid types.UID) string {
	if len(uid) > MaxUIDLength {
		return string(uid[:MaxUIDLength]) + "..."
	}
	return string(uid)
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
