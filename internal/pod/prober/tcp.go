package prober

import (
	"context"
	"net"
	"strconv"
	"time"
)

// tcpProbe succeeds when a TCP connection to host:port opens within the
// timeout; the error text is the failure output.
func tcpProbe(ctx context.Context, host string, port int, timeout time.Duration) (outcome, string, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return outcomeFailure, err.Error(), nil
	}
	// The connection opened: that is the verdict, whatever Close says.
	_ = conn.Close()
	return outcomeSuccess, "", nil
}
