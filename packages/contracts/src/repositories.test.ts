import { describe, expect, it } from 'vitest';
import { codeOfIssue, errorMessage } from './errors';
import { isBranchName, isUsableRepositoryUrl, repositoryInput, repositoryType } from './repositories';

/** The English wording of a zod issue, as the server answers it. */
const said = (issue: Parameters<typeof codeOfIssue>[0]) => errorMessage(codeOfIssue(issue));

describe('repositoryType', () => {
  it.each([
    ['/srv/repos/app', 'local'],
    ['git://example.test/app.git', 'git'],
    ['file:///srv/app', 'file'],
    ['ssh://git@example.test/app.git', 'ssh'],
    ['http://example.test/app.git', 'http'],
    ['https://example.test/app.git', 'https'],
    ['HTTPS://example.test/app.git', 'https'],
    ['git@github.com:org/app.git', 'ssh'],
    ['example.test:app.git', 'ssh'],
    ['  https://example.test/app.git  ', 'https'],
    ['ssh://git@example.test:2222/org/app.git', 'ssh'],
    ['ssh://git@[::1]:22/srv/app.git', 'ssh'],
    ['git@[::1]:org/app.git', 'ssh'],
    ['https://x-access-token:abc%40def@example.test/app.git', 'https'],
    ['https://example.test', 'https'],
    ['file://localhost/srv/app', 'file'],
    ['/srv/repos/a::b', 'local'],
  ])('%s is %s', (url, type) => {
    expect(repositoryType(url)).toBe(type);
  });

  it.each([
    'ftp://example.test/app',
    'svn+ssh://example.test/app',
    's3://bucket/app',
    '',
    // Remote helpers: ext:: runs a command, fd:: talks over descriptors, any other <name>:: runs git-remote-<name>.
    'ext::sh -c touch% /tmp/pwned',
    'ext::touch',
    'EXT::sh',
    'fd::17',
    'file::/srv/app',
    'https::example.test/app.git',
    // Options where git expects a URL.
    '--upload-pack=touch /tmp/pwned',
    '-oProxyCommand=touch /tmp/pwned',
    '-oProxyCommand=sh:x',
    '-u',
    'ssh://-oProxyCommand=touch%20%2Ftmp%2Fpwned/app.git',
    'ssh://git@-oProxyCommand=x/app.git',
    'ssh://-oProxyCommand=x@example.test/app.git',
    'git://-host/app.git',
    '-oProxyCommand=x@example.test:app.git',
    'example.test:-oProxyCommand=x',
    'git@-example.test:app.git',
    // Whitespace and control characters anywhere.
    'https://example.test/a b.git',
    'https://example.test/app.git\n--upload-pack=x',
    'git@example.test:app\t.git',
    'https://example.test/app\u0000.git',
    'https://example.test/app\u007f.git',
    'https://example.test/app\u0085.git',
    'ssh://example.test/app\u2028.git',
    // Forms git would read as a path relative to its working directory, or that are not URLs at all.
    'app',
    'repo_5.git',
    '../repo_5.git',
    './app',
    'org/app:x',
    'https://example.test:port/app.git',
    'https://@example.test/app.git',
    'https://exa mple.test/app.git',
    'example.test:',
  ])('%s is invalid', (url) => {
    expect(repositoryType(url)).toBeNull();
  });

  it('clears the branch of a local repository and needs it otherwise', () => {
    expect(
      repositoryInput.parse({ name: 'r', git_url: '/srv/app', git_branch: 'main', ssh_key_id: 1 }),
    ).toMatchObject({
      git_branch: '',
    });
    const res = repositoryInput.safeParse({ name: 'r', git_url: 'https://x.test/a.git', ssh_key_id: 1 });
    expect(res.success).toBe(false);
    expect(res.error?.issues.map(said)[0]).toBe('Branch is required');
  });

  it('refuses a bad URL naming git_url and keeps "Incorrect URL"', () => {
    const res = repositoryInput.safeParse({
      name: 'r',
      git_url: 'ext::sh -c touch% /tmp/pwned',
      git_branch: 'main',
      ssh_key_id: 1,
    });
    expect(res.success).toBe(false);
    expect(res.error?.issues.map((i) => [i.path.join('.'), said(i)])).toEqual([['git_url', 'Incorrect URL']]);
  });
});

describe('isUsableRepositoryUrl', () => {
  it('takes a stored URL only exactly as a save keeps it', () => {
    expect(isUsableRepositoryUrl('https://example.test/app.git')).toBe(true);
    expect(isUsableRepositoryUrl('/srv/app')).toBe(true);
    expect(isUsableRepositoryUrl(' https://example.test/app.git')).toBe(false);
    expect(isUsableRepositoryUrl('/srv/app\n')).toBe(false);
    expect(isUsableRepositoryUrl('ext::sh -c id')).toBe(false);
  });
});

describe('isBranchName', () => {
  it.each(['main', 'release/1.2', 'feature/x-y_z', 'v1.0', 'HEAD', 'a@b', 'ünïcode'])(
    '%s is a branch',
    (b) => {
      expect(isBranchName(b)).toBe(true);
    },
  );

  it.each([
    '',
    '-main',
    '--upload-pack=x',
    'a b',
    'main\n',
    'ma\u0000in',
    'a\u007fb',
    'a..b',
    'a~1',
    'a^',
    'a:b',
    'a?',
    'a*',
    'a[b',
    'a\\b',
    '@',
    'a@{1}',
    '/main',
    'main/',
    'a//b',
    '.hidden',
    'a/.b',
    'main.lock',
    'a/b.lock/c',
    'main.',
    'x'.repeat(256),
  ])('%j is not a branch', (b) => {
    expect(isBranchName(b)).toBe(false);
  });

  it('the repository form answers "Incorrect branch name" on git_branch', () => {
    const res = repositoryInput.safeParse({
      name: 'r',
      git_url: 'https://x.test/a.git',
      git_branch: '--upload-pack=x',
      ssh_key_id: 1,
    });
    expect(res.error?.issues.map((i) => [i.path.join('.'), said(i)])).toEqual([
      ['git_branch', 'Incorrect branch name'],
    ]);
  });
});
