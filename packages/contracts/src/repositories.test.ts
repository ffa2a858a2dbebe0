import { describe, expect, it } from 'vitest';
import { repositoryInput, repositoryType } from './repositories';

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
  ])('%s is %s', (url, type) => {
    expect(repositoryType(url)).toBe(type);
  });

  it.each(['ftp://example.test/app', 'svn+ssh://example.test/app', 's3://bucket/app', ''])(
    '%s is invalid',
    (url) => {
      expect(repositoryType(url)).toBeNull();
    },
  );

  it('clears the branch of a local repository and needs it otherwise', () => {
    expect(
      repositoryInput.parse({ name: 'r', git_url: '/srv/app', git_branch: 'main', ssh_key_id: 1 }),
    ).toMatchObject({
      git_branch: '',
    });
    const res = repositoryInput.safeParse({ name: 'r', git_url: 'https://x.test/a.git', ssh_key_id: 1 });
    expect(res.success).toBe(false);
    expect(res.error?.issues[0]?.message).toBe('Branch is required');
  });
});
