package main

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestScanProgram(t *testing.T) {
	sys := map[string]bool{"read": true, "clone": true, "wait4": true, "futex": true, "kill": true, "rt_sigaction": true, "rt_sigreturn": true, "getpid": true}
	isSys := func(s string) bool { return sys[s] }
	src := `//go:build ignore
/* read( in a comment does not count */
#include "moattest.h"

static void helper(void)
{
	syscall(SYS_futex, 0, 0);
}

static void *thread_fn(void *arg)
{
	kill(getpid(), 0);
	return arg;
}

static void case_a(void)
{
	char buf[4];
	read(0, buf, sizeof(buf));
	puts("kill(");
	helper();
}

static void case_b(int unused,
		   int more)
{
	pid_t pid = fork();
	waitpid(pid, NULL, 0);
	pthread_create(NULL, NULL, thread_fn, NULL);
}

static void case_c(void)
{
	signal(1, SIG_IGN);
}

IN_CHILD(case_d)
{
	kill(0, 0);
}

static const struct mt_case cases[] = {
	MT_CASE(case_a),
	MT_CASE(case_b),
	MT_CASE(case_c),
	MT_CASE(case_d),
};
`
	p := scanProgram("x", src, isSys)
	if want := []string{"case_a", "case_b", "case_c", "case_d"}; !reflect.DeepEqual(p.cases, want) {
		t.Fatalf("cases = %v, want %v", p.cases, want)
	}
	tests := []struct {
		name string
		want []string
	}{
		{"case_a", []string{"futex", "read"}},
		{"case_b", []string{"clone", "getpid", "kill", "wait4"}},
		{"case_c", []string{"rt_sigaction", "rt_sigreturn"}},
		{"case_d", []string{"kill"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.calls[tc.name]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("calls = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRenderCounts(t *testing.T) {
	table := []Row{
		{Number: 0, Name: "read", Support: "full"},
		{Number: 1, Name: "write", Support: "partial", Note: "a | b"},
		{Number: 2, Name: "open", Support: "unimplemented", Errno: "ENOSYS"},
	}
	var res Results
	if err := jsonUnmarshal(`{"programs":[{"name":"p","cases":[
		{"name":"c1","native":"pass","sandbox":"pass"},
		{"name":"c2","native":"pass","sandbox":"fail","known":true}]}]}`, &res); err != nil {
		t.Fatal(err)
	}
	src := "static void c1(void)\n{\n\tread(0, 0, 0);\n}\n\nstatic void c2(void)\n{\n\tread(0, 0, 0);\n}\n\nstatic void c3(void)\n{\n\tread(0, 0, 0);\n}\nMT_CASE(c1), MT_CASE(c2), MT_CASE(c3)\n"
	doc := string(render(table, res, map[string]string{"p": src}))
	for _, want := range []string{
		"| 0 | read | full |  | 3 (1 not run) | 2 | 1 | 1 | p |",
		"| 1 | write | partial | a \\| b | 0 | | | | |",
		"| 2 | open | unimplemented | ENOSYS | 0 | | | | |",
		"1 conformance programs with 3 cases; in the recorded run 2 passed natively and 1 in the sandbox (1 known differences, 1 not run)",
		"exercised by no case: write.",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q:\n%s", want, doc)
		}
	}
}

// TestDocIsCurrent checks that docs/compatibility.md is what compatdoc
// generates from the table, the recorded results and the programs now.
func TestDocIsCurrent(t *testing.T) {
	doc, err := build("", "../../docs/compatibility-results.json", "../../test/syscalls")
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile("../../docs/compatibility.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, old) {
		t.Errorf("docs/compatibility.md is out of date: regenerate it with `go run ./tools/compatdoc` from the repository root (after a MOAT_RESULTS=$PWD/docs/compatibility-results.json go test ./test/syscalls run to refresh the pass counts)")
	}
}
