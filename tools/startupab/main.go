// Command startupab compares the start of two runsc binaries: it runs
// `BIN do /bin/true` (or the command after --) for each binary in turn,
// n times in a shuffled order, and prints each one's median, mean with its
// 95% confidence interval, and 10th and 90th percentiles.
//
//	go run ./tools/startupab [-n 150] BIN_A BIN_B [-- CMD ARG...]
//
// On the shared VMs Moat is measured on, the same binary's median start
// moves by several milliseconds over an hour as the host's load changes,
// more than most single changes save: two binaries are only comparable
// when measured in one interleaved run, which tools/bench (one binary,
// consecutive runs) does not do.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"time"
)

func main() {
	n := flag.Int("n", 150, "runs of each binary")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: startupab [-n N] BIN_A BIN_B [-- CMD ARG...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	if len(args) < 2 || *n < 2 {
		flag.Usage()
		os.Exit(2)
	}
	bins, cmd := args[:2], []string{"/bin/true"}
	if len(args) > 2 {
		if args[2] != "--" || len(args) == 3 {
			flag.Usage()
			os.Exit(2)
		}
		cmd = args[3:]
	}
	times := make([][]float64, len(bins))
	order := []int{0, 1}
	for range *n {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, b := range order {
			ms, err := run(bins[b], cmd)
			if err != nil {
				fmt.Fprintf(os.Stderr, "startupab: %s: %v\n", bins[b], err)
				os.Exit(1)
			}
			times[b] = append(times[b], ms)
		}
	}
	for i, b := range bins {
		s := summarize(times[i])
		fmt.Printf("%-40s median %6.1f ms  mean %6.1f ± %.1f  p10 %6.1f  p90 %6.1f\n", b, s.median, s.mean, s.ci95, s.p10, s.p90)
	}
}

// run times one `bin do CMD`, in milliseconds.
func run(bin string, cmd []string) (float64, error) {
	start := time.Now()
	out, err := exec.Command(bin, append([]string{"do"}, cmd...)...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	return float64(time.Since(start).Microseconds()) / 1000, nil
}

// summary is what startupab prints of one binary's times.
type summary struct{ median, mean, ci95, p10, p90 float64 }

// summarize returns xs's median, mean, the half-width of the mean's 95%
// confidence interval (normal approximation) and 10th and 90th
// percentiles. xs has at least two values.
func summarize(xs []float64) summary {
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(len(s))
	var sq float64
	for _, x := range s {
		sq += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(sq / float64(len(s)-1))
	median := s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return summary{
		median: median,
		mean:   mean,
		ci95:   1.96 * sd / math.Sqrt(float64(len(s))),
		p10:    s[len(s)/10],
		p90:    s[len(s)*9/10],
	}
}
