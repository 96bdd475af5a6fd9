package config

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestPLEGSettings(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantPeriod time.Duration
		wantEvents bool
		wantErr    string
	}{
		{name: "defaults", wantEvents: true},
		{name: "longer period", args: []string{"--pleg-relist-period=30s"}, wantPeriod: 30 * time.Second, wantEvents: true},
		{name: "upstream's period", args: []string{"--pleg-relist-period=1s"}, wantEvents: true},
		{name: "shorter period", args: []string{"--pleg-relist-period=500ms"}, wantErr: "--pleg-relist-period: must be at least 1s"},
		{name: "gate on", args: []string{"--feature-gates=EventedPLEG=true"}, wantEvents: true},
		{name: "gate off", args: []string{"--feature-gates=EventedPLEG=false"}, wantEvents: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(context.Background(), parseFlags(t, tt.args), testEnv("node"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			if cfg.PLEGRelistPeriod != tt.wantPeriod || cfg.ContainerEvents() != tt.wantEvents {
				t.Errorf("period, events = %v, %t; want %v, %t", cfg.PLEGRelistPeriod, cfg.ContainerEvents(), tt.wantPeriod, tt.wantEvents)
			}
		})
	}
}
