package bench

import (
	"strings"
	"testing"
	"time"
)

func TestCountRequests(t *testing.T) {
	from := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	line := func(id, user string, at time.Time) string {
		return `{"kind":"Event","auditID":"` + id + `","stage":"ResponseComplete","user":{"username":"` + user +
			`","groups":["system:nodes"]},"userAgent":"berth/v0","requestReceivedTimestamp":"` + at.Format(time.RFC3339Nano) + `"}`
	}
	log := strings.Join([]string{
		line("a", "system:node:n1", from.Add(time.Second)),
		line("b", "system:node:n1", from.Add(2*time.Second)),
		line("b", "system:node:n1", from.Add(2*time.Second)), // the watch's second event
		line("c", "system:node:n2", from.Add(3*time.Second)), // another user
		line("d", "system:node:n1", from.Add(-time.Second)),  // before the window
		line("e", "system:node:n1", from.Add(time.Minute)),   // at its end: excluded
	}, "\n")
	got, err := countRequests(strings.NewReader(log), "system:node:n1", from, from.Add(time.Minute))
	if err != nil || got != 2 {
		t.Errorf("countRequests = %d, %v; want 2", got, err)
	}
	if _, err := countRequests(strings.NewReader("{not json"), "u", from, from); err == nil {
		t.Error("countRequests of a broken log: no error")
	}
}
