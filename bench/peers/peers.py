#!/usr/bin/env python3
"""Bootstrap the same repository with wavecd and its peers, one engine at a
time on a fresh local cluster each, and compare them as ratios of one run.

Every engine gets the same thing: a local cluster of 3 simulated nodes
(bin/wavecd-localcluster), the repository of the engine-neutral
wave-bootstrap benchmark (../shared/bench/wave-bootstrap/gen_repo.py),
with a flux/ folder of the same apps as Flux Kustomizations, served over
Git's smart HTTP protocol on loopback (git http-backend), and the root
(Application, or Flux's GitRepository and root Kustomization), created
when the engine is ready. The clock runs from the
root's creation to the moment a watch of the Applications sees all of them
Synced and Healthy (bench/watch-apps.py). Then the engine idles for
--idle-seconds.

Per engine it reports: seconds to all ready; CPU seconds of all of the
engine's processes from the root's creation until then (Argo CD:
application controller, repo server and redis; Flux: source and kustomize
controllers), and since they started; their resident memory at that moment, the sum of each
process's peak, and the resident memory after the idle window (settled);
CPU during the idle window as a percentage of one core; and the API
server's requests during the bootstrap (every client, the engine's and
the cluster's own controllers) per app. And the ratios wavecd/peer.

Engines:
  wavecd   bin/wavecd controller (make build)
  argocd   Argo CD's argocd binary, built from the Go module proxy by
           bench/peers/argocd (make argocd-peer): application controller
           and repo server, with redis-server from Debian's packages. Its
           own CRDs come from the module. argocd-cm carries the health
           check of child Applications that Argo CD's documentation gives
           for app of apps, so waves wait for children as wavecd's do.
  flux     Flux's source-controller and kustomize-controller, built from
           the Go module proxy by bench/peers/flux-* (make flux-peer), at
           their defaults; its CRDs come from the modules. One
           GitRepository, a root Kustomization of the folder flux/, one
           Kustomization per app; waves are a dependsOn chain with
           wait: true.

Usage:
  peers.py --scenario idle --count 200 [--engines wavecd,argocd] [--rounds 2]
  peers.py --scenario waves

Rounds alternate the order of the engines (the machine's pace drifts within
an hour); each figure of the table is the median over the rounds. The
result goes to bench/results/peers-<scenario>-<count>-<time>.json.
"""
import argparse
import datetime
import gzip
import http.server
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMESPACE = "argocd"


def log(msg):
    print(f"[{datetime.datetime.now():%H:%M:%S}] {msg}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before it listened on 127.0.0.1:{port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout}s")


class GitHTTP(http.server.BaseHTTPRequestHandler):
    """Git's smart HTTP protocol through `git http-backend`, for every
    engine alike (Flux's GitRepository takes http, https and ssh URLs
    only)."""

    root = ""

    def do_GET(self):
        self.backend()

    def do_POST(self):
        self.backend()

    def backend(self):
        path, _, query = self.path.partition("?")
        env = {"GIT_PROJECT_ROOT": self.root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
               "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "REMOTE_ADDR": "127.0.0.1", "PATH": os.environ.get("PATH", "")}
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.split(b"\r\n"):
            k, _, v = line.decode().partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def serve_git(root):
    """Serves the repositories under root on a loopback port: (server, port)."""
    handler = type("Handler", (GitHTTP,), {"root": root})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def proc_stat(pid):
    """CPU seconds, resident, resident anonymous (heap, stacks: not the
    executable's pages) and peak resident MiB of one process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        out = {"cpu_s": (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK"), "rss_mib": 0.0, "rss_anon_mib": 0.0, "peak_rss_mib": 0.0}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key == "VmRSS":
                    out["rss_mib"] = int(val.split()[0]) / 1024
                elif key == "RssAnon":
                    out["rss_anon_mib"] = int(val.split()[0]) / 1024
                elif key == "VmHWM":
                    out["peak_rss_mib"] = int(val.split()[0]) / 1024
        return out
    except (OSError, IndexError, ValueError):
        return {"cpu_s": 0.0, "rss_mib": 0.0, "rss_anon_mib": 0.0, "peak_rss_mib": 0.0}


def total(procs):
    stats = [proc_stat(p.pid) for p in procs.values()]
    return {k: sum(s[k] for s in stats) for k in ("cpu_s", "rss_mib", "rss_anon_mib", "peak_rss_mib")}


def requests_total(metrics_text):
    return sum(requests_by(metrics_text).values())


def requests_by(metrics_text):
    """The API server's request counts by "VERB resource[/subresource]"."""
    out = {}
    for line in metrics_text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}", 1)[0]))
        key = labels.get("verb", "?") + " " + labels.get("resource", "?")
        if labels.get("subresource"):
            key += "/" + labels["subresource"]
        out[key] = out.get(key, 0.0) + float(line.rsplit(" ", 1)[1])
    return out


