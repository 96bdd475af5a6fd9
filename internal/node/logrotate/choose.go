package logrotate

import (
	"slices"
	"strings"
	"time"
)

// Names of rotated files, as upstream's container log manager: the
// current log <log> is renamed <log>.<timestamp>, then compressed to
// <log>.<timestamp>.gz through <log>.<timestamp>.tmp.
const (
	timestampFormat = "20060102-150405"
	compressSuffix  = ".gz"
	tmpSuffix       = ".tmp"
)

// Policy is upstream's LogRotatePolicy.
type Policy struct {
	// MaxSize: the current log is rotated once it is at least this big.
	MaxSize int64
	// MaxFiles counts the current log and every rotated one.
	MaxFiles int
}

// Plan is what Choose decided for one container's log. The names are base
// names in the log's directory.
type Plan struct {
	// Remove: temporary files and rotated files already compressed (left
	// by an interrupted compression), then the oldest rotated files beyond
	// MaxFiles-2, oldest first.
	Remove []string
	// Compress: the rotated files that stay and are not compressed yet.
	Compress []string
	// RotateTo is the name the current log is renamed to before the
	// runtime reopens it.
	RotateTo string
}

// Choose decides, as upstream's rotateLog, what to do with the log named
// base whose size is size, given the names of the files beside it that
// start with base+"." (rotated ones). It returns false when the log is
// smaller than p.MaxSize (or p.MaxSize is negative: rotation is off).
// After the plan, the rotated files are at most MaxFiles-2 compressed ones
// and the one just rotated, uncompressed, so that with the new current log
// there are at most MaxFiles.
func Choose(base string, size int64, rotated []string, p Policy, now time.Time) (Plan, bool) {
	if p.MaxSize < 0 || size < p.MaxSize {
		return Plan{}, false
	}
	var plan Plan
	names := slices.Clone(rotated)
	slices.Sort(names)
	var inUse []string
	for _, n := range names {
		if !strings.HasPrefix(n, base+".") {
			continue
		}
		if unused(n, names) {
			plan.Remove = append(plan.Remove, n)
			continue
		}
		inUse = append(inUse, n)
	}
	keep := max(p.MaxFiles-2, 0)
	if excess := len(inUse) - keep; excess > 0 {
		plan.Remove = append(plan.Remove, inUse[:excess]...)
		inUse = inUse[excess:]
	}
	for _, n := range inUse {
		if !strings.HasSuffix(n, compressSuffix) {
			plan.Compress = append(plan.Compress, n)
		}
	}
	plan.RotateTo = base + "." + now.Format(timestampFormat)
	return plan, true
}

// unused reports, as upstream's isInUse negated, whether n is a leftover:
// a temporary file, or a rotated file whose compressed copy exists.
func unused(n string, names []string) bool {
	if strings.HasSuffix(n, tmpSuffix) {
		return true
	}
	if strings.HasSuffix(n, compressSuffix) {
		return false
	}
	return slices.Contains(names, n+compressSuffix)
}
