package simbench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a simulator's process has after SIGTERM before
// its process group gets SIGKILL.
const stopGrace = 10 * time.Second

// child is one simulator process. Its fields are set by startChild and
// read-only after; done is closed, and err set, when it has exited.
type child struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error // the result of Wait; read only after done is closed
}

// startChild starts bin with args (and env added to the harness's) in a
// process group of its own, its output appended to logPath. It gets
// SIGKILL if the harness's thread that started it exits, so that a
// harness killed outright leaves nothing running.
func startChild(name, bin string, args, env []string, logPath string) (*child, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		logFile.Close()
		close(c.done)
	}()
	return c, nil
}

// pid is the process's id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// exitErr describes how the process ended; call it after done.
func (c *child) exitErr() error {
	if c.err == nil {
		return fmt.Errorf("%s exited with status 0", c.name)
	}
	return fmt.Errorf("%s exited: %w", c.name, c.err)
}

// stopChildren sends SIGTERM to every child's process group, SIGKILL to
// those still there after stopGrace, and waits for all to end.
func stopChildren(children []*child) {
	for _, c := range children {
		_ = syscall.Kill(-c.pid(), syscall.SIGTERM)
	}
	grace, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range children {
		wg.Go(func() {
			select {
			case <-c.done:
			case <-grace.Done():
				_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
				<-c.done
			}
			// Anything it left in its group goes too.
			_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
		})
	}
	wg.Wait()
}

// logTail is the last n bytes of the child's log, from a line start.
func (c *child) logTail(n int) string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", c.logPath, err)
	}
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
