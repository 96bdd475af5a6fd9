package logquery

import (
	"fmt"
	"strconv"
)

// dateLayout is upstream's journalctl time format (UTC, with --utc).
const dateLayout = "2006-1-2 15:4:5"

// JournalArgs returns the journalctl arguments of a validated query for
// services, as upstream's getLoggingCmd on Linux. Each value is one
// argument: nothing is ever interpreted by a shell.
func JournalArgs(q *Query, services []string) []string {
	args := []string{"--utc", "--no-pager", "--output=short-precise"}
	if q.SinceTime != nil {
		args = append(args, "--since="+q.SinceTime.Format(dateLayout))
	}
	if q.UntilTime != nil {
		args = append(args, "--until="+q.UntilTime.Format(dateLayout))
	}
	if q.TailLines != nil {
		args = append(args, "--pager-end", fmt.Sprintf("--lines=%d", *q.TailLines))
	}
	for _, s := range services {
		if s != "" {
			args = append(args, "--unit="+s)
		}
	}
	if q.Pattern != "" {
		args = append(args, "--grep="+q.Pattern)
	}
	if q.Boot != nil {
		args = append(args, "--boot", strconv.Itoa(*q.Boot))
	}
	return args
}

// unitsArgs are the arguments that list the units the journal has
// entries of (upstream's checkForNativeLogger).
func unitsArgs() []string { return []string{"--field", "_SYSTEMD_UNIT"} }
