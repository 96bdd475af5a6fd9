// Package archtest holds berth's architecture rules as tests: which
// packages (or files) are pure planners that must not import RPC, API
// clients, HTTP, processes, the clock or randomness. It has no code.
package archtest
