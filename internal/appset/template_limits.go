package appset

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
)

// An ApplicationSet's goTemplate runs in the controller: one template must
// not be able to exhaust its memory or its time. These bound what one
// rendered string may produce.
const (
	// maxTemplateOutput is the most one rendered string may hold.
	maxTemplateOutput = 1 << 20
	// maxTemplateCount bounds the counts Sprig functions take (repeat,
	// until, indent, rand*).
	maxTemplateCount = 100_000
)

var errTemplateOutput = fmt.Errorf("template output over %d bytes", maxTemplateOutput)

// cappedWriter fails once more than maxTemplateOutput bytes are written:
// text/template stops executing at the first failed write.
type cappedWriter struct {
	strings.Builder
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > maxTemplateOutput {
		return 0, errTemplateOutput
	}
	return w.Builder.Write(p)
}

func checkCount(fn string, n int) error {
	if n < 0 || n > maxTemplateCount {
		return fmt.Errorf("%s: count %d is over the limit of %d", fn, n, maxTemplateCount)
	}
	return nil
}

// limitFuncs replaces the functions of m whose output size is set by an
// argument with versions that check it first.
func limitFuncs(m template.FuncMap) {
	repeat := m["repeat"].(func(int, string) string)
	m["repeat"] = func(n int, s string) (string, error) {
		if n > 0 && len(s) > 0 && n > maxTemplateOutput/len(s) {
			return "", fmt.Errorf("repeat: %d times %d bytes is over the limit of %d bytes", n, len(s), maxTemplateOutput)
		}
		return repeat(n, s), nil
	}
	until := m["until"].(func(int) []int)
	m["until"] = func(n int) ([]int, error) {
		if err := checkCount("until", abs(n)); err != nil {
			return nil, err
		}
		return until(n), nil
	}
	untilStep := m["untilStep"].(func(int, int, int) []int)
	m["untilStep"] = func(start, stop, step int) ([]int, error) {
		if step != 0 && (stop-start)/step > maxTemplateCount {
			return nil, fmt.Errorf("untilStep: over %d items", maxTemplateCount)
		}
		return untilStep(start, stop, step), nil
	}
	seq := m["seq"].(func(...int) string)
	m["seq"] = func(params ...int) (string, error) {
		for _, p := range params {
			if err := checkCount("seq", abs(p)); err != nil {
				return "", err
			}
		}
		return seq(params...), nil
	}
	for _, name := range []string{"randAlphaNum", "randAlpha", "randAscii", "randNumeric"} {
		fn := m[name].(func(int) string)
		m[name] = func(n int) (string, error) {
			if err := checkCount(name, n); err != nil {
				return "", err
			}
			return fn(n), nil
		}
	}
	for _, name := range []string{"indent", "nindent"} {
		fn := m[name].(func(int, string) string)
		m[name] = func(n int, s string) (string, error) {
			if err := checkCount(name, n); err != nil {
				return "", err
			}
			if lines := strings.Count(s, "\n") + 1; n > 0 && lines > maxTemplateOutput/n {
				return "", fmt.Errorf("%s: %d lines indented by %d is over the limit of %d bytes", name, lines, n, maxTemplateOutput)
			}
			return fn(n, s), nil
		}
	}
	m["printf"] = limitedPrintf
}

// limitedPrintf is text/template's printf refusing widths and precisions
// of more than four digits.
func limitedPrintf(format string, args ...any) (string, error) {
	digits := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c >= '0' && c <= '9' {
			if digits++; digits > 4 {
				return "", errors.New("printf: width or precision over 4 digits")
			}
			continue
		}
		digits = 0
	}
	return fmt.Sprintf(format, args...), nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
