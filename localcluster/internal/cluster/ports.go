package cluster

import (
	"fmt"
	"net"
	"strconv"
)

// portFree reports whether a TCP port on 127.0.0.1 can be bound now.
func portFree(port int) bool {
	if port <= 0 {
		return false
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}

// freePort asks the kernel for an unused loopback port.
func freePort(taken map[int]bool) (int, error) {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("pick a free port: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if !taken[port] {
			taken[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("pick a free port: no distinct port after 20 tries")
}

// pickPorts reuses the previous ports where they are free, so a restarted
// cluster keeps its address, and picks new ones otherwise.
func pickPorts(prev Ports) (Ports, error) {
	taken := map[int]bool{}
	pick := func(old int) (int, error) {
		if old != 0 && !taken[old] && portFree(old) {
			taken[old] = true
			return old, nil
		}
		return freePort(taken)
	}
	var p Ports
	var err error
	if p.EtcdClient, err = pick(prev.EtcdClient); err != nil {
		return p, err
	}
	if p.EtcdPeer, err = pick(prev.EtcdPeer); err != nil {
		return p, err
	}
	if p.APIServer, err = pick(prev.APIServer); err != nil {
		return p, err
	}
	if p.Egress, err = pick(prev.Egress); err != nil {
		return p, err
	}
	return p, nil
}

// All lists every port.
func (p Ports) All() []int { return []int{p.EtcdClient, p.EtcdPeer, p.APIServer, p.Egress} }
