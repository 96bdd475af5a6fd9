package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// auditEvent is the part of an audit.k8s.io/v1 Event the count needs.
type auditEvent struct {
	AuditID string `json:"auditID"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent string    `json:"userAgent"`
	Received  time.Time `json:"requestReceivedTimestamp"`
}

// countRequests counts the distinct requests (by audit ID) that user sent
// and the API server received in [from, to), from a JSON-lines audit log.
// A watch logs two events (started, complete) and counts once.
func countRequests(log io.Reader, user string, from, to time.Time) (int, error) {
	return CountRequests(log, func(u, _ string) bool { return u == user }, from, to)
}

// CountRequests counts the distinct requests (by audit ID) whose user
// name and user agent match accepts and that the API server received in
// [from, to), from a JSON-lines audit log; countRequests is it for one
// user. test/simbench counts each simulator's requests with it.
func CountRequests(log io.Reader, match func(user, userAgent string) bool, from, to time.Time) (int, error) {
	seen := map[string]bool{}
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return 0, fmt.Errorf("parse audit event: %w", err)
		}
		if !match(ev.User.Username, ev.UserAgent) || ev.Received.Before(from) || !ev.Received.Before(to) {
			continue
		}
		seen[ev.AuditID] = true
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read audit log: %w", err)
	}
	return len(seen), nil
}
