import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { type ConnectionOptions, connect, rootCertificates, type TLSSocket } from 'node:tls';
import { coded } from '@signalbox/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Client, Entry } from 'ldapts';
import type { Config } from '../../config';
import { AppError } from '../../lib/errors';
import { type LdapAddress, ldapUrl, parseLdapServer } from '../../lib/ldap-address';

/**
 * The LDAP directory side of a sign-in: connect (LDAPS or StartTLS, certificates verified unless turned off),
 * bind as the service account, find the one entry of a login, bind as that entry with the password, and read
 * the user's fields and groups. No password ever reaches a log line or an error message.
 */

/** ldapts, loaded on the first LDAP sign-in: a server without LDAP never needs it. */
const ldapts = () => import('ldapts');

export type LdapSettings = Pick<
  Config,
  | 'ldapServer'
  | 'ldapPort'
  | 'ldapNeedTls'
  | 'ldapStartTls'
  | 'ldapTlsSkipVerify'
  | 'ldapCaFile'
  | 'ldapBindDn'
  | 'ldapBindPassword'
  | 'ldapSearchDn'
  | 'ldapSearchFilter'
  | 'ldapMappingDn'
  | 'ldapMappingMail'
  | 'ldapMappingUid'
  | 'ldapMappingCn'
  | 'ldapTimeout'
  | 'ldapGroupAttribute'
  | 'ldapGroupSearchDn'
  | 'ldapGroupSearchFilter'
>;

/** What the directory says about a login and password. */
export type DirectoryUser = {
  dn: string;
  /** The mapped fields, trimmed ('' when the entry has none). */
  username: string;
  name: string;
  email: string;
  /** The user's groups, each by its normalized DN and by its name (see groupKeys). */
  groups: Set<string>;
};

/** no-entry: no entry matches the login (the peer then tries a local password); refused: it is not them. */
export type DirectoryAnswer = DirectoryUser | 'no-entry' | 'refused';

export const DIRECTORY_UNREACHABLE = coded('ldap_unreachable');
export const DIRECTORY_REFUSED_SEARCH = coded('ldap_search_refused');

/** A value placed inside a search filter, escaped as RFC 4515 says: `*`, `(`, `)`, `\` and NUL become \XX. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The user search filter for a login: every `%s` (or Go's `%[1]s`) of the template becomes the escaped login. */
export function userFilter(template: string, login: string): string {
  const value = escapeFilterValue(login);
  return template.replace(/%(?:\[1\])?s/g, () => value);
}

/** The group search filter: `%s` becomes the user's DN, `%u` their login, both escaped. */
export function groupFilter(template: string, dn: string, login: string): string {
  return template.replace(/%([su])/g, (_, which: string) => escapeFilterValue(which === 's' ? dn : login));
}

const TEMPLATE_PART = /\{\{\s*\.([A-Za-z][A-Za-z0-9-]*)\s*\}\}/g;
const isTemplate = (mapping: string) => /\{\{\s*\.[A-Za-z][A-Za-z0-9-]*\s*\}\}/.test(mapping);

/** The attributes a mapping reads: one name, or each `{{ .name }}` of a template; none for the entry's DN. */
export function mappingAttributes(mapping: string): string[] {
  const parts = [...mapping.matchAll(TEMPLATE_PART)].map((m) => m[1] ?? '');
  if (parts.length > 0) return parts;
  const name = mapping.trim();
  return name === '' || name.toLowerCase() === 'dn' ? [] : [name];
}

/** An attribute's values from an entry, its name compared case-insensitively; binary values are skipped. */
export function attributeValues(entry: Entry, name: string): string[] {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === name.toLowerCase());
  if (key === undefined) return [];
  const value = entry[key];
  const values = Array.isArray(value) ? value : [value];
  return values.filter((v): v is string => typeof v === 'string');
}

/**
 * A user field from an entry: the first value of the mapped attribute, the entry's DN for `dn`, or a template
 * such as `{{ .uid }}@example.org` with each part replaced by the first value of that attribute.
 */
export function mappedValue(entry: Entry, mapping: string): string {
  if (isTemplate(mapping))
    return mapping.replace(TEMPLATE_PART, (_, name: string) => attributeValues(entry, name)[0] ?? '').trim();
  const name = mapping.trim();
  if (name === '' || name.toLowerCase() === 'dn') return entry.dn;
  return (attributeValues(entry, name)[0] ?? '').trim();
}

/** The index of the first character of `text` in `chars` that no backslash escapes; -1 when none. */
function unescapedIndex(text: string, chars: string, from = 0): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i += 1;
    else if (chars.includes(text[i] ?? '')) return i;
  }
  return -1;
}

