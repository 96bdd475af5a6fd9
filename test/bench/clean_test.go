package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTaskStatuses(t *testing.T) {
	out := "TASK                                                                PID      STATUS    \n" +
		"530d5cb3818d6253bc2f7f40c5f33a019785a2c23dff6bb8b8f05725a6945b79    26700    CREATED\n" +
		"56d5c3b5ceeb97b6cfacf2b505c764eab6e92959088b528b2c3f4bb7049e9ace    26650    RUNNING   \n" +
		"9f2a    0    STOPPED\n"
	want := map[string]string{
		"530d5cb3818d6253bc2f7f40c5f33a019785a2c23dff6bb8b8f05725a6945b79": "CREATED",
		"56d5c3b5ceeb97b6cfacf2b505c764eab6e92959088b528b2c3f4bb7049e9ace": "RUNNING",
		"9f2a": "STOPPED",
	}
	if diff := cmp.Diff(want, taskStatuses(out)); diff != "" {
		t.Errorf("taskStatuses (-want +got):\n%s", diff)
	}
	if got := taskStatuses("TASK    PID    STATUS    \n"); len(got) != 0 {
		t.Errorf("no tasks: %v", got)
	}
}
