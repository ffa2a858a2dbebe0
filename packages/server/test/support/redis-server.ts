import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './net';
import { waitFor } from './task-fixtures';

/** Whether a Redis server answers PING on `port`. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\r\n')) {
        socket.destroy();
        resolve(text.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
  });
}

/**
 * A Redis server of the test's own (Debian's redis-server) on a free loopback port, keeping nothing on disk; `url`
 * with a database number, `stop` kills it.
 */
export async function startRedis() {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', '/tmp'],
    { stdio: 'ignore' },
  );
  await waitFor(() => pong(port), 20_000, 'redis-server to answer');
  return {
    port,
    url: (database = 0) => `redis://127.0.0.1:${port}/${database}`,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    },
  };
}
