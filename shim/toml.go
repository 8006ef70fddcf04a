package shim

import (
	"fmt"
	"strconv"
	"strings"
)

// tomlValues is what parseTOML reads: each key, prefixed with its table's
// name and a dot ("runsc_config.debug"), mapped to its value as text.
type tomlValues map[string]string

// parseTOML reads the part of TOML that runsc.toml files use: comments,
// [table] headers, and key = value lines whose value is a basic ("...") or
// literal ('...') string, a boolean or a number. Arrays, inline tables and
// multi-line strings are refused with the line they are on.
func parseTOML(data string) (tomlValues, error) {
	vals := tomlValues{}
	table := ""
	for n, line := range strings.Split(data, "\n") {
		lineNo := n + 1
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			if strings.HasPrefix(line, "[[") {
				return nil, fmt.Errorf("line %d: arrays of tables are not supported", lineNo)
			}
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated table header", lineNo)
			}
			if rest := strings.TrimSpace(line[end+1:]); rest != "" && rest[0] != '#' {
				return nil, fmt.Errorf("line %d: text after table header", lineNo)
			}
			name, err := parseTOMLKey(strings.TrimSpace(line[1:end]))
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			table = name
			continue
		}
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			return nil, fmt.Errorf("line %d: expected key = value", lineNo)
		}
		key, err := parseTOMLKey(strings.TrimSpace(line[:eq]))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		val, err := parseTOMLValue(strings.TrimSpace(line[eq+1:]))
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", lineNo, key, err)
		}
		if table != "" {
			key = table + "." + key
		}
		if _, dup := vals[key]; dup {
			return nil, fmt.Errorf("line %d: %s defined twice", lineNo, key)
		}
		vals[key] = val
	}
	return vals, nil
}

// parseTOMLKey reads a bare key, a quoted key, or dotted parts of them.
func parseTOMLKey(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("empty key")
	}
	var parts []string
	for s != "" {
		var part string
		switch s[0] {
		case '"', '\'':
			v, rest, err := parseTOMLString(s)
			if err != nil {
				return "", err
			}
			part, s = v, rest
		default:
			i := 0
			for i < len(s) && isBareKeyByte(s[i]) {
				i++
			}
			if i == 0 {
				return "", fmt.Errorf("invalid key character %q", s[0])
			}
			part, s = s[:i], s[i:]
		}
		parts = append(parts, part)
		s = strings.TrimSpace(s)
		if s == "" {
			break
		}
		if s[0] != '.' {
			return "", fmt.Errorf("invalid key character %q", s[0])
		}
		s = strings.TrimSpace(s[1:])
		if s == "" {
			return "", fmt.Errorf("key ends with a dot")
		}
	}
	return strings.Join(parts, "."), nil
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// parseTOMLValue reads a scalar value and an optional trailing comment.
func parseTOMLValue(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("missing value")
	}
	var val, rest string
	switch s[0] {
	case '"', '\'':
		if strings.HasPrefix(s, `"""`) || strings.HasPrefix(s, "'''") {
			return "", fmt.Errorf("multi-line strings are not supported")
		}
		v, r, err := parseTOMLString(s)
		if err != nil {
			return "", err
		}
		val, rest = v, r
	case '[', '{':
		return "", fmt.Errorf("arrays and inline tables are not supported")
	default:
		end := strings.IndexByte(s, '#')
		if end < 0 {
			end = len(s)
		}
		val = strings.TrimSpace(s[:end])
		rest = s[end:]
		if val != "true" && val != "false" {
			if _, err := strconv.ParseFloat(strings.ReplaceAll(val, "_", ""), 64); err != nil {
				return "", fmt.Errorf("invalid value %q (strings need quotes)", val)
			}
		}
	}
	rest = strings.TrimSpace(rest)
	if rest != "" && rest[0] != '#' {
		return "", fmt.Errorf("text after value: %q", rest)
	}
	return val, nil
}

// parseTOMLString reads one basic or literal string at the start of s and
// returns it and what follows it.
func parseTOMLString(s string) (string, string, error) {
	quote := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == quote:
			return b.String(), s[i+1:], nil
		case c == '\\' && quote == '"':
			i++
			if i >= len(s) {
				return "", "", fmt.Errorf("unterminated string")
			}
			switch s[i] {
			case '"', '\\':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'u', 'U':
				n := 4
				if s[i] == 'U' {
					n = 8
				}
				if i+n >= len(s) {
					return "", "", fmt.Errorf("short unicode escape")
				}
				r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
				if err != nil || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF) {
					return "", "", fmt.Errorf("invalid unicode escape")
				}
				b.WriteRune(rune(r))
				i += n
			default:
				return "", "", fmt.Errorf("invalid escape \\%c", s[i])
			}
		case c < 0x20 && c != '\t':
			return "", "", fmt.Errorf("control character in string")
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("unterminated string")
}
