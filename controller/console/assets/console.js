// The orchctl console's one script (served as a file: the Content-Security-Policy allows no inline
// script). It logs in from the URL's #token=, keeps the board and a session's summary live from
// server-sent events, and feeds the terminal view (xterm.js) from its stream. Everything else is
// plain HTML forms, which work without it.
'use strict';

const COLUMNS = ['PHASE', 'ACTIVITY', 'PROJECT', 'NODE', 'CONTEXT', 'COST', 'TASK', 'AGE'];

function autoLogin() {
  const form = document.getElementById('login');
  const m = /^#token=([^&]+)$/.exec(location.hash);
  if (!form || !m) return;
  form.elements.token.value = decodeURIComponent(m[1]);
  history.replaceState(null, '', location.pathname); // the token leaves the address bar
  form.submit();
}

function rowElement(r) {
  const tr = document.createElement('tr');
  tr.dataset.key = r.key;
  const a = document.createElement('a');
  a.href = `/sessions/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}`;
  a.textContent = r.name;
  const first = document.createElement('td');
  first.append(a);
  tr.append(first);
  for (const c of COLUMNS) {
    const td = document.createElement('td');
    td.textContent = r.cells[c];
    tr.append(td);
  }
  return tr;
}

function liveBoard() {
  const table = document.getElementById('board');
  if (!table) return;
  const body = table.tBodies[0];
  const count = document.getElementById('count');
  const byKey = new Map();
  const recount = () => {
    count.textContent = String(byKey.size);
  };
  const put = (r) => {
    const tr = rowElement(r);
    const old = byKey.get(r.key);
    byKey.set(r.key, tr);
    if (old) old.replaceWith(tr);
    else {
      const next = [...byKey.keys()].sort().find((k) => k > r.key && byKey.get(k).isConnected);
      body.insertBefore(tr, next ? byKey.get(next) : null);
    }
    recount();
  };
  const es = new EventSource(table.dataset.stream);
  // Every row at once, in the server's order: one DOM insertion, not a sorted search per row.
  es.addEventListener('rows', (e) => {
    byKey.clear();
    const rows = document.createDocumentFragment();
    for (const r of JSON.parse(e.data)) {
      const tr = rowElement(r);
      byKey.set(r.key, tr);
      rows.append(tr);
    }
    body.replaceChildren(rows);
    recount();
    table.dataset.live = 'true';
  });
  // The page already shows the current rows (it was rendered at the version the stream opened on).
  es.addEventListener('same', () => {
    byKey.clear();
    for (const tr of body.rows) if (tr.dataset.key) byKey.set(tr.dataset.key, tr);
    recount();
    table.dataset.live = 'true';
  });
  es.addEventListener('row', (e) => put(JSON.parse(e.data)));
  es.addEventListener('remove', (e) => {
    const { key } = JSON.parse(e.data);
    byKey.get(key)?.remove();
    byKey.delete(key);
    recount();
  });
}

function liveSummary() {
  const dl = document.getElementById('summary');
  if (!dl) return;
  const update = (r) => {
    for (const dd of dl.querySelectorAll('dd[data-cell]')) dd.textContent = r.cells[dd.dataset.cell];
  };
  const es = new EventSource(dl.dataset.stream);
  es.addEventListener('rows', (e) => JSON.parse(e.data).forEach(update));
  es.addEventListener('row', (e) => update(JSON.parse(e.data)));
}

function liveTerminal() {
  const el = document.getElementById('terminal');
  if (!el || !window.Terminal) return;
  const term = new window.Terminal({ convertEol: true, disableStdin: true, rows: 30, cols: 100, scrollback: 2000 });
  term.open(el);
  const es = new EventSource(el.dataset.stream);
  es.addEventListener('data', (e) => term.write(JSON.parse(e.data)));
  es.addEventListener('open', () => {
    el.dataset.live = 'true';
  });
}

document.addEventListener('DOMContentLoaded', () => {
  autoLogin();
  liveBoard();
  liveSummary();
  liveTerminal();
});
