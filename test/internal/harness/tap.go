package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Status is the outcome of one test case.
type Status int

// Case outcomes. Missing means the program never reported the case (it
// crashed, hung or was cut short).
const (
	Missing Status = iota
	Pass
	Fail
	Skip
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "ok"
	case Fail:
		return "not ok"
	case Skip:
		return "skip"
	}
	return "missing"
}

// CaseResult is one parsed TAP line.
type CaseResult struct {
	Num    int
	Name   string
	Status Status
	Note   string // the failure message or the skip reason
}

// TAP is a parsed moattest output.
type TAP struct {
	Planned  int // from the "1..N" line; -1 if absent
	Cases    []CaseResult
	Comments []string // "# ..." lines, in order
}

// Lookup returns the result for the named case (Status Missing if absent).
func (t *TAP) Lookup(name string) CaseResult {
	for _, c := range t.Cases {
		if c.Name == name {
			return c
		}
	}
	return CaseResult{Name: name, Status: Missing}
}

// ParseTAP parses the output of a moattest program. Lines it does not
// recognise are ignored; a malformed "ok"/"not ok" line is an error.
func ParseTAP(out []byte) (*TAP, error) {
	t := &TAP{Planned: -1}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "1.."):
			n, err := strconv.Atoi(line[3:])
			if err != nil {
				return nil, fmt.Errorf("bad plan line %q", line)
			}
			t.Planned = n
		case strings.HasPrefix(line, "#"):
			t.Comments = append(t.Comments, strings.TrimSpace(line[1:]))
		case strings.HasPrefix(line, "ok "), strings.HasPrefix(line, "not ok "):
			c, err := parseCaseLine(line)
			if err != nil {
				return nil, err
			}
			t.Cases = append(t.Cases, c)
		}
	}
	return t, sc.Err()
}

func parseCaseLine(line string) (CaseResult, error) {
	var c CaseResult
	rest := line
	if strings.HasPrefix(rest, "not ok ") {
		c.Status = Fail
		rest = rest[len("not ok "):]
	} else {
		c.Status = Pass
		rest = rest[len("ok "):]
	}
	numStr, rest, ok := strings.Cut(rest, " - ")
	if !ok {
		return c, fmt.Errorf("bad case line %q: no \" - \"", line)
	}
	n, err := strconv.Atoi(numStr)
	if err != nil {
		return c, fmt.Errorf("bad case line %q: number: %v", line, err)
	}
	c.Num = n
	name, note, _ := strings.Cut(rest, " # ")
	c.Name = strings.TrimSpace(name)
	c.Note = strings.TrimSpace(note)
	if c.Name == "" {
		return c, fmt.Errorf("bad case line %q: empty name", line)
	}
	if c.Status == Pass && strings.HasPrefix(c.Note, "SKIP") {
		c.Status = Skip
		c.Note = strings.TrimSpace(strings.TrimPrefix(c.Note, "SKIP"))
	}
	return c, nil
}
