// Package app is the wing of the wiring: agent builds every other wing's
// components from the loaded configuration, starts them in order and stops
// them in reverse. Nothing imports it but cmd/berth, and it decides
// nothing a wing can decide itself.
package app
