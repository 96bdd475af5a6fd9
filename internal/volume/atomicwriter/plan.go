package atomicwriter

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
)

// File is one file of a payload: its content, its permission bits and,
// when FsUser is set, the user that owns it.
type File struct {
	Data   []byte
	Mode   int32
	FsUser *int64
}

// Payload maps a relative, slash-separated path to the file written there.
type Payload map[string]File

// Plan is what a write of a new payload over an old one does.
type Plan struct {
	// Changed is true when the set of paths or any content differs; the
	// payload is then written into a new timestamped directory. Modes alone
	// do not count, as upstream (content and paths decide).
	Changed bool
	// Visible are the top-level names that must exist as symlinks into
	// ..data after the write, sorted.
	Visible []string
	// Remove are the user-visible top-level names of the old payload that
	// the new one no longer has, sorted.
	Remove []string
}

// ValidatePath rejects paths that would escape the volume directory or
// collide with the writer's own names, with upstream's rules: not empty, not
// absolute, at most 4096 bytes, no ".." element and not starting with "..".
func ValidatePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("invalid path: must not be empty")
	case len(p) > 4096:
		return fmt.Errorf("invalid path %q: must be less than or equal to 4096 characters", p)
	case path.IsAbs(p):
		return fmt.Errorf("invalid path %q: must be relative path", p)
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("invalid path %q: must not start with '..'", p)
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return fmt.Errorf("invalid path %q: must not contain '..'", p)
		}
	}
	return nil
}

// Compute returns the plan for writing next over old (nil when the
// directory holds no version yet). It validates every path of next.
func Compute(old, next Payload) (Plan, error) {
	for p := range next {
		if err := ValidatePath(p); err != nil {
			return Plan{}, err
		}
	}
	plan := Plan{Changed: old == nil || !sameContent(old, next)}
	newTop := topLevels(next)
	plan.Visible = sortedKeys(newTop)
	for top := range topLevels(old) {
		if !newTop[top] {
			plan.Remove = append(plan.Remove, top)
		}
	}
	sort.Strings(plan.Remove)
	return plan, nil
}

func sameContent(a, b Payload) bool {
	if len(a) != len(b) {
		return false
	}
	for p, f := range a {
		g, ok := b[p]
		if !ok || !bytes.Equal(f.Data, g.Data) {
			return false
		}
	}
	return true
}

// topLevels returns the first path element of every path.
func topLevels(p Payload) map[string]bool {
	out := map[string]bool{}
	for k := range p {
		top, _, _ := strings.Cut(path.Clean(k), "/")
		out[top] = true
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
