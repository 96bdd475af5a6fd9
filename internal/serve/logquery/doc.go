// Package logquery owns the node log query of the kubelet API
// (enableSystemLogQuery, the NodeLogQuery feature): GET
// /logs/?query=<service or file>&sinceTime=&untilTime=&tailLines=&pattern=&boot=
// as upstream v1.37's pkg/kubelet/kubelet_server_journal.go serves it on Linux: a
// service's journal through journalctl, or, for a service that does not
// log to the journal, the first of /var/log/<service>,
// /var/log/<service>.log and /var/log/<service>/<service>.log; a file
// query is served as /logs/<file>.
//
// Work on the request is bounded (STYLE.md rule 16): every parameter is
// validated as upstream (service names of safe characters only, at most
// four, tailLines up to 100000, a Perl regexp), journalctl runs with
// arguments built from the validated query, never through a shell, under
// upstream's 30 s deadline, and what any query writes is capped
// (MaxOutputBytes).
//
//	query.go    Query, Parse and Validate: upstream's newNodeLogQuery and validate, pure
//	args.go     JournalArgs, the journalctl arguments of a query, pure
//	handler.go  Handler: the /logs/ handler in query mode, journalctl and the file heuristics
package logquery
