/** Server-rendered HTML: escaping, the page layout, tables. No inline script or style (the CSP forbids them). */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for an HTML element or a quoted attribute. */
export const esc = (v: unknown) => String(v ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);

export interface PageOptions {
  title: string;
  /** The login's CSRF token: forms carry it, and the script sends it with its requests. */
  csrf?: string;
  /** A note shown at the top (the outcome of the last action). */
  flash?: string;
  /** Extra scripts and styles (the terminal view's xterm.js). */
  scripts?: string[];
  styles?: string[];
}

const NAV = [
  ['/', 'Sessions'],
  ['/decisions', 'Decisions'],
  ['/pipelines', 'Pipelines'],
  ['/nodes', 'Nodes'],
  ['/notifications', 'Notifications'],
  ['/digest', 'Digest'],
  ['/silences', 'Silences'],
];

export function page(o: PageOptions, body: string): string {
  const styles = ['/assets/console.css', ...(o.styles ?? [])].map((s) => `<link rel="stylesheet" href="${esc(s)}">`);
  const scripts = [...(o.scripts ?? []), '/assets/console.js'].map((s) => `<script src="${esc(s)}" defer></script>`);
  const nav = o.csrf
    ? `<nav>${NAV.map(([h, t]) => `<a href="${h}">${t}</a>`).join('')}` +
      `<form method="post" action="/logout">${csrfField(o.csrf)}<button>Log out</button></form></nav>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${o.csrf ? `<meta name="csrf-token" content="${esc(o.csrf)}">` : ''}
<title>${esc(o.title)} · orchctl</title>
${styles.join('\n')}
${scripts.join('\n')}
</head><body>
<header><strong>orchctl</strong>${nav}</header>
<main>
${o.flash ? `<p class="flash" role="status">${esc(o.flash)}</p>` : ''}
<h1>${esc(o.title)}</h1>
${body}
</main></body></html>`;
}

export const csrfField = (csrf: string) => `<input type="hidden" name="_csrf" value="${esc(csrf)}">`;

/** A table whose cells are text (escaped here) or trusted HTML ({ html }); `keys`: each row's data-key. */
export function table(head: string[], rows: (string | { html: string })[][], attrs = '', keys?: string[]): string {
  const cell = (c: string | { html: string }) => (typeof c === 'string' ? esc(c) : c.html);
  const tr = (i: number) => (keys ? `<tr data-key="${esc(keys[i])}">` : '<tr>');
  return (
    `<div class="scroll"><table ${attrs}><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>` +
    `<tbody>${rows.map((r, i) => `${tr(i)}${r.map((c) => `<td>${cell(c)}</td>`).join('')}</tr>`).join('')}</tbody>` +
    '</table></div>'
  );
}

/** A POST form with the CSRF token: one action button, optional fields before it. */
export function actionForm(action: string, csrf: string, button: string, fields = '', cls = ''): string {
  return (
    `<form method="post" action="${esc(action)}" class="action ${esc(cls)}">${csrfField(csrf)}${fields}` +
    `<button type="submit">${esc(button)}</button></form>`
  );
}

/** `ns/name`, each part escaped for a URL path. */
export const pathOf = (ns: string, name: string) => `${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
