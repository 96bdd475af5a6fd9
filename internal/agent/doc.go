// Package agent wires berth together: it builds every component from the
// loaded configuration, starts them in order and stops them in reverse.
package agent
