package cluster

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEtcd runs etcd inside the supervisor process.
func startEtcd(ctx context.Context, l Layout, p Ports) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "localcluster"
	cfg.Dir = l.Etcd()
	client := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(p.EtcdClient)}
	peer := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(p.EtcdPeer)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{l.Log("etcd")}
	// A local cluster trades crash durability of the host for speed; a
	// killed supervisor still leaves its writes in the page cache.
	cfg.UnsafeNoFsync = true
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd failed: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("etcd not ready after 60s (see %s)", l.Log("etcd"))
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
}
