import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './net';

/**
 * A real OpenLDAP server (Debian's slapd) on loopback for the LDAP sign-in tests: a generated slapd.conf in a
 * temporary directory (mdb backend, memberOf overlay), plain LDAP (StartTLS offered) and LDAPS on free ports
 * with a certificate signed by a CA the test generates, entries loaded with ldapadd. It logs every operation
 * (`-d stats`), so a test can see which binds and searches reached it.
 */

export const SLAPD = '/usr/sbin/slapd';
export const SUFFIX = 'dc=example,dc=org';
const ROOT_DN = `cn=admin,${SUFFIX}`;

export type Slapd = {
  /** ldap://127.0.0.1:<port> (StartTLS available) */
  url: string;
  /** ldaps://127.0.0.1:<port> */
  ldapsUrl: string;
  /** PEM file of the CA that signed the server's certificate (for 127.0.0.1 and localhost). */
  caFile: string;
  /** PEM file of a CA that signed nothing this server has. */
  otherCaFile: string;
  /** slapd's log lines (operations: BIND, SRCH, RESULT…). */
  log: string[];
  /** The log lines of the BIND operations since `from` (an index into `log`). */
  binds(from?: number): string[];
  /** The filters of the searches since `from`. */
  searchFilters(from?: number): string[];
  /** Adds entries (LDIF) as the directory's root user. */
  add(ldif: string): void;
  /** Applies changes (LDIF with changetype) as the directory's root user. */
  modify(ldif: string): void;
  stop(): Promise<void>;
};

/** The CA and server certificates, made with openssl: EC P-256 keys, SANs for 127.0.0.1 and localhost. */
function makeCertificates(dir: string) {
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ca = (name: string) => {
    const key = join(dir, `${name}.key`);
    const cert = join(dir, `${name}.pem`);
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=Signalbox test ${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
    return { key, cert };
  };
  const authority = ca('ca');
  const other = ca('other-ca');
  const key = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const cert = join(dir, 'server.pem');
  const ext = join(dir, 'server.ext');
  writeFileSync(
    ext,
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n',
  );
  openssl(
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    '/CN=127.0.0.1',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    authority.cert,
    '-CAkey',
    authority.key,
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '2',
    '-extfile',
    ext,
  );
  return { caFile: authority.cert, otherCaFile: other.cert, cert, key };
}

/**
 * Starts slapd in `dir` on two free loopback ports. `rootPassword` is the root DN's password (loading entries);
 * `allowAnonymousDnBind` makes a bind with a DN and an empty password succeed as anonymous, as many directories
 * do, so that a test can show such a bind is never sent.
 */
export async function startSlapd(
  dir: string,
  opts: { rootPassword: string; allowAnonymousDnBind?: boolean },
): Promise<Slapd> {
  if (!existsSync(SLAPD)) throw new Error(`${SLAPD} is missing: install slapd and ldap-utils (.ci/run does)`);
  mkdirSync(join(dir, 'db'), { recursive: true });
  const certs = makeCertificates(dir);
  const config = join(dir, 'slapd.conf');
  writeFileSync(
    config,
    [
      'include /etc/ldap/schema/core.schema',
      'include /etc/ldap/schema/cosine.schema',
      'include /etc/ldap/schema/inetorgperson.schema',
      'include /etc/ldap/schema/nis.schema',
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      'moduleload memberof',
      `pidfile ${join(dir, 'slapd.pid')}`,
      `TLSCACertificateFile ${certs.caFile}`,
      `TLSCertificateFile ${certs.cert}`,
      `TLSCertificateKeyFile ${certs.key}`,
      ...(opts.allowAnonymousDnBind ? ['allow bind_anon_dn'] : []),
      'database mdb',
      'maxsize 10485760',
      `suffix "${SUFFIX}"`,
      `rootdn "${ROOT_DN}"`,
      `rootpw ${opts.rootPassword}`,
      `directory ${join(dir, 'db')}`,
      'overlay memberof',
      // Passwords are for binding only; everything else is readable by signed-in accounts, not anonymously.
      'access to attrs=userPassword by self write by anonymous auth by * none',
      'access to * by users read by * none',
      '',
    ].join('\n'),
  );
  // ldapadd reads the root password from a file (-y), not its argv.
  const rootPasswordFile = join(dir, 'root.password');
  writeFileSync(rootPasswordFile, opts.rootPassword, { mode: 0o600 });
  const port = await freePort();
  let ldapsPort = await freePort();
  while (ldapsPort === port) ldapsPort = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const ldapsUrl = `ldaps://127.0.0.1:${ldapsPort}`;
  const log: string[] = [];
  // -d stats: stay in the foreground and log each operation to stderr.
  const child: ChildProcess = spawn(SLAPD, ['-f', config, '-h', `${url}/ ${ldapsUrl}/`, '-d', 'stats'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let buffered = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    log.push(...lines);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });

  // Ready once both ports answer an anonymous who-am-i.
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (gone) throw new Error(`slapd exited at start:\n${log.join('\n')}${buffered}`);
    try {
      for (const u of [url, ldapsUrl])
        execFileSync('ldapwhoami', ['-x', '-H', u], {
          stdio: 'ignore',
          env: { ...process.env, LDAPTLS_CACERT: certs.caFile },
        });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`slapd did not start:\n${log.join('\n')}${buffered}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const asRoot = (command: string, ldif: string) =>
    execFileSync(command, ['-x', '-H', url, '-D', ROOT_DN, '-y', rootPasswordFile], {
      input: ldif,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
  const since = (from: number) => log.slice(from);
  return {
    url,
    ldapsUrl,
    caFile: certs.caFile,
    otherCaFile: certs.otherCaFile,
    log,
    binds: (from = 0) => since(from).filter((line) => / BIND dn=/.test(line)),
    searchFilters: (from = 0) =>
      since(from).flatMap((line) => {
        const m = / SRCH base=.* filter="(.*)"$/.exec(line);
        return m?.[1] === undefined ? [] : [m[1]];
      }),
    add: (ldif: string) => asRoot('ldapadd', ldif),
    modify: (ldif: string) => asRoot('ldapmodify', ldif),
    async stop() {
      if (gone) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** An inetOrgPerson entry's LDIF. */
export function personLdif(p: {
  dn: string;
  uid: string;
  cn: string;
  mail?: string;
  password: string;
}): string {
  return [
    `dn: ${p.dn}`,
    'objectClass: inetOrgPerson',
    `uid: ${p.uid}`,
    `cn: ${p.cn}`,
    `sn: ${p.cn.split(' ').at(-1)}`,
    ...(p.mail ? [`mail: ${p.mail}`] : []),
    `userPassword: ${p.password}`,
    '',
  ].join('\n');
}

/** A groupOfNames entry's LDIF. */
export function groupLdif(dn: string, cn: string, members: string[]): string {
  return [
    `dn: ${dn}`,
    'objectClass: groupOfNames',
    `cn: ${cn}`,
    ...members.map((m) => `member: ${m}`),
    '',
  ].join('\n');
}
