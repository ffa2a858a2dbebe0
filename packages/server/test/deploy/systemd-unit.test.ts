import { describe, expect, it } from 'vitest';
import { readRepoFile } from '../support/deploy-files';

/** deploy/signalbox.service: what the server and its tasks need of the unit (`systemd-analyze verify` checks syntax). */
describe('deploy/signalbox.service', () => {
  const service = new Map<string, string[]>();
  for (const line of readRepoFile('deploy/signalbox.service').split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) service.set(m[1], [...(service.get(m[1]) ?? []), m[2]]);
  }
  const value = (key: string) => service.get(key)?.at(-1);
  const environment = Object.fromEntries((service.get('Environment') ?? []).map((e) => e.split(/=(.*)/s, 2)));

  it('runs the server as `npm start` does, as its own user, with settings from /etc/signalbox', () => {
    const pkg = JSON.parse(readRepoFile('package.json')) as { scripts: { start: string } };
    expect(value('ExecStart')).toBe(`/usr/bin/${pkg.scripts.start}`);
    expect(value('User')).toBe('signalbox');
    expect(value('EnvironmentFile')).toBe('/etc/signalbox/signalbox.env');
    expect(value('Restart')).toBe('on-failure');
  });

  it('may write only its data dir, which is also the home of its user (ansible keeps ~/.ansible there)', () => {
    expect(value('ProtectSystem')).toBe('strict');
    expect(value('ReadWritePaths')).toBe(environment.SIGNALBOX_DATA_DIR);
    expect(environment.HOME).toBe(environment.SIGNALBOX_DATA_DIR);
    expect(`/var/lib/${value('StateDirectory')}`).toBe(environment.SIGNALBOX_DATA_DIR);
    for (const key of ['NoNewPrivileges', 'PrivateTmp', 'ProtectHome']) expect(value(key), key).toBe('yes');
  });

  it('lets the server end its tasks within its 30 s shutdown grace before anything is killed', () => {
    expect(value('KillMode')).toBe('mixed');
    expect(Number.parseInt(value('TimeoutStopSec') ?? '', 10)).toBeGreaterThan(30);
    // Node's JIT needs writable executable memory.
    expect(service.has('MemoryDenyWriteExecute')).toBe(false);
  });
});