/** The value of a DN's first RDN (`cn=Ops\, EU,ou=groups,…` -> `Ops, EU`), its escapes undone; '' if none. */
export function firstRdnValue(dn: string): string {
  const end = unescapedIndex(dn, ',+');
  const rdn = end < 0 ? dn : dn.slice(0, end);
  const eq = unescapedIndex(rdn, '=');
  if (eq < 0) return '';
  return rdn
    .slice(eq + 1)
    .trim()
    .replace(/\\([0-9A-Fa-f]{2}|.)/g, (_, c: string) =>
      c.length === 2 ? String.fromCharCode(Number.parseInt(c, 16)) : c,
    );
}

/**
 * How a group is compared: lower-cased, without the spaces around a DN's separators, so `CN=Admins, OU=Groups`
 * in the settings matches `cn=admins,ou=groups` from the directory.
 */
export function normalizeGroup(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/\s*(?<!\\)([,=+])\s*/g, '$1');
}

/** The keys a group is known by: its normalized DN and the value of its first RDN (its name), or its name. */
export function groupKeys(group: string): string[] {
  const keys = [normalizeGroup(group)];
  if (unescapedIndex(group, '=') >= 0) {
    const name = firstRdnValue(group);
    if (name) keys.push(normalizeGroup(name));
  }
  return keys;
}

/** The directory's address from the settings (loadConfig already refused a bad one). */
export function directoryAddress(s: LdapSettings): LdapAddress {
  const address = parseLdapServer(s.ldapServer ?? '', { port: s.ldapPort, needTls: s.ldapNeedTls });
  if (typeof address === 'string') throw new AppError(503, DIRECTORY_UNREACHABLE);
  return address;
}

/**
 * TLS options for LDAPS and StartTLS: the certificate is verified (chain and host name) unless
 * SIGNALBOX_LDAP_TLS_SKIP_VERIFY; a CA file adds its certificates to the system's.
 */
export async function tlsOptions(s: LdapSettings, host: string): Promise<ConnectionOptions> {
  const options: ConnectionOptions = { host, rejectUnauthorized: !s.ldapTlsSkipVerify };
  // SNI names a host, never an address (RFC 6066); the address is still checked against the certificate.
  if (!isIP(host)) options.servername = host;
  if (s.ldapCaFile) options.ca = [...rootCertificates, await readFile(s.ldapCaFile, 'utf8')];
  return options;
}

/**
 * tls.connect with a deadline on the handshake: ldapts bounds the LDAPS connect, but not the handshake of a
 * StartTLS upgrade, which a stalled directory would otherwise hold open for ever.
 */
function handshakeWithin(ms: number): typeof connect {
  return ((...args: unknown[]) => {
    const socket = (connect as (...a: unknown[]) => TLSSocket)(...args);
    const timer = setTimeout(() => socket.destroy(new Error('TLS handshake timed out')), ms);
    const done = () => clearTimeout(timer);
    socket.once('secureConnect', done);
    socket.once('close', done);
    return socket;
  }) as typeof connect;
}

/** Tells once per settings that certificates are not checked. */
const warnedSkipVerify = new WeakSet<object>();

/** Why a connection or request failed, for the log: the error's name, code and message, never a password. */
export function describeLdapError(err: unknown): Record<string, unknown> {
  const e = err as { code?: unknown; message?: unknown; name?: unknown };
  return {
    error: typeof e.name === 'string' ? e.name : 'Error',
    code: typeof e.code === 'string' || typeof e.code === 'number' ? e.code : undefined,
    reason: (typeof e.message === 'string' ? e.message : String(err)).replace(/\s+/g, ' ').slice(0, 300),
  };
}

/** A result the directory answered (wrong credentials, no such object...), as opposed to a lost connection. */
const isResultError = async (err: unknown) => err instanceof (await ldapts()).ResultCodeError;

/**
 * Asks the directory whether `password` is the password of `login`, and for the user's fields and groups.
 * Throws a 503 when the directory cannot be reached (down, timed out, certificate refused) or refuses the
 * service account's search; every other outcome is an answer.
 */
