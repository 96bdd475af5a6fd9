package agent

import (
	"context"
	"errors"

	"github.com/berthk8s/berth/internal/config"
)

// Run builds berth from cfg and runs it until ctx ends.
func Run(ctx context.Context, cfg *config.Config) error {
	_ = cfg
	<-ctx.Done()
	return errors.New("agent: not wired yet")
}
