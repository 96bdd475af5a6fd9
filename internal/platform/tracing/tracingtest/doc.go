// Package tracingtest is test support: an in-process OTLP gRPC trace
// collector that keeps the spans it receives, for tests of what berth
// exports. Only _test.go files import it.
package tracingtest
