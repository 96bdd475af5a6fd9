package atomicwriter

import (
	"bytes"
	"fmt"
	"sort"
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

// Normalize validates every path of p and returns p keyed by the cleaned
// form (CleanPath). Two paths with one cleaned form ("a" and "./a") are an
// error: which content wins would be a guess.
func Normalize(p Payload) (Payload, error) {
	out := make(Payload, len(p))
	for raw, f := range p {
		clean, err := CleanPath(raw)
		if err != nil {
			return nil, err
		}
		if _, dup := out[clean]; dup {
			return nil, fmt.Errorf("invalid path %q: names the same file as another item", raw)
		}
		out[clean] = f
	}
	return out, nil
}

// Compute returns the plan for writing next over old (nil when the
// directory holds no version yet). It validates every path of next and
// plans in the cleaned form only. Paths of old that are not valid (old is
// read from disk) are left out: they are never named by the plan, so a
// stray file in a version directory cannot make the writer remove one of
// its own names.
func Compute(old, next Payload) (Plan, error) {
	next, err := Normalize(next)
	if err != nil {
		return Plan{}, err
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

// topLevels returns the first element of every valid path of p.
func topLevels(p Payload) map[string]bool {
	out := map[string]bool{}
	for k := range p {
		if clean, err := CleanPath(k); err == nil {
			out[topLevel(clean)] = true
		}
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
