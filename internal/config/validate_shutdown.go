package config

import (
	"time"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// validateShutdown checks the graceful node shutdown fields as upstream's
// ValidateKubeletConfiguration does (GracefulNodeShutdown and
// GracefulNodeShutdownBasedOnPodPriority are on by default).
func validateShutdown(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	period, critical := kc.ShutdownGracePeriod.Duration, kc.ShutdownGracePeriodCriticalPods.Duration
	if critical > period {
		ps = append(ps, fieldProblem("shutdownGracePeriodCriticalPods", "invalid value %q: must be <= shutdownGracePeriod %q", critical, period))
	}
	for name, d := range map[string]time.Duration{"shutdownGracePeriod": period, "shutdownGracePeriodCriticalPods": critical} {
		if d < 0 || (d > 0 && d < time.Second) {
			ps = append(ps, fieldProblem(name, "invalid value %q: must be either zero or otherwise >= 1 sec", d))
		}
	}
	if len(kc.ShutdownGracePeriodByPodPriority) != 0 && (period > 0 || critical > 0) {
		ps = append(ps, fieldProblem("shutdownGracePeriodByPodPriority", "cannot be set together with shutdownGracePeriod or shutdownGracePeriodCriticalPods"))
	}
	for _, p := range kc.ShutdownGracePeriodByPodPriority {
		if p.ShutdownGracePeriodSeconds < 0 {
			ps = append(ps, fieldProblem("shutdownGracePeriodByPodPriority", "invalid shutdownGracePeriodSeconds %d of priority %d: must not be negative", p.ShutdownGracePeriodSeconds, p.Priority))
		}
	}
	return ps
}

// validateLockFile checks --exit-on-lock-contention, as upstream's run.
func validateLockFile(flags *Flags) []problem {
	if flags.ExitOnLockContention && flags.LockFile == "" {
		return []problem{flagProblem("exit-on-lock-contention", "cannot exit on lock file contention: no lock file specified")}
	}
	return nil
}
