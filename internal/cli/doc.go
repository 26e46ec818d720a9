// Package cli owns wavecd's command line: thin cobra commands that copy flags
// into action structs and print their results. Commands hold no engine logic;
// each one calls into the domain packages (health, render, sync, controller,
// notify)
// and formats what comes back as text, YAML or JSON.
package cli