def requests_delta(before, after, apps, top=12):
    """The kinds of request that grew most, per app, largest first."""
    delta = {k: v - before.get(k, 0.0) for k, v in after.items()}
    ranked = sorted(((k, v) for k, v in delta.items() if v > 0), key=lambda kv: -kv[1])[:top]
    return {k: round(v / apps, 3) for k, v in ranked}


class Cluster:
    """A fresh local cluster in dir, stopped by its own stop command."""

    def __init__(self, work):
        self.dir = os.path.join(work, "cluster")
        self.bin = os.path.join(ROOT, "bin", "wavecd-localcluster")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")

    def start(self):
        subprocess.run([self.bin, "start", "--dir", self.dir, "--nodes", "3", "--detach"], check=True,
                       stdout=subprocess.DEVNULL)

    def stop(self):
        subprocess.run([self.bin, "stop", "--dir", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def kubectl(self, *args, stdin=None, capture=False):
        r = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, *args], input=stdin, check=True, text=True,
                           stdout=subprocess.PIPE if capture else subprocess.DEVNULL)
        return r.stdout if capture else None

    def established(self, *crds, timeout=60):
        """Waits until each CRD is Established (kubectl wait fails on one
        that has no conditions yet)."""
        deadline = time.time() + timeout
        path = '{.status.conditions[?(@.type=="Established")].status}'
        for crd in crds:
            while True:
                r = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, "get", "crd", crd, "-o", f"jsonpath={path}"],
                                   capture_output=True, text=True)
                if r.returncode == 0 and r.stdout == "True":
                    break
                if time.time() > deadline:
                    raise RuntimeError(f"CRD {crd} not Established within {timeout}s: {r.stderr.strip()}")
                time.sleep(0.2)

    def apply(self, yaml_text):
        self.kubectl("apply", "--server-side", "-f", "-", stdin=yaml_text)


DEFAULT_PROJECT = """apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: argocd}
spec:
  sourceRepos: ['*']
  destinations: [{server: '*', namespace: '*'}]
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
"""

# Argo CD's documented health check for child Applications (app of apps
# waits for its children's health, as wavecd does by default).
ARGOCD_CM = """apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels: {app.kubernetes.io/name: argocd-cm, app.kubernetes.io/part-of: argocd}
data:
  resource.customizations.health.argoproj.io_Application: |
    hs = {}
    hs.status = "Progressing"
    hs.message = ""
    if obj.status ~= nil then
      if obj.status.health ~= nil then
        hs.status = obj.status.health.status
        if obj.status.health.message ~= nil then
          hs.message = obj.status.health.message
        end
      end
    end
    return hs
---
apiVersion: v1
kind: Secret
metadata:
  name: argocd-secret
  namespace: argocd
  labels: {app.kubernetes.io/name: argocd-secret, app.kubernetes.io/part-of: argocd}
stringData:
  server.secretkey: bench-peers-secret-key
"""


