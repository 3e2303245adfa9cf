// The dashboard's only script and stylesheet, served from the package (no CDN, no build step). The script
// is progressive enhancement: pages work without it; with it, a live region follows the event stream.

/** Live regions: a `[data-live]` element names the event stream; each event re-renders `[data-live-region]`. */
export const APP_JS = `'use strict';
(function () {
  var live = document.querySelector('[data-live]');
  var status = document.getElementById('live-status');
  if (live && window.EventSource) {
    var src = new EventSource(live.getAttribute('data-live'));
    var timer = null, busy = false, again = false;
    var refresh = function () {
      if (busy) { again = true; return; }
      busy = true;
      fetch(location.href, { headers: { 'x-live-refresh': '1' }, credentials: 'same-origin' })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) return;
          var doc = new DOMParser().parseFromString(html, 'text/html');
          var next = doc.querySelectorAll('[data-live-region]');
          var cur = document.querySelectorAll('[data-live-region]');
          for (var i = 0; i < cur.length && i < next.length; i++) cur[i].replaceWith(next[i]);
        })
        .catch(function () {})
        .then(function () { busy = false; if (again) { again = false; refresh(); } });
    };
    src.addEventListener('open', function () { if (status) status.textContent = 'live'; });
    src.addEventListener('error', function () { if (status) status.textContent = 'reconnecting…'; });
    src.addEventListener('event', function (m) {
      if (status) status.textContent = 'live · event #' + m.lastEventId;
      clearTimeout(timer);
      timer = setTimeout(refresh, 100);
    });
  }
  var all = document.getElementById('select-all');
  if (all) all.addEventListener('change', function () {
    var boxes = document.querySelectorAll('input[name="id"]');
    for (var i = 0; i < boxes.length; i++) boxes[i].checked = all.checked;
  });
})();
`;

export const APP_CSS = `:root{--bg:#fff;--fg:#1b1f24;--muted:#59636e;--line:#d1d9e0;--bad:#b3261e;--warn:#8a5a00;--ok:#1a7f37;--accent:#0b57d0;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:15px}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg)}
a{color:var(--accent)}header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1rem;border-bottom:1px solid var(--line)}
header strong{font-size:1.1rem}nav{display:flex;flex-wrap:wrap;gap:.75rem}nav a[aria-current]{font-weight:700;text-decoration:none;color:var(--fg)}
header form{margin:0;display:flex;gap:.4rem;align-items:center}.spacer{flex:1}
main{padding:1rem;max-width:1400px;margin:0 auto}h1{font-size:1.35rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.4rem 0 .5rem}
.counts{display:flex;flex-wrap:wrap;gap:.5rem;list-style:none;padding:0;margin:0}.counts li{border:1px solid var(--line);border-radius:6px;padding:.5rem .8rem;min-width:7.5rem}
.counts b{display:block;font-size:1.4rem}.failed b,.st-failed{color:var(--bad)}.waiting_human b,.st-waiting_human{color:var(--warn)}.done b,.st-done,.st-completed{color:var(--ok)}.st-running{color:var(--accent)}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,680px),1fr));gap:0 1.5rem}
table{border-collapse:collapse;width:100%;font-size:.92rem}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted)}td{overflow-wrap:anywhere}td.num{white-space:nowrap;font-variant-numeric:tabular-nums}.wrap{overflow-x:auto}
.nb{overflow-wrap:normal}section[aria-labelledby="h-behind"]{margin-bottom:1rem}.notice{border:1px solid var(--ok);border-left-width:4px;border-radius:6px;padding:.5rem .75rem;color:var(--ok)}ul.problems{list-style:none;padding:0;margin:0 0 1rem;display:grid;gap:.5rem}ul.problems li{border:1px solid var(--bad);border-left-width:4px;border-radius:6px;padding:.5rem .75rem}ul.problems b{color:var(--bad)}.way-out{color:var(--muted);margin-top:.2rem}.badge{white-space:nowrap}time{white-space:nowrap}.id{white-space:nowrap;font-size:.8rem;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}pre.problem{white-space:pre-wrap;overflow-wrap:anywhere}
pre{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:.6rem;overflow:auto;max-height:28rem;font-size:.85rem}
.muted{color:var(--muted)}.problem{color:var(--bad);font-weight:600}.badge{display:inline-block;padding:0 .4rem;border-radius:4px;border:1px solid currentColor;font-size:.8rem}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin-bottom:1rem}label{display:block;font-size:.85rem;color:var(--muted)}
input,select,textarea,button{font:inherit;padding:.35rem .5rem;border:1px solid var(--line);border-radius:5px;background:#fff;color:var(--fg)}
button{cursor:pointer;background:#f6f8fa}button.primary{background:var(--accent);color:#fff;border-color:var(--accent)}button.danger{color:var(--bad);border-color:var(--bad)}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}.actions form{margin:0}
.diff-add{background:#e6ffec}.diff-remove{background:#ffebe9}.diff-replace{background:#fff8c5}
body.login main{max-width:24rem;margin:10vh auto}body.login form{display:grid;gap:.5rem}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;overflow-wrap:anywhere}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,420px),1fr));gap:.5rem 1.5rem}figure.chart{margin:0}figure.chart figcaption{font-size:.9rem;margin-bottom:.25rem}
figure.chart svg{display:block;height:auto}figure.chart text{font-size:10px;fill:var(--muted)}.axis{stroke:var(--muted)}.grid line,line.grid{stroke:var(--line);stroke-dasharray:3 3}
.depth{fill:#d3e3fd}.depth-line{fill:none;stroke:var(--accent);stroke-width:1.5}figure.chart details{font-size:.85rem}
svg.timeline{display:block;border:1px solid var(--line);border-radius:6px;margin-bottom:.5rem}
.o-done{fill:var(--ok);color:var(--ok)}.o-failed{fill:var(--bad);color:var(--bad)}.o-retry,.o-expired,.o-parked{fill:var(--warn);color:var(--warn)}.o-released,.o-cancelled{fill:var(--muted);color:var(--muted)}.o-running{fill:var(--accent);color:var(--accent)}rect.mark{fill:var(--fg);stroke:var(--bg);stroke-width:.6}rect.m-failed{fill:var(--bad)}rect.m-pause{fill:var(--accent)}.badge.m-done{color:var(--ok)}.badge.m-failed{color:var(--bad)}.badge.m-pause{color:var(--accent)}
pre.setup{white-space:pre-wrap;overflow-wrap:anywhere}
.option label{display:inline;margin-left:.3rem;color:var(--fg);font-size:1rem}fieldset{border:1px solid var(--line);border-radius:6px}.pager{display:flex;gap:1rem;margin:.75rem 0}
@media (max-width:640px){main{padding:.6rem}table.stack thead{display:none}table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.3rem 0}table.stack td{display:inline-block;border:0;padding:.15rem .4rem;max-width:100%}table.stack td.data{display:block}table.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}table.stack td[data-label]:empty{display:none}.grid{grid-template-columns:1fr}th.opt,td.opt{display:none}header{padding:.5rem}figure.chart text{font-size:14px}}
`;
