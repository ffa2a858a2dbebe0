import { connect, createServer, type Socket } from 'node:net';
import type { TestDialect } from './dialects';

/**
 * A TCP relay in front of a database server, so a test can make the database unreachable and bring it back:
 * down() cuts every open connection and refuses new ones (they are closed at once, as by a server that is
 * restarting), up() lets connections through again. loseAnswerTo(text) arms a one-time trap: the next statement
 * containing `text` reaches the server, and its connection is cut before the answer comes back (the statement ran,
 * the client cannot know).
 */
export type DbOutage = { down(): void; up(): void; loseAnswerTo(text: string): Promise<void> };

/** A dialect whose databases are reached through a relay the returned outage controls. */
export async function behindRelay(
  dialect: TestDialect,
): Promise<{ dialect: TestDialect; outage: DbOutage; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let target: URL | null = null;
  let isDown = false;
  let trap: { text: string; sprung: () => void } | null = null;
  const server = createServer((client) => {
    if (isDown || !target) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    let cutOnAnswer: (() => void) | null = null;
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on('error', drop);
      socket.on('close', drop);
      sockets.add(socket);
    }
    client.on('data', (chunk: Buffer) => {
      if (trap && chunk.toString('latin1').toLowerCase().includes(trap.text)) {
        cutOnAnswer = trap.sprung;
        trap = null;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (cutOnAnswer) {
        cutOnAnswer();
        drop();
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the relay has no port');
  return {
    dialect: {
      name: dialect.name,
      async create(dataDir) {
        const database = await dialect.create(dataDir);
        const direct = new URL(database.url);
        target = direct;
        const relayed = new URL(database.url);
        relayed.hostname = '127.0.0.1';
        relayed.port = String(address.port);
        return { url: relayed.toString(), drop: database.drop };
      },
    },
    outage: {
      down() {
        isDown = true;
        for (const socket of sockets) socket.destroy();
        sockets.clear();
      },
      up() {
        isDown = false;
      },
      loseAnswerTo(text) {
        return new Promise<void>((sprung) => {
          trap = { text: text.toLowerCase(), sprung };
        });
      },
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
