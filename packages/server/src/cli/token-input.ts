import { ClientError } from './errors';

/** Most bytes read from a pipe for a token (a token is one short line). */
const MAX_PIPED = 64 * 1024;

/** The first line of what is piped to stdin (`signalbox login --url … < token-file`). */
async function readPiped(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n') || text.length > MAX_PIPED) break;
  }
  process.stdin.destroy();
  return text.split(/\r?\n/)[0] ?? '';
}

/** Asks for the token on the terminal without echoing it (pasting works; Ctrl-C gives up). */
function prompt(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    let typed = '';
    const done = (error?: ClientError) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer) => {
      for (const char of String(chunk)) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003') return done(new ClientError('cancelled', 130));
        if (char === '\u0004') return typed ? done() : done(new ClientError('no token given'));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else if (char >= ' ') typed += char;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

/** The token to sign in with: asked for on a terminal, else the first line of stdin. */
export async function readToken(): Promise<string> {
  if (process.stdin.isTTY) return prompt('API token (input hidden; make one under user menu → API tokens): ');
  return readPiped();
}
