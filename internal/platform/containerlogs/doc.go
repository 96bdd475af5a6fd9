// Package containerlogs reads container log files in the CRI log format and
// serves the kubelet's GET /containerLogs/{namespace}/{pod}/{container}.
//
// It owns: parsing CRI log lines (parse.go), turning the request's query into
// options and validating them as upstream does (options.go), choosing which
// container instance a request reads (pick.go), reading a container's log
// across its rotated files with since, timestamps, limitBytes and stream
// selection, and following it until the container exits (read.go); tailLines,
// found by reading backwards from the end with one block of memory however
// large the log (tailplan.go decides, backscan.go and backlog.go read), as
// upstream's findTailLineStartIndex does; Tail for termination messages
// (tail.go), and the HTTP handler (handler.go).
//
// The pure parts (ParseLine, ParseQuery, Validate, pickContainer, the entry
// writer) take no I/O and no wall clock.
package containerlogs
