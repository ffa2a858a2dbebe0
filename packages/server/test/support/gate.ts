import { createServer, type Socket } from 'node:net';

/**
 * A loopback gate a task's script waits at (bash: `exec 3<>/dev/tcp/127.0.0.1/$PORT; read -r _ <&3`): each
 * connection is held until `open()`, then answered, and later ones at once. A test then knows the task is still
 * running at the steps it takes before opening, however slow the machine.
 */
export async function loopbackGate() {
  let opened = false;
  const waiting: Socket[] = [];
  const server = createServer((socket) => {
    socket.on('error', () => {});
    if (opened) socket.end('go\n');
    else waiting.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    /** A bash line that waits (at most two minutes) until the gate opens. */
    waitLine: `exec 3<>/dev/tcp/127.0.0.1/${port}; read -r -t 120 _ <&3; exec 3<&-`,
    open() {
      opened = true;
      for (const socket of waiting.splice(0)) socket.end('go\n');
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of waiting.splice(0)) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
