// Command pause is the pod sandbox's first process, built into the image
// registry.k8s.io/pause:3.10.1 by hack/images.sh.
//
// It holds the sandbox's namespaces open and does nothing else: it waits for
// SIGINT or SIGTERM and then exits 0. Running as PID 1 of a shared PID
// namespace, it also reaps orphaned children on SIGCHLD. Build it static:
//
//	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o pause ./images/pause
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("berth pause")
		return
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
