import type { User } from '@signalbox/contracts';
import { Api } from '../api';
import { type ClientCommand, optionsHelp, stringOption } from '../command';
import {
  checkToken,
  credentialsFile,
  isCleartextRemote,
  normalizeUrl,
  removeCredentials,
  saveCredentials,
  shortPath,
} from '../credentials';
import { ClientError, UsageError } from '../errors';
import { readToken } from '../token-input';

export const login: ClientCommand = {
  name: 'login',
  summary: 'check an API token against a server and store both for the other commands',
  help: `Usage: signalbox login --url URL [--token T]

Checks an API token against the server at URL and stores the URL and the token in
${shortPath(credentialsFile())} (readable by you only), for the other commands.
Without --token the token is asked for on the terminal (not echoed), or read from the first line of stdin:

  signalbox login --url https://signalbox.example.com < token.txt

which keeps it out of the process list and the shell history (--token T puts it there).
SIGNALBOX_URL and SIGNALBOX_TOKEN, when set, take the place of what is stored.

${optionsHelp([
  ['--url URL', 'the server (e.g. https://signalbox.example.com); default: SIGNALBOX_URL'],
  ['--token T', 'the API token (prefer stdin or the prompt)'],
])}`,
  options: { url: { type: 'string' }, token: { type: 'string' } },
  args: { min: 0, max: 0, names: '' },
  async run({ values, term }) {
    const urlText = stringOption(values, 'url') ?? process.env.SIGNALBOX_URL?.trim();
    if (!urlText) throw new UsageError('login needs --url (the server, e.g. https://signalbox.example.com)');
    const url = normalizeUrl(urlText);
    const token = checkToken(stringOption(values, 'token') ?? (await readToken()));
    if (isCleartextRemote(url))
      term.say(`warning: ${url} is plain http: the token crosses the network unencrypted; prefer https`);
    term.spin(`Checking the token with ${url}`);
    const api = new Api({ url, token, from: 'file' });
    // A token without the read scope cannot read its account (403) and is still a token of this server.
    const answer = await api.request<User>('GET', '/user').catch((err: unknown) => {
      if (err instanceof ClientError && err.code === 'missing_token_scope') return null;
      throw err;
    });
    term.stopSpinning();
    const file = saveCredentials({ url, token });
    const user = answer?.body ?? null;
    if (term.json)
      term.jsonOut({
        url,
        user: user && { id: user.id, username: user.username, name: user.name },
        credentials_file: file,
      });
    else
      term.out(
        `Signed in to ${url}${user ? ` as ${user.username} (${user.name})` : ' (the token may not read the account)'}; the token is stored in ${file}`,
      );
    return 0;
  },
};

export const logout: ClientCommand = {
  name: 'logout',
  summary: 'forget the stored server and token',
  help: `Usage: signalbox logout

Removes the stored server URL and token. The token itself keeps working until it expires or you delete it in
the console (user menu → API tokens).

${optionsHelp([])}`,
  options: {},
  args: { min: 0, max: 0, names: '' },
  async run({ term }) {
    const { file, removed } = removeCredentials();
    if (term.json) term.jsonOut({ removed, credentials_file: file });
    else term.out(removed ? `Removed ${file}` : `Not signed in (no ${file})`);
    return 0;
  },
};
