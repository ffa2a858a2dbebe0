import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import type { Db } from './db';

/** The login of the first administrator (the one a first start created), when there is one. */
export async function firstAdminLogin(db: Db): Promise<string | null> {
  const row = await db
    .selectFrom('user')
    .select('username')
    .where('admin', '=', 1)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row?.username ?? null;
}

/** The address a person on this machine opens: the public URL when configured, else the listening port. */
export function addressToOpen(
  config: Pick<Config, 'webRoot' | 'host'>,
  address: AddressInfo | string | null,
) {
  if (config.webRoot) return config.webRoot.replace(/\/?$/, '/');
  if (!address || typeof address === 'string') return null;
  const anyHost = ['0.0.0.0', '::', ''].includes(config.host);
  const host = anyHost ? 'localhost' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}/`;
}

/**
 * The few lines printed when the server is up, after the start's log lines: where to open the console, how to
 * sign in (with the generated password on the start that created the admin, the only time it is shown) and how
 * to set a new password from this checkout.
 */
export function startBanner(input: {
  config: Pick<Config, 'webRoot' | 'host'>;
  address: AddressInfo | string | null;
  created: { login: string; password: string } | null;
  adminLogin: string | null;
}) {
  const { created } = input;
  const url = addressToOpen(input.config, input.address);
  const login = created?.login ?? input.adminLogin ?? '<login>';
  const lines = ['', `  Signalbox is running${url ? `: open ${url}` : ''}`];
  if (created) {
    lines.push(
      `  Admin user created. Sign in with login "${created.login}" and password: ${created.password}`,
      '  (shown this once and stored nowhere in plain text: note it, or set your own below)',
    );
  } else if (input.adminLogin) {
    lines.push(`  Admin login: ${input.adminLogin} (its password was printed at the first start)`);
  }
  lines.push(
    `  Forgot the password? npx signalbox user change-by-login --login ${login} --password '<new password>'`,
    '',
  );
  return lines.join('\n');
}
