/** Where the LDAP directory listens, and whether the connection is TLS from its first byte (LDAPS). */
export type LdapAddress = { secure: boolean; host: string; port: number };

const SERVER = /^(?:(ldaps?):\/\/)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9._-]*)(?::(\d{1,5}))?\/?$/;

/**
 * The directory's address from the server setting: `ldap://host[:port]`, `ldaps://host[:port]`, or the peer's
 * `host[:port]`, where `needTls` chooses LDAPS. An IPv6 host is written in brackets. The port defaults to `port`
 * (the peer's separate port setting), else 636 for LDAPS and 389 otherwise. A string is the reason it is invalid.
 */
export function parseLdapServer(
  server: string,
  opts: { port?: number; needTls: boolean },
): LdapAddress | string {
  const match = SERVER.exec(server.trim());
  if (!match) return 'must be host[:port], ldap://host[:port] or ldaps://host[:port]';
  const [, rawScheme, rawHost = '', rawPort] = match;
  const scheme = rawScheme?.toLowerCase();
  if (scheme === 'ldap' && opts.needTls)
    return 'names ldap:// while LDAPS (SIGNALBOX_LDAP_NEEDTLS) is on: write ldaps:// or turn one of them off';
  const secure = scheme === 'ldaps' || (!scheme && opts.needTls);
  const port = rawPort ? Number(rawPort) : (opts.port ?? (secure ? 636 : 389));
  if (port < 1 || port > 65535) return 'has a port outside 1-65535';
  return { secure, host: rawHost.replace(/^\[|\]$/g, ''), port };
}

/** The URL ldapts connects to (IPv6 hosts in brackets). */
export const ldapUrl = (a: LdapAddress) =>
  `${a.secure ? 'ldaps' : 'ldap'}://${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;

/**
 * Whether a filter template is one parenthesised LDAP filter: it starts with "(", ends with ")", and its
 * unescaped parentheses balance (a value inside is escaped as \28 and \29, never written bare).
 */
export function isFilterTemplate(template: string): boolean {
  const t = template.trim();
  if (!t.startsWith('(') || !t.endsWith(')')) return false;
  let depth = 0;
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (c === '\\') i += 1;
    else if (c === '(') depth += 1;
    else if (c === ')') {
      depth -= 1;
      // Closed before the end: two filters side by side, not one.
      if (depth < 0 || (depth === 0 && i !== t.length - 1)) return false;
    }
  }
  return depth === 0;
}
