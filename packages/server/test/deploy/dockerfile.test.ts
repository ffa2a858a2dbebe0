import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { copyParts, isDockerIgnored, parseDockerfile, readRepoFile, repoRoot } from '../support/deploy-files';

/**
 * deploy/Dockerfile read as hadolint would (hadolint is not packaged for Debian): versions pinned, a non-root
 * runtime, the health check, and COPY sources that exist in the build context. The build stage's own commands
 * are run by docker-build.test.ts.
 */
describe('deploy/Dockerfile', () => {
  const instructions = parseDockerfile(readRepoFile('deploy/Dockerfile'));
  const ignore = readRepoFile('deploy/Dockerfile.dockerignore');
  const stages = [...new Set(instructions.map((i) => i.stage))];
  const runtime = instructions.filter((i) => i.stage === stages.at(-1));
  const one = (keyword: string) => {
    const found = runtime.filter((i) => i.keyword === keyword);
    expect(found, keyword).toHaveLength(1);
    return found[0].args;
  };
  const execForm = (keyword: string) => JSON.parse(one(keyword)) as string[];
  const pkg = JSON.parse(readRepoFile('package.json')) as {
    engines: { node: string };
    scripts: { start: string };
  };

  it('pins every base image to a version, a Node 20 LTS one that package.json engines accepts', () => {
    const images = instructions.filter((i) => i.keyword === 'FROM').map((i) => i.args.split(' ')[0]);
    expect(images.length).toBeGreaterThanOrEqual(2);
    const [minMajor, minMinor] = (/>=\s*(\d+)\.(\d+)/.exec(pkg.engines.node) ?? []).slice(1).map(Number);
    for (const image of images) {
      const [, name, major, minor] = /^([^:]+):(\d+)\.(\d+)(?:\.\d+)?-[a-z]+(?:-slim)?$/.exec(image) ?? [];
      expect(name, image).toBe('node');
      expect(Number(major), image).toBe(20);
      expect(Number(major) > minMajor || Number(minor) >= minMinor, image).toBe(true);
    }
  });

  it('runs the server as a non-root user, set before CMD', () => {
    const user = one('USER');
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const keywords = runtime.map((i) => i.keyword);
    expect(keywords.indexOf('USER')).toBeLessThan(keywords.indexOf('CMD'));
    expect(
      runtime.some((i) => i.keyword === 'RUN' && i.args.includes(`useradd`) && i.args.includes(user)),
    ).toBe(true);
  });

  it('starts the server the way `npm start` does', () => {
    expect(execForm('CMD').join(' ')).toBe(pkg.scripts.start);
  });

  it('keeps the data dir in a volume and exposes the default port', () => {
    const defaults = loadConfig({});
    const dataDir = /SIGNALBOX_DATA_DIR=(\S+)/.exec(one('ENV'))?.[1];
    expect(JSON.parse(one('VOLUME'))).toEqual([dataDir]);
    expect(one('EXPOSE')).toBe(String(defaults.port));
  });

  it('checks the liveness endpoint', () => {
    expect(one('HEALTHCHECK')).toMatch(/CMD .*\/api\/health\/live/);
  });

  it('installs ansible, git and ssh from Debian packages', () => {
    const installs = runtime.filter((i) => i.keyword === 'RUN' && i.args.includes('apt-get install'));
    const packages = installs.flatMap((i) => i.args.split(' '));
    expect(packages).toEqual(expect.arrayContaining(['ansible-core', 'git', 'openssh-client']));
  });

  it('copies only sources that exist in the build context and that .dockerignore keeps', () => {
    const copies = instructions.filter((i) => i.keyword === 'COPY').map((i) => copyParts(i.args));
    const fromContext = copies.filter((c) => !c.from).flatMap((c) => c.sources);
    expect(fromContext.length).toBeGreaterThan(0);
    for (const source of fromContext) {
      expect(existsSync(join(repoRoot, source)), source).toBe(true);
      expect(isDockerIgnored(ignore, source), source).toBe(false);
    }
    // What the runtime stage takes from another stage, it takes from one defined above.
    for (const copy of copies.filter((c) => c.from)) expect(stages).toContain(copy.from);
  });

  it('keeps dependencies, build output and data out of the build context', () => {
    for (const path of ['node_modules', 'packages/web/node_modules', 'packages/web/dist', 'data', '.git'])
      expect(isDockerIgnored(ignore, path), path).toBe(true);
  });
});
