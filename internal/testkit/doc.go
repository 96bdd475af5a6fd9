// Package testkit is the wing of test support, imported only by tests:
// archtest holds the architecture's rules (the wings and what each may
// import, the pure files), and upstreamsrc reads the upstream source a
// test pins a table to.
package testkit