class Engine:
    name = ""
    # What the watch counts (watch-apps.py --kind) and where.
    kind, namespace = "applications", NAMESPACE

    def __init__(self, args, work):
        self.args = args
        self.work = os.path.join(work, self.name)
        os.makedirs(self.work, exist_ok=True)
        self.procs = {}

    def spawn(self, what, cmd, env=None):
        logf = open(os.path.join(self.work, what + ".log"), "wb")
        p = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
                             start_new_session=True)
        self.procs[what] = p
        return p

    def ready(self, port, proc, what, timeout=120):
        """Waits until proc answers /readyz on port."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited with {proc.returncode}; see {self.work}/{what}.log")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"{what} not ready within {timeout}s")

    def root(self, repo_dir, repo_url):
        """The file whose creation starts the clock: the root Application."""
        return os.path.join(repo_dir, "bootstrap", "root-app.yaml")

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


class Wavecd(Engine):
    name = "wavecd"

    def install(self, cluster):
        subprocess.run([os.path.join(ROOT, "bin", "wavecd"), "install", "crds", "--kubeconfig", cluster.kubeconfig],
                       check=True, stdout=subprocess.DEVNULL)
        cluster.kubectl("create", "namespace", NAMESPACE)
        cluster.apply(DEFAULT_PROJECT)

    def start(self, cluster):
        port = free_port()
        p = self.spawn("controller", [os.path.join(ROOT, "bin", "wavecd"), "controller", "--kubeconfig", cluster.kubeconfig,
                                      "--leader-elect=false", "--namespace", NAMESPACE,
                                      "--cache-dir", os.path.join(self.work, "cache"), "--listen", f"127.0.0.1:{port}"]
                       + self.args.wavecd_arg, env=dict(kv.split("=", 1) for kv in self.args.wavecd_env))
        self.ready(port, p, "controller")


class ArgoCD(Engine):
    name = "argocd"

    def __init__(self, args, work):
        super().__init__(args, work)
        self.bin = args.argocd

    def install(self, cluster):
        crds = os.path.join(self.args.argocd_crds)
        for f in sorted(os.listdir(crds)):
            if f.endswith(".yaml"):
                cluster.kubectl("apply", "--server-side", "-f", os.path.join(crds, f))
        cluster.established("applications.argoproj.io", "appprojects.argoproj.io")
        cluster.kubectl("create", "namespace", NAMESPACE)
        cluster.apply(DEFAULT_PROJECT)
        cluster.apply(ARGOCD_CM)

    def start(self, cluster):
        redis, repo = free_port(), free_port()
        r = self.spawn("redis", ["redis-server", "--bind", "127.0.0.1", "--port", str(redis), "--save", "",
                                 "--appendonly", "no", "--dir", self.work])
        wait_port(redis, r, "redis-server")
        env = {"ARGOCD_FAKE_IN_CLUSTER": "true", "KUBECONFIG": cluster.kubeconfig, "ARGOCD_GPG_ENABLED": "false",
               "ARGOCD_TLS_DATA_PATH": os.path.join(self.work, "tls"), "ARGOCD_SSH_DATA_PATH": os.path.join(self.work, "ssh"),
               "ARGOCD_GNUPGHOME": os.path.join(self.work, "gnupg"), "HOME": self.work,
               # Argo CD's image carries its git wrappers on the PATH.
               "PATH": self.args.argocd_tools + os.pathsep + os.environ.get("PATH", "")}
        for d in ("tls", "ssh", "gnupg"):
            os.makedirs(os.path.join(self.work, d), exist_ok=True)
        rs = self.spawn("repo-server", [self.bin, "--port", str(repo), "--redis", f"127.0.0.1:{redis}",
                                        "--address", "127.0.0.1", "--metrics-address", "127.0.0.1", "--metrics-port", str(free_port()),
                                        "--disable-tls", "--client-ca-path=", "--otlp-address", ""],
                        env={**env, "ARGOCD_BINARY_NAME": "argocd-repo-server"})
        wait_port(repo, rs, "argocd-repo-server")
        metrics = free_port()
        c = self.spawn("application-controller",
                       [self.bin, "--namespace", NAMESPACE, "--redis", f"127.0.0.1:{redis}", "--repo-server",
                        f"127.0.0.1:{repo}", "--repo-server-plaintext", "--metrics-port", str(metrics), "--otlp-address", ""],
                       env={**env, "ARGOCD_BINARY_NAME": "argocd-application-controller"})
        wait_port(metrics, c, "argocd-application-controller")


FLUX_NAMESPACE = "flux-system"


class Flux(Engine):
    """Flux's source-controller and kustomize-controller, at their defaults:
    one GitRepository and one Kustomization per app, applied by a root
    Kustomization (Flux's app of apps); waves are dependsOn chains with
    wait: true."""

    name = "flux"
    kind, namespace = "kustomizations", FLUX_NAMESPACE

    def install(self, cluster):
        crds = self.args.flux_crds
        for f in sorted(os.listdir(crds)):
            if f.endswith(".yaml"):
                cluster.kubectl("apply", "--server-side", "-f", os.path.join(crds, f))
        cluster.established("gitrepositories.source.toolkit.fluxcd.io", "kustomizations.kustomize.toolkit.fluxcd.io")
        cluster.kubectl("create", "namespace", FLUX_NAMESPACE)

    def start(self, cluster):
        storage, health = free_port(), free_port()
        os.makedirs(os.path.join(self.work, "storage"), exist_ok=True)
        env = {"KUBECONFIG": cluster.kubeconfig, "RUNTIME_NAMESPACE": FLUX_NAMESPACE, "HOME": self.work}
        common = ["--enable-leader-election=false", "--log-level=info"]
        src = self.spawn("source-controller", [
            os.path.join(ROOT, "bin", "flux-source-controller"), "--storage-path", os.path.join(self.work, "storage"),
            "--storage-addr", f"127.0.0.1:{storage}", "--storage-adv-addr", f"127.0.0.1:{storage}",
            "--metrics-addr", f"127.0.0.1:{free_port()}", "--health-addr", f"127.0.0.1:{health}"] + common, env=env)
        self.ready(health, src, "source-controller")
        health = free_port()
        ks = self.spawn("kustomize-controller", [
            os.path.join(ROOT, "bin", "flux-kustomize-controller"), "--metrics-addr", f"127.0.0.1:{free_port()}",
            "--health-addr", f"127.0.0.1:{health}"] + common, env=env)
        self.ready(health, ks, "kustomize-controller")

    def root(self, repo_dir, repo_url):
        path = os.path.join(self.work, "root.yaml")
        with open(path, "w") as f:
            f.write(f"""apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: repo, namespace: {FLUX_NAMESPACE}}}
