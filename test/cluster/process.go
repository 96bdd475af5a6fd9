package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// stopGrace is how long a component has to exit after SIGTERM before its
// process group gets SIGKILL.
const stopGrace = 10 * time.Second

// logTailBytes is how much of a component's log an error quotes.
const logTailBytes = 4096

// process is one running component. Its fields are set by startProcess and
// read-only after; done is closed, and err set, when the process has exited.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error // the result of Wait; read only after done is closed
}

// startProcess starts bin with args in a process group of its own, with
// stdout and stderr appended to logPath. The process gets SIGKILL if the
// thread that started it exits, so that a crashed test leaves nothing.
func startProcess(name, bin string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, SIGKILL after stopGrace, and
// waits for the process to end. It is idempotent.
func (p *process) stop() {
	if done, _ := p.exited(); done {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Anything the component left in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// kill sends SIGKILL to the process group, as a crash would, and waits
// for the process to end. It is idempotent.
func (p *process) kill() {
	if done, _ := p.exited(); !done {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// failure wraps err with the tail of the process's log.
func (p *process) failure(err error) error {
	return fmt.Errorf("%w\n--- last lines of %s ---\n%s", err, p.logPath, logTail(p.logPath, logTailBytes))
}

// logTail returns the last n bytes of the file at path, from a line start.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	return tail(b, n)
}

// tail returns the last n bytes of b, cut to start after a newline when
// one is in range.
func tail(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	b = b[len(b)-n:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i+1 < len(b) {
		b = b[i+1:]
	}
	return string(b)
}

// exitError describes how a process ended.
func exitError(name string, err error) error {
	if err == nil {
		return fmt.Errorf("%s exited", name)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%s exited: %s", name, ee.ProcessState)
	}
	return fmt.Errorf("%s exited: %w", name, err)
}
