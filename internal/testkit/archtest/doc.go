// Package archtest holds berth's architecture rules as tests: which
// packages (or files) are pure planners that must not import RPC, API
// clients, HTTP, processes, the clock or randomness (pure_test.go); that
// every map keyed by pod UID has an owner that forgets a pod that is gone,
// through the one route by which per-pod state ends, internal/pod/podgone
// (forget_test.go, STYLE rule 20). It has no code.
package archtest
