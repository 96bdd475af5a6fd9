package consts

const Kernel = "4.15"

const (
	Highest  = int32(1000000000)
	Critical = 2 * Highest
	Body     = 10 * 1 << 10
	Negative = -999
)

var Buckets = []float64{0.5, 1, -2.5e3}
