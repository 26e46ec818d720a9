#!/usr/bin/env python3
"""Stamp the moment every Application is Synced and Healthy, from a watch.

measure.py polls `kubectl get applications`, which at thousands of apps
costs the machine more than the engine it measures, so the benchmark polls
it slowly; this watcher gives the exact time instead. It reads the apps
through `kubectl proxy` (started by the caller) as one list and one watch
(each event is decoded once, here: no kubectl per event), and when at
least --expect apps exist and all are Synced and Healthy it records the
time and scrapes each --scrape URL into DIR/NAME.prom, then exits.

Engine-neutral like measure.py: it reads only status.sync.status and
status.health.status.

Usage:
    watch-apps.py --proxy http://127.0.0.1:PORT --expect 1001 --out DIR \
        [--namespace argocd] [--kind applications|kustomizations] [--scrape NAME=URL ...] [--pid NAME=PID ...] [--timeout 900]
Writes DIR/watch.json: {"done_unix", "first_healthy_unix", "median_healthy_unix",
"first_seen_unix", "median_seen_unix", "all_seen_unix", "events", "timed_out",
"procs": {NAME: {"cpu_s", "rss_mib", "peak_rss_mib"}}} with
each --pid's CPU seconds (utime+stime), resident and peak resident memory at
that moment. The *_seen_ times are when the watch saw apps created (the
first is the root), all_seen when --expect apps existed: how much of a
bootstrap went to creating the children and how much to syncing them.
"""
import argparse
import json
import os
import sys
import time
import urllib.request

GROUP_PATHS = {
    "applications": "/apis/argoproj.io/v1alpha1/namespaces/{ns}/applications",
    # Flux's Kustomizations (bench/peers): Ready=True for their current
    # generation reads as Synced and Healthy.
    "kustomizations": "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/{ns}/kustomizations",
}


def state(obj, kind="applications"):
    st = obj.get("status") or {}
    if kind == "kustomizations":
        ready = [c for c in st.get("conditions") or [] if c.get("type") == "Ready"]
        current = st.get("observedGeneration") == (obj.get("metadata") or {}).get("generation")
        ok = bool(ready) and ready[0].get("status") == "True" and current
        return ("Synced", "Healthy") if ok else ("", "")
    return ((st.get("sync") or {}).get("status", ""), (st.get("health") or {}).get("status", ""))


def proc(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    out = {"cpu_s": round((int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK"), 2)}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, val = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out["rss_mib" if key == "VmRSS" else "peak_rss_mib"] = round(int(val.split()[0]) / 1024, 1)
    return out


def scrape(out, targets):
    for name, url in targets:
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                body = r.read()
        except OSError as e:
            body = f"# scrape of {url} failed: {e}\n".encode()
        with open(os.path.join(out, name + ".prom"), "wb") as f:
            f.write(body)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--proxy", required=True, help="base URL of kubectl proxy")
    p.add_argument("--namespace", default="argocd")
    p.add_argument("--kind", choices=sorted(GROUP_PATHS), default="applications")
    p.add_argument("--expect", type=int, required=True)
    p.add_argument("--out", required=True, help="directory for watch.json and the scrapes")
    p.add_argument("--scrape", action="append", default=[], help="NAME=URL scraped when done")
    p.add_argument("--pid", action="append", default=[], help="NAME=PID sampled when done")
    p.add_argument("--timeout", type=float, default=900)
    a = p.parse_args()
    targets = [s.split("=", 1) for s in a.scrape]
    base = a.proxy.rstrip("/") + GROUP_PATHS[a.kind].format(ns=a.namespace)
    apps = {}  # name -> (sync, health)
    ok = set()  # names of the apps Synced and Healthy now
    healthy_at = {}  # name -> first time Synced+Healthy
    seen_at = {}  # name -> when its creation was seen (apps listed at the start are not)
    all_seen = None  # when --expect apps first existed
    deadline = time.time() + a.timeout
    events = 0
    done_at = None
    with urllib.request.urlopen(base, timeout=60) as r:
        lst = json.load(r)
    for it in lst.get("items", []):
        apps[it["metadata"]["name"]] = state(it, a.kind)
        if state(it, a.kind) == ("Synced", "Healthy"):
            ok.add(it["metadata"]["name"])
    rv = lst["metadata"]["resourceVersion"]
    while done_at is None and time.time() < deadline:
        url = f"{base}?watch=1&allowWatchBookmarks=true&resourceVersion={rv}&timeoutSeconds=300"
        with urllib.request.urlopen(url, timeout=a.timeout) as w:
            for line in w:
                ev = json.loads(line)
                obj = ev.get("object") or {}
                rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                if ev.get("type") == "BOOKMARK":
                    continue
                if ev.get("type") == "ERROR":
                    sys.exit(f"watch error: {obj.get('message')}")
                events += 1
                name = obj["metadata"]["name"]
                now = time.time()
                if ev.get("type") == "DELETED":
                    apps.pop(name, None)
                    ok.discard(name)
                    continue
                apps[name] = state(obj, a.kind)
                if ev.get("type") == "ADDED":
                    seen_at.setdefault(name, now)
                if all_seen is None and len(apps) >= a.expect:
                    all_seen = now
                if apps[name] == ("Synced", "Healthy"):
                    healthy_at.setdefault(name, now)
                    ok.add(name)
                else:
                    ok.discard(name)
                if len(apps) >= a.expect and len(ok) == len(apps):
                    done_at = now
                    break
                if now > deadline:
                    break
    procs = {}
    if done_at is not None:
        procs = {n: proc(int(pid)) for n, pid in (s.split("=", 1) for s in a.pid)}
        scrape(a.out, targets)
    hs = sorted(healthy_at.values())
    ss = sorted(seen_at.values())
    res = {"done_unix": done_at, "timed_out": done_at is None, "events": events,
           "first_healthy_unix": hs[0] if hs else None,
           "median_healthy_unix": hs[len(hs) // 2] if hs else None,
           "first_seen_unix": ss[0] if ss else None,
           "median_seen_unix": ss[len(ss) // 2] if ss else None,
           "all_seen_unix": all_seen, "procs": procs}
    with open(os.path.join(a.out, "watch.json"), "w") as f:
        json.dump(res, f, indent=1)
    return 0 if done_at is not None else 1


if __name__ == "__main__":
    sys.exit(main())
