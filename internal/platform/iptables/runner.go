package iptables

import (
	"context"
	"errors"
	"fmt"
	"time"

	utilexec "k8s.io/utils/exec"
)

// callTimeout bounds one iptables call. "-w 5" already bounds the wait for
// the xtables lock; the rest is the kernel's.
const callTimeout = time.Minute

// Exit statuses of iptables.
const (
	exitOperationFailed = 1 // the chain exists (-N), the rule does not (-C)
	exitResourceProblem = 4 // e.g. the lock could not be taken
)

// Runner runs iptables (or ip6tables) for one family: each call is the
// binary with its arguments (never a shell), "-w 5" as upstream's, and a
// timeout. Its methods are safe for concurrent use.
type Runner struct {
	exec   utilexec.Interface
	family Family
}

// NewRunner returns a Runner for family through exec.
func NewRunner(exec utilexec.Interface, family Family) *Runner {
	return &Runner{exec: exec, family: family}
}

// Family is the runner's IP family.
func (r *Runner) Family() Family { return r.family }

// binary is upstream's iptablesCommand.
func (r *Runner) binary() string {
	if r.family == IPv6 {
		return "ip6tables"
	}
	return "iptables"
}

// Args returns the arguments of one call: upstream's "-w 5", the
// operation, the chain, the table and the rule.
func Args(op, table, chain string, rule ...string) []string {
	return append([]string{"-w", "5", op, chain, "-t", table}, rule...)
}

func (r *Runner) run(ctx context.Context, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	out, err := r.exec.CommandContext(ctx, r.binary(), args...).CombinedOutput()
	if ctx.Err() != nil {
		return out, fmt.Errorf("run %s %v: %w", r.binary(), args, ctx.Err())
	}
	return out, err
}

// exitStatus is err's exit status, or -1 when err is not an exit.
func exitStatus(err error) int {
	var ee utilexec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return ee.ExitStatus()
	}
	return -1
}

// Present says whether this family's iptables works: upstream's check
// that the nat table's POSTROUTING chain can be listed.
func (r *Runner) Present(ctx context.Context) error {
	_, err := r.ChainExists(ctx, TableNAT, "POSTROUTING")
	return err
}

// EnsureChain makes chain in table unless it exists.
func (r *Runner) EnsureChain(ctx context.Context, table, chain string) error {
	out, err := r.run(ctx, Args("-N", table, chain))
	if err != nil && exitStatus(err) != exitOperationFailed {
		return fmt.Errorf("create chain %q in table %q: %w: %s", chain, table, err, out)
	}
	return nil
}

// ChainExists says whether chain exists in table; an error that is not
// the chain's absence is returned too (see IsResourceError).
func (r *Runner) ChainExists(ctx context.Context, table, chain string) (bool, error) {
	out, err := r.run(ctx, Args("-S", table, chain))
	if err != nil {
		return false, fmt.Errorf("list chain %q in table %q: %w: %s", chain, table, err, out)
	}
	return true, nil
}

// IsResourceError says whether err is iptables failing to look (the lock,
// say) rather than the chain missing.
func IsResourceError(err error) bool { return exitStatus(err) == exitResourceProblem }

// EnsureRule adds the rule to chain in table at position unless it is
// there.
func (r *Runner) EnsureRule(ctx context.Context, position, table, chain string, rule []string) error {
	out, err := r.run(ctx, Args("-C", table, chain, rule...))
	switch {
	case err == nil:
		return nil
	case exitStatus(err) != exitOperationFailed:
		return fmt.Errorf("check rule in chain %q of table %q: %w: %s", chain, table, err, out)
	}
	if out, err := r.run(ctx, Args(position, table, chain, rule...)); err != nil {
		return fmt.Errorf("add rule to chain %q of table %q: %w: %s", chain, table, err, out)
	}
	return nil
}

// Apply makes sure of each step in order, stopping at the first failure.
func (r *Runner) Apply(ctx context.Context, steps []Step) error {
	for _, s := range steps {
		var err error
		if s.Rule == nil {
			err = r.EnsureChain(ctx, s.Table, s.Chain)
		} else {
			err = r.EnsureRule(ctx, s.Position, s.Table, s.Chain, s.Rule)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