spec:
  url: {repo_url}
  ref: {{branch: main}}
  interval: 10m
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: root, namespace: {FLUX_NAMESPACE}}}
spec:
  interval: 10m
  sourceRef: {{kind: GitRepository, name: repo}}
  path: ./flux
  prune: true
""")
        return path


def flux_layer(repo_dir, scenario, count):
    """Writes flux/: the Kustomizations of the same apps the root
    Application makes, for Flux's root Kustomization."""
    os.makedirs(os.path.join(repo_dir, "flux"), exist_ok=True)
    names = [f"a{i}" for i in range(count)] if scenario == "idle" else [f"w{i}" for i in range(7)]
    namespaces = ["bench-idle"] if scenario == "idle" else [f"bench-{n}" for n in names]
    with open(os.path.join(repo_dir, "flux", "namespaces.yaml"), "w") as f:
        f.write("".join(f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n" for ns in namespaces))
    for i, n in enumerate(names):
        extra = ""
        if scenario == "waves":
            extra = "  wait: true\n" + (f"  dependsOn: [{{name: {names[i - 1]}}}]\n" if i else "")
        with open(os.path.join(repo_dir, "flux", n + ".yaml"), "w") as f:
            f.write(f"""apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: {n}, namespace: {FLUX_NAMESPACE}}}
spec:
  interval: 10m
  sourceRef: {{kind: GitRepository, name: repo}}
  path: ./apps/{n}
  targetNamespace: {"bench-idle" if scenario == "idle" else "bench-" + n}
  prune: true
{extra}""")


def commit(repo_dir, message):
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", message]):
        subprocess.run(cmd, cwd=repo_dir, env=env, check=True, stdout=subprocess.DEVNULL)


ENGINES = {"wavecd": Wavecd, "argocd": ArgoCD, "flux": Flux}


def run_engine(eng, args, repo_dir, repo_url, work):
    """One engine's bootstrap on a fresh cluster: its figures."""
    cluster = Cluster(eng.work)
    cluster.start()
    proxy = watcher = None
    try:
        eng.install(cluster)
        eng.start(cluster)
        root = eng.root(repo_dir, repo_url)
        # Warm kubectl's discovery and the API server's schema of the large
        # Application CRD, as an installation that has run a while has it.
        cluster.kubectl("create", "--dry-run=server", "-f", root)
        proxy_log = os.path.join(eng.work, "proxy.log")
        proxy = subprocess.Popen(["kubectl", "--kubeconfig", cluster.kubeconfig, "proxy", "--address", "127.0.0.1", "--port", "0"],
                                 stdout=open(proxy_log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
        proxy_url = None
        for _ in range(100):
            with open(proxy_log) as f:
                line = f.read()
            if "Starting to serve on " in line:
                proxy_url = "http://" + line.split("Starting to serve on ", 1)[1].split()[0]
                break
            time.sleep(0.1)
        if proxy_url is None:
            raise RuntimeError("kubectl proxy did not start")
        with urllib.request.urlopen(proxy_url + "/metrics", timeout=30) as r:
            base_by = requests_by(r.read().decode())
        base_requests = sum(base_by.values())
        watch_dir = os.path.join(eng.work, "watch")
        os.makedirs(watch_dir, exist_ok=True)
        watcher = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "watch-apps.py"), "--proxy", proxy_url,
                                    "--expect", str(args.expect), "--out", watch_dir, "--kind", eng.kind, "--namespace", eng.namespace, "--scrape", f"apiserver={proxy_url}/metrics",
                                    "--timeout", str(args.timeout)] + [f"--pid={n}={p.pid}" for n, p in eng.procs.items()])
        time.sleep(1)  # the watch lists before the root exists
        before = total(eng.procs)
        t0 = time.time()
        cluster.kubectl("create", "-f", root)
        timed_out = watcher.wait() != 0
        if timed_out:
            # Keep the engine's figures at the deadline, marked, so one
            # engine's timeout does not lose the others' run.
            log(f"{eng.name}: not every app was Synced and Healthy within {args.timeout}s; logs in {eng.work}")
            w = {"done_unix": time.time(), "procs": {n: proc_stat(p.pid) for n, p in eng.procs.items()}}
            with urllib.request.urlopen(proxy_url + "/metrics", timeout=30) as r:
                done_by = requests_by(r.read().decode())
        else:
            with open(os.path.join(watch_dir, "watch.json")) as f:
                w = json.load(f)
            with open(os.path.join(watch_dir, "apiserver.prom")) as f:
                done_by = requests_by(f.read())
            log(f"{eng.name}: all {args.expect} apps Synced+Healthy after {w['done_unix'] - t0:.1f}s; idling {args.idle_seconds}s")
        done_requests = sum(done_by.values())
        at_done = {k: sum(p[k] for p in w["procs"].values()) for k in ("cpu_s", "rss_mib", "peak_rss_mib")}
        idle0, t_idle = total(eng.procs), time.time()
        time.sleep(args.idle_seconds)
        idle1 = total(eng.procs)
        idle_pct = (idle1["cpu_s"] - idle0["cpu_s"]) / (time.time() - t_idle) * 100
        return {
            "timed_out": timed_out,
            "seconds": round(w["done_unix"] - t0, 2),
            "cpu_s": round(at_done["cpu_s"] - before["cpu_s"], 2),
            "cpu_total_s": round(at_done["cpu_s"], 2),
            "rss_mib": round(at_done["rss_mib"], 1),
            "peak_rss_mib": round(idle1["peak_rss_mib"], 1),
            "rss_settled_mib": round(idle1["rss_mib"], 1),
            "rss_anon_settled_mib": round(idle1["rss_anon_mib"], 1),
            "idle_pct": round(idle_pct, 2),
            "requests_per_app": round((done_requests - base_requests) / args.apps, 2),
            "cpu_ms_per_app": round((at_done["cpu_s"] - before["cpu_s"]) * 1000 / args.apps, 2),
            "rss_settled_kib_per_app": round(idle1["rss_mib"] * 1024 / args.apps, 1),
            "processes": {n: {k: round(v, 2) for k, v in s.items()} for n, s in w["procs"].items()},
            # What the requests were (every client's), per app: where to cut.
            "requests_per_app_by": requests_delta(base_by, done_by, args.apps),
        }
    finally:
        for p in (watcher, proxy):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait()
        eng.stop()
        cluster.stop()


FIGURES = [("seconds", "time to all ready (s)"), ("cpu_s", "CPU from the root's creation until then (s)"),
           ("cpu_total_s", "CPU since the engine started (s)"), ("rss_mib", "RSS then (MiB)"),
           ("peak_rss_mib", "peak RSS (MiB, sum of processes)"), ("rss_settled_mib", "settled RSS (MiB)"),
           ("rss_anon_settled_mib", "settled anonymous RSS (MiB: heap, stacks)"),
           ("idle_pct", "idle CPU (% of a core)"), ("requests_per_app", "API requests per app (all clients)"),
           ("cpu_ms_per_app", "CPU per app (ms)"), ("rss_settled_kib_per_app", "settled RSS per app (KiB)")]


def table(result):
    engines = list(result["engines"])
    peers = [e for e in engines if e != "wavecd"]
    head = ["figure"] + engines + [f"wavecd/{p}" for p in peers]
    rows = [head, ["---"] * len(head)]
    for key, label in FIGURES:
        row = [label] + [(">" if key == "seconds" and result["engines"][e].get("timed_out") else "") +
                         str(result["engines"][e][key]) for e in engines]
        for p in peers:
            w, v = result["engines"].get("wavecd", {}).get(key), result["engines"][p][key]
            row.append(f"{w / v:.3f}" if w is not None and v else "-")
        rows.append(row)
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def median_of(runs):
    out = {}
    for key, _ in FIGURES:
        out[key] = round(statistics.median(r[key] for r in runs), 2)
    out["timed_out"] = any(r.get("timed_out") for r in runs)
    out["runs"] = runs
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", choices=["idle", "waves"], default="idle")
    p.add_argument("--count", type=int, default=200, help="apps of the idle scenario (waves: 7)")
    p.add_argument("--engines", default="wavecd,argocd")
    p.add_argument("--rounds", type=int, default=1, help="runs of each engine, in alternating order")
    p.add_argument("--idle-seconds", type=int, default=180)
    p.add_argument("--timeout", type=int, default=0, help="seconds an engine may take (default 600 + 1 per app)")
    p.add_argument("--argocd", default=os.path.join(ROOT, "bin", "argocd"), help="Argo CD's binary (make argocd-peer)")
    p.add_argument("--argocd-crds", default=os.path.join(ROOT, "bin", "argocd-crds"), help="folder of Argo CD's CRDs")
    p.add_argument("--argocd-tools", default=os.path.join(ROOT, "bin", "argocd-tools"),
                   help="folder of Argo CD's git wrapper scripts (make argocd-peer)")
    p.add_argument("--flux-crds", default=os.path.join(ROOT, "bin", "flux-crds"), help="folder of Flux's CRDs (make flux-peer)")
    p.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"))
    p.add_argument("--wavecd-arg", action="append", default=[], metavar="FLAG",
                   help="one more flag for wavecd's controller (repeatable), e.g. --wavecd-arg=--pprof-listen=127.0.0.1:6060")
    p.add_argument("--wavecd-env", action="append", default=[], metavar="NAME=VALUE",
                   help="one more environment variable for wavecd's controller (repeatable), e.g. GODEBUG=memprofilerate=4096")
    p.add_argument("--keep", action="store_true", help="keep the work folder (logs) after the run")
    args = p.parse_args()
    names = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        p.error(f"unknown engine(s) {', '.join(unknown)}: choose from {', '.join(ENGINES)}")
    args.apps = args.count if args.scenario == "idle" else 7
    args.expect = args.apps + 1
    args.timeout = args.timeout or 600 + args.apps
    for need in [os.path.join(ROOT, "bin", "wavecd"), os.path.join(ROOT, "bin", "wavecd-localcluster")] + (
            [args.argocd] if "argocd" in names else []) + (
            [os.path.join(ROOT, "bin", n) for n in ("flux-source-controller", "flux-kustomize-controller")] if "flux" in names else []):
        if not os.access(need, os.X_OK):
            sys.exit(f"peers: {need} is missing: run make build (make argocd-peer for Argo CD, make flux-peer for Flux)")
    if "argocd" in names and not shutil.which("redis-server"):
        sys.exit("peers: Argo CD needs redis-server: apt-get install -y redis-server")
    gen = os.path.join(args.shared, "bench", "wave-bootstrap", "gen_repo.py")
    if not os.path.exists(gen):
        sys.exit(f"peers: {gen} not found: pass --shared")
    work = tempfile.mkdtemp(prefix="wavecd-peers.")
    server, git_port = serve_git(work)
    repo_dir = os.path.join(work, "repo")
    repo_url = f"http://127.0.0.1:{git_port}/repo"
    runs = {n: [] for n in names}
    try:
        gen_args = ["--scenario", args.scenario] + (["--count", str(args.count)] if args.scenario == "idle" else [])
        subprocess.run([sys.executable, gen, repo_dir, "--repo-url", repo_url, "--no-git"] + gen_args,
                       check=True, stdout=subprocess.DEVNULL)
        flux_layer(repo_dir, args.scenario, args.apps)
        commit(repo_dir, f"bench {args.scenario} x{args.apps}")
        for rnd in range(args.rounds):
            order = names[rnd % len(names):] + names[:rnd % len(names)]
            for n in order:
                log(f"round {rnd + 1}/{args.rounds}: {n}, {args.scenario} with {args.apps} apps")
                eng = ENGINES[n](args, os.path.join(work, f"round{rnd + 1}"))
                runs[n].append(run_engine(eng, args, repo_dir, repo_url, work))
    finally:
        server.shutdown()
        if args.keep:
            log(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    result = {"scenario": args.scenario, "apps": args.apps, "rounds": args.rounds,
              "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "engines": {n: median_of(r) for n, r in runs.items()}}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    out = os.path.join(ROOT, "bench", "results",
                       f"peers-{args.scenario}-{args.apps}-{datetime.datetime.now():%Y%m%dT%H%M%S}.json")
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(table(result))
    print(f"result: {out}")


if __name__ == "__main__":
    main()
