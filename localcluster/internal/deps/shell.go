package deps

import (
	"path"
	"strings"
)

// word is one word of a command and the part of the container it came
// from ("command" or "args").
type word struct {
	text, from string
}

// commands splits a container's argv (command then args) into the
// commands it runs: the argv itself, and the commands of each element
// that is a shell script ("sh -c 'a && b'").
func commands(command, args []string) [][]word {
	var argv []word
	if len(command) == 0 {
		argv = append(argv, word{from: "command"}) // the image's entrypoint: args are its arguments
	}
	var out [][]word
	for _, part := range []struct {
		list []string
		from string
	}{{command, "command"}, {args, "args"}} {
		for _, s := range part.list {
			if isScript(s) {
				for _, c := range scriptCommands(s) {
					out = append(out, tagged(c, part.from))
				}
				continue
			}
			argv = append(argv, word{text: s, from: part.from})
		}
	}
	if len(argv) > 1 {
		out = append([][]word{argv}, out...)
	}
	return out
}

func tagged(words []string, from string) []word {
	out := make([]word, len(words))
	for i, w := range words {
		out[i] = word{text: w, from: from}
	}
	return out
}

// isScript tells an argv element holding shell code from a plain argument.
func isScript(s string) bool { return strings.ContainsAny(s, " \t\n;&|") }

// shellKeywords start or end compound commands; the program comes after.
var shellKeywords = map[string]bool{
	"until": true, "while": true, "if": true, "then": true, "do": true, "else": true, "elif": true,
	"done": true, "fi": true, "!": true, "{": true, "}": true, "time": true, "exec": true,
}

// scriptCommands splits shell code into its simple commands' words:
// quotes are removed, operators (; & | && || newline, parentheses, $( and
// backquotes) end a command, and leading shell keywords are dropped.
func scriptCommands(s string) [][]string {
	var cmds [][]string
	var cur []string
	var b strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			cur = append(cur, b.String())
			b.Reset()
			inWord = false
		}
	}
	endCommand := func() {
		endWord()
		for len(cur) > 0 && shellKeywords[cur[0]] {
			cur = cur[1:]
		}
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
	}
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\'' || ch == '"':
			end := strings.IndexByte(s[i+1:], ch)
			if end < 0 {
				end = len(s) - i - 1
			}
			b.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case ch == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			inWord = true
			i++
		case ch == ' ' || ch == '\t':
			endWord()
		case strings.IndexByte(";&|\n()`", ch) >= 0:
			endCommand()
		case ch == '$' && i+1 < len(s) && s[i+1] == '(':
			endCommand()
			i++
		default:
			b.WriteByte(ch)
			inWord = true
		}
	}
	endCommand()
	return cmds
}

// program is the base name of a command's executable.
func program(w []word) string {
	if len(w) == 0 {
		return ""
	}
	return path.Base(w[0].text)
}
