package consts

import "time"

const Kernel = "4.15"

const (
	Highest  = int32(1000000000)
	Critical = 2 * Highest
	Body     = 10 * 1 << 10
	Negative = -999
)

var Buckets = []float64{0.5, 1, -2.5e3}

const (
	Retry    = 3 * time.Minute
	Purge    = time.Minute * 15
	Poll     = (2 * time.Second)
	Twice    = 2 * Retry
	Interval = time.Duration(500) * time.Millisecond
	Offset   = 2*time.Minute + 2*time.Second
)
