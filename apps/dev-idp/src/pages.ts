// Minimal self-contained HTML: no external fonts or scripts (tests and CI reach loopback only).

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:22rem;margin:3rem auto;padding:0 1rem}' +
  'label,input,button{display:block;width:100%;margin:.4rem 0}input{padding:.4rem}' +
  'button{padding:.5rem;cursor:pointer}.error{color:#b00020}.muted{color:#666;font-size:.9rem}';

function page(title: string, body: string): string {
  return (
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head>` +
    `<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`
  );
}

export function loginPage(input: { uid: string; clientId: string; email?: string; error?: string }): string {
  const uid = encodeURIComponent(input.uid);
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : '';
  return page(
    'Sign in',
    `<p class="muted">hostctl development identity provider · client ${escapeHtml(input.clientId)}</p>${error}` +
      `<form method="post" action="/interaction/${uid}/login" autocomplete="off">` +
      `<label>Email <input type="email" name="email" required autofocus value="${escapeHtml(input.email ?? '')}"></label>` +
      `<label>Password <input type="password" name="password" required></label>` +
      `<button type="submit">Sign in</button></form>` +
      `<form method="post" action="/interaction/${uid}/abort"><button type="submit">Cancel</button></form>`,
  );
}

export function logoutPage(form: string, host: string): string {
  return page(
    'Sign out',
    `<p>Sign out of ${escapeHtml(host)}?</p>${form}` +
      '<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button>' +
      '<button type="submit" form="op.logoutForm">Stay signed in</button>',
  );
}

export function messagePage(title: string, lines: Record<string, string>): string {
  const rows = Object.entries(lines)
    .map(([key, value]) => `<p><strong>${escapeHtml(key)}</strong>: ${escapeHtml(value)}</p>`)
    .join('');
  return page(title, rows);
}
