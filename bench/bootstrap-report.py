#!/usr/bin/env python3
"""Summarize one run of bench/wave-bootstrap.sh idle.

Reads measure.py's result (--result), the watcher's watch.json and the
scrapes it took when every app was Synced and Healthy (--watch DIR:
controller.prom, the controller's /metrics; apiserver.prom, the API
server's), and the API server's scrape from before the root was created
(--base). Prints the figures the benchmark reports and adds them to the
result file under "summary":

  time to all Synced+Healthy (exact, from the watch; and measure.py's poll)
  controller CPU seconds, resident memory and its peak at that moment
  settled memory and idle CPU (measure.py's idle window)
  API requests per app by verb: the controller's own
  (wavecd_kube_requests_total) and the API server's from every client
"""
import argparse
import json
import os
import re

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def samples(path, name):
    """(labels, value) of every sample of metric name in a scrape file."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            m = SAMPLE.match(line)
            if not m or m.group(1) != name:
                continue
            out.append((dict(LABEL.findall(m.group(3) or "")), float(m.group(4))))
    return out


def by(ss, *keys):
    agg = {}
    for labels, v in ss:
        k = tuple(labels.get(x, "") for x in keys)
        agg[k] = agg.get(k, 0) + v
    return agg


def since(w, key, t0):
    """Seconds from t0 to the watch's stamp key, or None."""
    return round(w[key] - t0, 2) if w.get(key) else None


def per_app(counts, apps):
    return {" ".join(k): round(v / apps, 2) for k, v in sorted(counts.items(), key=lambda kv: -kv[1]) if v}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--result", required=True)
    p.add_argument("--watch", required=True)
    p.add_argument("--base", required=True, help="API server scrape before the root's creation")
    p.add_argument("--apps", type=int, required=True, help="child apps (the root not counted)")
    a = p.parse_args()
    with open(a.result) as f:
        res = json.load(f)
    with open(os.path.join(a.watch, "watch.json")) as f:
        w = json.load(f)
    t0 = res["t0_unix"]
    ctrl = (w.get("procs") or {}).get("controller", {})
    idle = ((res.get("idle") or {}).get("procs") or {}).get("controller", {})
    s = {
        "apps": a.apps,
        "synced_healthy_s": since(w, "done_unix", t0), "first_healthy_s": since(w, "first_healthy_unix", t0),
        "median_healthy_s": since(w, "median_healthy_unix", t0),
        "first_created_s": since(w, "first_seen_unix", t0), "median_created_s": since(w, "median_seen_unix", t0),
        "all_created_s": since(w, "all_seen_unix", t0),
        "poll_s": res.get("total_s"), "poll_interval_s": res.get("interval_s"),
        "controller_cpu_s": ctrl.get("cpu_s"), "rss_mib": ctrl.get("rss_mib"), "peak_rss_mib": ctrl.get("peak_rss_mib"),
        "settled_rss_mib": idle.get("rss_end_mib"), "idle_cpu_pct_of_core": idle.get("cpu_pct_of_one_core"),
        "idle_s": (res.get("idle") or {}).get("seconds"),
    }
    mine = by(samples(os.path.join(a.watch, "controller.prom"), "wavecd_kube_requests_total"), "verb")
    s["controller_requests_per_app"] = round(sum(mine.values()) / a.apps, 2)
    s["controller_requests_per_app_by_verb"] = per_app(mine, a.apps)
    s["controller_requests_per_app_by_verb_resource"] = per_app(
        by(samples(os.path.join(a.watch, "controller.prom"), "wavecd_kube_requests_total"), "verb", "resource"), a.apps)
    after = by(samples(os.path.join(a.watch, "apiserver.prom"), "apiserver_request_total"), "verb")
    before = by(samples(a.base, "apiserver_request_total"), "verb")
    served = {k: v - before.get(k, 0) for k, v in after.items()}
    s["apiserver_requests_per_app"] = round(sum(served.values()) / a.apps, 2)
    s["apiserver_requests_per_app_by_verb"] = per_app(served, a.apps)
    res["summary"] = s
    with open(a.result, "w") as f:
        json.dump(res, f, indent=1)

    def fmt(d):
        return ", ".join(f"{k} {v}" for k, v in d.items())

    print(f"apps: {a.apps} (+ the root)")
    print(f"all Synced+Healthy: {s['synced_healthy_s']} s (watch); first {s['first_healthy_s']} s, "
          f"median {s['median_healthy_s']} s; measure.py's poll every {s['poll_interval_s']} s: {s['poll_s']} s")
    if s["all_created_s"] is not None:
        print(f"apps created (the root's children, from the watch): median {s['median_created_s']} s, all {s['all_created_s']} s")
    print(f"controller at that moment: {s['controller_cpu_s']} CPU-s, RSS {s['rss_mib']} MiB, peak {s['peak_rss_mib']} MiB")
    if s["idle_s"]:
        print(f"idle {s['idle_s']} s: {s['idle_cpu_pct_of_core']}% of a core, RSS settled at {s['settled_rss_mib']} MiB")
    print(f"controller API requests per app: {s['controller_requests_per_app']} ({fmt(s['controller_requests_per_app_by_verb'])})")
    print(f"  by verb and resource: {fmt(s['controller_requests_per_app_by_verb_resource'])}")
    print(f"API server requests per app, every client: {s['apiserver_requests_per_app']} ({fmt(s['apiserver_requests_per_app_by_verb'])})")


if __name__ == "__main__":
    main()
