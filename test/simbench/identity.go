package simbench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/berthk8s/berth/test/bench"
)

// Each simulator's identity at the API server, by which the audit log
// tells its requests from the harness's and the control plane's: berth
// simulate and kwok run with client certificates of their own (in
// system:masters, as an admin's kubeconfig: both write every Node), each
// hollow node with its node's (system:node:<name>, as a kubelet).
const (
	berthUser      = "simbench:berth"
	kwokUser       = "simbench:kwok"
	nodeUserPrefix = "system:node:"
)

// nodePrefix is the prefix of each simulator's node names.
func nodePrefix(sim string) string {
	switch sim {
	case Kwok:
		return "sb-kwok-"
	case Kubemark:
		return "sb-hollow-"
	}
	return "sb-berth-"
}

// nodeName is the name of node i of sim.
func nodeName(sim string, i int) string { return fmt.Sprintf("%s%d", nodePrefix(sim), i) }

// requestsOf matches the audit events of sim's requests by user name. It
// is pure.
func requestsOf(sim string) func(user, userAgent string) bool {
	switch sim {
	case Kwok:
		return func(user, _ string) bool { return user == kwokUser }
	case Kubemark:
		prefix := nodeUserPrefix + nodePrefix(Kubemark)
		return func(user, _ string) bool { return strings.HasPrefix(user, prefix) }
	}
	return func(user, _ string) bool { return user == berthUser }
}

// span is a time range [from, to).
type span struct{ from, to time.Time }

// countSpans counts sim's requests in each span of the audit log at path,
// one pass over the log each. The log is path with the backups the API
// server rotated it into before (auditFiles).
func countSpans(path, sim string, spans []span) ([]int, error) {
	names, err := filepath.Glob(filepath.Join(filepath.Dir(path), auditBackupGlob(path)))
	if err != nil {
		return nil, err
	}
	files := auditFiles(path, names)
	out := make([]int, len(spans))
	for i, s := range spans {
		if s.from.IsZero() || !s.to.After(s.from) {
			continue
		}
		if out[i], err = countIn(files, sim, s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// countIn counts sim's requests in span s over files, read as one log.
func countIn(files []string, sim string, s span) (int, error) {
	var readers []io.Reader
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return 0, fmt.Errorf("open audit log: %w", err)
		}
		defer f.Close()
		readers = append(readers, f)
	}
	return bench.CountRequests(io.MultiReader(readers...), requestsOf(sim), s.from, s.to)
}

// The API server rotates its audit log at 100 MB by default
// (--audit-log-maxsize, through lumberjack): audit.log becomes
// audit-<UTC time, 2006-01-02T15-04-05.000>.log beside it, and a run of
// hundreds of nodes writes several. auditBackupGlob is the pattern of
// those backups' names.
func auditBackupGlob(path string) string {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	return strings.TrimSuffix(base, ext) + "-*" + ext
}

// auditFiles orders the audit log's files oldest first: the backups by
// their time stamp (their names sort by it), then the log itself. It is
// pure.
func auditFiles(path string, backups []string) []string {
	out := slices.Clone(backups)
	slices.Sort(out)
	return append(slices.DeleteFunc(out, func(n string) bool { return n == path }), path)
}
