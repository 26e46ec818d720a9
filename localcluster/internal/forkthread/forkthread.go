// Package forkthread starts child processes from one OS thread that never
// exits. Linux sends a child's parent-death signal (Pdeathsig) when the
// thread that forked it exits, not the process: a child forked from an
// ordinary goroutine could be killed whenever the Go runtime retires that
// thread. A locked thread lives as long as the process, so children started
// here die with the process and only then. The supervisor's components and
// the workload controller's host processes both start through it.
package forkthread

import (
	"os/exec"
	"runtime"
)

// Starter starts commands on its locked thread. The zero value is not
// usable: use New.
type Starter struct{ reqs chan request }

type request struct {
	cmd   *exec.Cmd
	reply chan error
}

// New starts the locked thread; it runs until the process ends.
func New() *Starter {
	s := &Starter{reqs: make(chan request)}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the process
		for r := range s.reqs {
			r.reply <- r.cmd.Start()
		}
	}()
	return s
}

// Start starts cmd (as exec.Cmd.Start) from the locked thread.
func (s *Starter) Start(cmd *exec.Cmd) error {
	reply := make(chan error)
	s.reqs <- request{cmd: cmd, reply: reply}
	return <-reply
}