export async function checkDirectoryPassword(
  s: LdapSettings,
  login: string,
  password: string,
  log: FastifyBaseLogger,
): Promise<DirectoryAnswer> {
  // An empty password makes a simple bind anonymous, which many directories accept: it is never sent.
  if (password === '') return 'refused';
  const { Client, SizeLimitExceededError } = await ldapts();
  const address = directoryAddress(s);
  const url = ldapUrl(address);
  const timeout = s.ldapTimeout * 1000;
  let tls: ConnectionOptions;
  try {
    tls = await tlsOptions(s, address.host);
  } catch (err) {
    log.error({ ...describeLdapError(err), ca_file: s.ldapCaFile }, 'LDAP CA file cannot be read');
    throw new AppError(503, DIRECTORY_UNREACHABLE);
  }
  if (s.ldapTlsSkipVerify && (address.secure || s.ldapStartTls) && !warnedSkipVerify.has(s)) {
    warnedSkipVerify.add(s);
    log.warn({ url }, 'LDAP: the directory certificate is not verified (SIGNALBOX_LDAP_TLS_SKIP_VERIFY)');
  }
  const client: Client = new Client({
    url,
    timeout,
    connectTimeout: timeout,
    createSecureConnection: handshakeWithin(timeout),
    // ldapts speaks TLS from the first byte whenever it is given TLS options: only for LDAPS.
    ...(address.secure ? { tlsOptions: tls } : {}),
  });
  const step = { name: 'connect' };
  const serviceBind = async () => {
    step.name = 'service bind';
    // No bind DN: the search is anonymous (a bind with an empty DN and password).
    await client.bind(s.ldapBindDn, s.ldapBindDn ? s.ldapBindPassword : '');
  };
  try {
    if (s.ldapStartTls) {
      step.name = 'StartTLS';
      await client.startTLS({ ...tls });
    }
    if (s.ldapBindDn) await serviceBind();

    step.name = 'user search';
    const attributes = [
      ...new Set([
        ...[s.ldapMappingDn, s.ldapMappingMail, s.ldapMappingUid, s.ldapMappingCn].flatMap(mappingAttributes),
        ...(s.ldapGroupAttribute ? [s.ldapGroupAttribute] : []),
      ]),
    ];
    let entries: Entry[] | 'too many';
    try {
      ({ searchEntries: entries } = await client.search(s.ldapSearchDn, {
        scope: 'sub',
        filter: userFilter(s.ldapSearchFilter, login),
        attributes: attributes.length ? attributes : ['1.1'],
        sizeLimit: 2,
      }));
    } catch (err) {
      // More entries than the two asked for: as ambiguous as two.
      if (!(err instanceof SizeLimitExceededError)) throw err;
      entries = 'too many';
    }
    if (entries.length === 0) return 'no-entry';
    const entry = entries.length === 1 && entries !== 'too many' ? entries[0] : undefined;
    if (!entry) {
      log.warn({ login }, 'LDAP sign-in refused: the search filter matches more than one entry');
      return 'refused';
    }

    const bindDn = mappedValue(entry, s.ldapMappingDn);
    if (!bindDn) {
      log.warn(
        { login, dn: entry.dn },
        `LDAP sign-in refused: the entry has no ${s.ldapMappingDn} to bind as`,
      );
      return 'refused';
    }
    step.name = 'user bind';
    try {
      await client.bind(bindDn, password);
    } catch (err) {
      if (!(await isResultError(err))) throw err;
      log.info({ login, dn: entry.dn, ...describeLdapError(err) }, 'LDAP sign-in refused by the directory');
      return 'refused';
    }

    const groups = new Set<string>();
    if (s.ldapGroupAttribute)
      for (const g of attributeValues(entry, s.ldapGroupAttribute))
        for (const k of groupKeys(g)) groups.add(k);
    const username = mappedValue(entry, s.ldapMappingUid);
    if (s.ldapGroupSearchDn) {
      // Back to the service account: the user may not be allowed to read groups.
      await serviceBind();
      step.name = 'group search';
      const found = await client.search(s.ldapGroupSearchDn, {
        scope: 'sub',
        filter: groupFilter(s.ldapGroupSearchFilter, entry.dn, username || login),
        attributes: ['1.1'],
      });
      for (const g of found.searchEntries) for (const k of groupKeys(g.dn)) groups.add(k);
    }
    return {
      dn: entry.dn,
      username,
      name: mappedValue(entry, s.ldapMappingCn),
      email: mappedValue(entry, s.ldapMappingMail),
      groups,
    };
  } catch (err) {
    const details = { url, step: step.name, ...describeLdapError(err) };
    if (await isResultError(err)) {
      log.error(details, 'LDAP sign-in failed: the directory refused a request of the service account');
      throw new AppError(503, DIRECTORY_REFUSED_SEARCH);
    }
    log.error(details, 'LDAP sign-in failed: the directory cannot be reached');
    throw new AppError(503, DIRECTORY_UNREACHABLE);
  } finally {
    await client.unbind().catch(() => {});
  }
}
