"""``combex dashboard STORAGE``: a web page following the live studies of a storage.

A small standard-library HTTP server: ``/`` is one HTML page that polls ``/api/studies``
(JSON) every ``interval`` seconds and shows, per study, the status, the current leader,
evaluations told and pending, a confidence interval per arm (or team member), the
stopping statistic over the evaluations and, at the stop, the stored certificate.

The per-arm intervals are display aids computed from the told log:
``mean +- sigma * sqrt(2 log(4 N n^2 / 0.05) / n)`` (an anytime union bound over the N arms
and the sample sizes n, 95 %); for team (mask) tickets a member is credited the team's
reward divided by the team size. The solver's own statistics decide the stop.
"""

from __future__ import annotations

import argparse
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["study_snapshot", "make_server", "serve", "add_dashboard_command"]


def study_snapshot(storage: Any, name: str, max_points: int = 400) -> dict[str, Any]:
    """The JSON the page shows for one study."""
    from .studies import Study
    from .studies._study import _js

    rec = storage.get_study(name)
    study = Study(storage, rec)
    rows = storage.tickets(name)
    n = int(rec.problem["n_arms"])
    labels = rec.problem.get("labels") or [str(i) for i in range(n)]
    sigma = float(rec.problem["noise"]["sigma"])
    cnt = [0] * n
    tot = [0.0] * n
    trace: list[dict[str, Any]] = []
    pending = 0
    for r in rows:
        if r.state == "pending":
            pending += 1
        if r.state != "told":
            continue
        members = r.arm if isinstance(r.arm, list) else [r.arm]
        share = float(r.reward_sum) / max(len(members), 1)
        for m in members:
            cnt[m] += r.count
            tot[m] += share
        if r.stat:
            trace.append({"seq": r.told_seq, **r.stat})
    trace.sort(key=lambda d: d["seq"])
    if len(trace) > max_points:
        step = len(trace) / max_points
        trace = [trace[int(i * step)] for i in range(max_points)] + [trace[-1]]
    arms = []
    for i in range(n):
        if cnt[i]:
            mean = tot[i] / cnt[i]
            rad = sigma * math.sqrt(2.0 * math.log(4.0 * n * cnt[i] ** 2 / 0.05) / cnt[i])
            arms.append({"arm": i, "label": labels[i], "n": cnt[i], "mean": mean, "low": mean - rad, "high": mean + rad})
        else:
            arms.append({"arm": i, "label": labels[i], "n": 0, "mean": None, "low": None, "high": None})
    if rec.status == "running":
        try:
            best = study.best()
        except Exception as exc:  # the page keeps working while a study is broken
            best = {"answer": None, "error": str(exc)}
    else:
        best = {"answer": rec.result.get("answer") if rec.result else None,
                "labels": rec.result.get("answer_labels") if rec.result else None}
    told = sum(1 for r in rows if r.state == "told")
    return _js({
        "name": name, "status": rec.status, "solver": rec.solver, "solver_params": rec.solver_params,
        "policy": rec.policy, "evaluations": told, "pending": pending, "leader": best.get("answer"),
        "leader_labels": best.get("labels"), "arms": arms, "trace": trace,
        "certificate": (rec.result or {}).get("certificate"), "result": rec.result,
    })


PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>combex studies</title>
<style>
body{font-family:sans-serif;margin:1.5em;color:#222}
.study{border:1px solid #ccc;border-radius:6px;padding:1em;margin-bottom:1.5em}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #eee}
.identified{color:#060;font-weight:bold}.running{color:#a60}
.bar{stroke:#48c;stroke-width:6}.dot{fill:#024}
</style></head>
<body><h1>combex studies</h1><p id="updated">loading...</p><div id="studies"></div>
<script>
const interval = __INTERVAL__;
function esc(s){return String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));}
function fmt(x){return x===null||x===undefined?'-':(typeof x==='number'?(Number.isInteger(x)?x:x.toFixed(4)):esc(JSON.stringify(x)));}
function chart(trace){
  if(!trace.length) return '<p class="nostat">no stopping statistic yet</p>';
  const keys=Object.keys(trace[trace.length-1]).filter(k=>k!=='seq'&&typeof trace[trace.length-1][k]==='number');
  const W=520,H=160, xs=trace.map(d=>d.seq); const x0=Math.min(...xs), x1=Math.max(...xs)||1;
  let vals=[]; keys.forEach(k=>trace.forEach(d=>{if(typeof d[k]==='number')vals.push(d[k]);}));
  const y0=Math.min(0,...vals), y1=Math.max(0,...vals)+1e-12;
  const X=v=>10+(W-20)*(v-x0)/Math.max(x1-x0,1), Y=v=>H-10-(H-20)*(v-y0)/(y1-y0);
  const colors=['#c33','#36c','#393','#939','#c93'];
  let s='<svg width="'+W+'" height="'+H+'" class="stat-chart"><line x1="10" x2="'+(W-10)+'" y1="'+Y(0)+'" y2="'+Y(0)+'" stroke="#999" stroke-dasharray="4"/>';
  keys.forEach((k,i)=>{const pts=trace.filter(d=>typeof d[k]==='number').map(d=>X(d.seq)+','+Y(d[k])).join(' ');
    s+='<polyline fill="none" stroke="'+colors[i%5]+'" points="'+pts+'"/><text x="'+(W-120)+'" y="'+(14+12*i)+'" fill="'+colors[i%5]+'" font-size="11">'+esc(k)+'</text>';});
  return s+'</svg><p class="legend">statistic(s) after each tell vs the evaluation number; dashed line: 0 (the threshold of the gap statistics)</p>';
}
function render(studies){
  const root=document.getElementById('studies');
  root.innerHTML=studies.map(s=>{
    const lo=Math.min(...s.arms.filter(a=>a.low!==null).map(a=>a.low),0), hi=Math.max(...s.arms.filter(a=>a.high!==null).map(a=>a.high),1);
    const sx=v=>10+280*(v-lo)/(hi-lo||1);
    const rows=s.arms.map(a=>'<tr class="arm"><td>'+esc(a.label)+'</td><td class="n">'+fmt(a.n)+'</td><td class="mean">'+fmt(a.mean)+
      '</td><td class="ci">'+(a.low===null?'-':'['+fmt(a.low)+', '+fmt(a.high)+']')+'</td><td>'+(a.low===null?'':
      '<svg width="300" height="10"><line class="bar" x1="'+sx(a.low)+'" x2="'+sx(a.high)+'" y1="5" y2="5"/><circle class="dot" cx="'+sx(a.mean)+'" cy="5" r="3"/></svg>')+'</td></tr>').join('');
    return '<div class="study" id="study-'+esc(s.name)+'" data-name="'+esc(s.name)+'"><h2>'+esc(s.name)+
      ' <span class="status '+esc(s.status)+'">'+esc(s.status)+'</span></h2>'+
      '<p>solver <b>'+esc(s.solver)+'</b> '+fmt(s.solver_params)+' ('+esc(s.policy)+' policy)</p>'+
      '<p>evaluations told: <b class="evaluations">'+s.evaluations+'</b>, pending: <b class="pending">'+s.pending+'</b></p>'+
      '<p>leader: <b class="leader">'+fmt(s.leader)+'</b> '+(s.leader_labels?fmt(s.leader_labels):'')+'</p>'+
      (s.certificate?'<p>certificate: <code class="certificate">'+fmt(s.certificate)+'</code></p>':'')+
      '<table><tr><th>arm</th><th>n</th><th>mean</th><th>95% CI</th><th></th></tr>'+rows+'</table>'+chart(s.trace)+'</div>';
  }).join('') || '<p>no study in this storage</p>';
}
async function poll(){
  try{const r=await fetch('api/studies');const d=await r.json();render(d.studies);
    document.getElementById('updated').textContent='updated '+new Date().toLocaleTimeString()+' ('+d.storage+')';}
  catch(e){document.getElementById('updated').textContent='error: '+e;}
  setTimeout(poll, interval*1000);
}
poll();
</script></body></html>
"""


def make_server(storage: Any, host: str = "127.0.0.1", port: int = 8050, interval: float = 2.0) -> ThreadingHTTPServer:
    """An HTTP server for ``storage`` (not started: call ``serve_forever``)."""
    from .studies import get_storage

    st = get_storage(storage)
    page = PAGE.replace("__INTERVAL__", repr(float(interval))).encode()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            path = self.path.split("?")[0]
            if path in ("/", "/index.html"):
                return self._send(200, page, "text/html; charset=utf-8")
            if path == "/api/studies":
                try:
                    with lock:
                        doc = {"storage": repr(st),
                               "studies": [study_snapshot(st, r.name) for r in st.list_studies()]}
                    return self._send(200, json.dumps(doc).encode(), "application/json")
                except Exception as exc:
                    return self._send(500, json.dumps({"error": str(exc)}).encode(), "application/json")
            return self._send(404, b"not found", "text/plain")

    return ThreadingHTTPServer((host, port), Handler)


def serve(storage: Any, host: str = "127.0.0.1", port: int = 8050, interval: float = 2.0) -> None:
    """Serve the dashboard until interrupted."""
    srv = make_server(storage, host, port, interval)
    print(f"combex dashboard on http://{host}:{srv.server_address[1]}/ (Ctrl-C to stop)", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:  # pragma: no cover
        pass
    finally:
        srv.server_close()


def _cmd(args: argparse.Namespace) -> int:
    serve(args.storage, args.host, args.port, args.interval)
    return 0


def add_dashboard_command(sub: Any) -> None:
    """Register ``combex dashboard STORAGE`` on the ``combex`` parser's subparsers."""
    p = sub.add_parser("dashboard", help="serve a web page following the studies of a storage",
                       description="Serve one web page (and /api/studies JSON) showing every study of STORAGE: "
                                   "leader, per-arm confidence intervals, stopping statistic over time, "
                                   "evaluations told and pending, final certificate.",
                       epilog="Example: combex dashboard lab.db --port 8050")
    p.add_argument("storage", help="file path (SQLite) or SQLAlchemy URL")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8050, help="port (0: any free port)")
    p.add_argument("--interval", type=float, default=2.0, help="page refresh interval in seconds")
    p.set_defaults(func=_cmd)
