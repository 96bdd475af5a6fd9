// Package csifake is a fake CSI driver for tests: it serves the CSI
// Identity and Node services on a unix socket, answers NodeGetInfo and
// NodeGetCapabilities with what it is given, accepts every stage, publish,
// stats and expand call (making and removing the publications' target
// paths when asked to, as a real driver does), fails the calls a test
// asks it to, and records every call with a copy of its request.
//
//	driver.go  Config, Start, Driver: its answers, error injection and call log
package csifake
