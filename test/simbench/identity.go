package simbench

import (
	"fmt"
	"os"
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
// one pass over the log each.
func countSpans(path, sim string, spans []span) ([]int, error) {
	out := make([]int, len(spans))
	for i, s := range spans {
		if s.from.IsZero() || !s.to.After(s.from) {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open audit log: %w", err)
		}
		out[i], err = bench.CountRequests(f, requestsOf(sim), s.from, s.to)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
